package sentryexporter

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// okTransport answers every envelope 200 at once, without a network: the push
// benchmarks measure what the exporter itself spends and allocates per push.
type okTransport struct{}

func (okTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
}

// BenchmarkPushTraces1000 is a whole push of 1,002 spans (334 traces, one
// with an exception) to a Sentry that answers at once, until every envelope
// is settled: translation, envelopes, hand-over, sending and accounting.
func BenchmarkPushTraces1000(b *testing.B) {
	benchPushTraces(b, benchExporterWith(b, func(*Config) {}), smallTraces())
}

// benchPushTraces pushes td to e, waiting each time until every envelope is
// settled, and reports spans/s.
func benchPushTraces(b *testing.B, e *sentryExporter, td ptrace.Traces) {
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(float64(td.SpanCount())*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkPushTracesSpans1000 is BenchmarkPushTraces1000 with traces_as:
// spans (span v2 containers, one trace per envelope): its peer, run side by
// side, is BenchmarkPushTraces1000 (the issue 13 cost goal: span mode's CPU
// per span at or below transactions mode's).
func BenchmarkPushTracesSpans1000(b *testing.B) {
	benchPushTraces(b, benchExporterWith(b, func(c *Config) { c.TracesAs = TracesAsSpans }), smallTraces())
}

// BenchmarkPushLogs1000 is BenchmarkPushTraces1000 for 1,000 logs (10 containers).
func BenchmarkPushLogs1000(b *testing.B) { benchPushLogs(b, makeLogs(1000)) }

// benchPushLogs pushes ld through an exporter at its defaults, to a
// transport that answers 200, and settles every envelope.
func benchPushLogs(b *testing.B, ld plog.Logs) {
	e := newBenchExporterWith(b, func(*Config) {}, okTransport{})
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushLogs(ctx, ld); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(float64(ld.LogRecordCount())*float64(b.N)/b.Elapsed().Seconds(), "logs/s")
}

// wrappedTransport stands for confighttp's instrumentation around the
// transport: net/http treats a wrapped transport as unknown, and a
// Client.Timeout over it costs a goroutine and a timer per request (hence the
// exporter's client has none; newClient).
type wrappedTransport struct{ rt http.RoundTripper }

func (w wrappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return w.rt.RoundTrip(r)
}

// BenchmarkPushTracesWrapped is BenchmarkPushTraces1000 through a wrapped
// transport and a client built as newClient builds it (no Client.Timeout; the
// sender puts `timeout` on each request's context).
func BenchmarkPushTracesWrapped(b *testing.B) {
	e := newBenchExporterWith(b, func(*Config) {}, wrappedTransport{okTransport{}})
	td := smallTraces()
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(float64(td.SpanCount())*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}
