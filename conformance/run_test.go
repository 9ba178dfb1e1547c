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

// runExporter runs the program under the OTel SDK through this exporter and
// returns what Sentry got.
func runExporter(t *testing.T) []captured {
	sink := newCaptureSink(t)
	exp := newExporterUnderTest(t, sink.dsn())
	o := newOTelSDK(t, exp.otlp.URL)
	runProgram(t, o)
	o.flush(t)
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
