package conformance

import (
	"net/http/httptest"
	"testing"
)

// runSentryGo runs the program under sentry-go and returns what Sentry got.
func runSentryGo(t *testing.T) []captured {
	sink := newCaptureSink(t)
	sg := newSentryGo(t, sink.dsn())
	runProgram(t, sg)
	sg.flush(t)
	return sinkEnvelopes(t, sink)
}

// otelVariant is one way an OTel-instrumented program reaches the exporter.
type otelVariant struct {
	name      string
	older     bool // the older semantic conventions (otelOldSemconv)
	logsFirst bool // the logs pipeline delivers before the traces pipeline
}

var otelVariants = []otelVariant{
	{name: "otelhttp v0.72, logs delivered first", logsFirst: true},
	{name: "otelhttp v0.72, spans delivered first"},
	{name: "older semconv v1.17, logs delivered first", older: true, logsFirst: true},
}

// runExporter runs the program under the OTel SDK through this exporter and
// returns what Sentry got.
func runExporter(t *testing.T, v otelVariant) []captured {
	sink := newCaptureSink(t)
	exp := newExporterUnderTest(t, sink.dsn())
	o := newOTelSDK(t, exp.otlp.URL)
	var in instrumentation = o
	if v.older {
		in = otelOldSemconv{o}
	}
	runProgram(t, in)
	o.flush(t, v.logsFirst)
	exp.shutdown(t)
	return sinkEnvelopes(t, sink)
}

func runProgram(t *testing.T, in instrumentation) {
	t.Helper()
	s := &shop{in: in}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = in.wrapServer(s.routes())
	srv.Start()
	defer srv.Close()
	s.self = srv.URL
	drive(t, srv.URL)
}

func sinkEnvelopes(t *testing.T, sink *captureSink) []captured {
	t.Helper()
	got, bad := sink.envelopes()
	if len(bad) > 0 {
		t.Fatalf("the capture sink could not read %d envelopes: %v", len(bad), bad)
	}
	return got
}
