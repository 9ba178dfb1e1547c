package sentryexporter

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
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
	e := benchExporter(b, time.Now)
	e.def.sender.client = &http.Client{Transport: okTransport{}}
	td := smallTraces()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(float64(td.SpanCount())*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkPushLogs1000 is BenchmarkPushTraces1000 for 1,000 logs (10 containers).
func BenchmarkPushLogs1000(b *testing.B) {
	e := benchExporter(b, time.Now)
	e.def.sender.client = &http.Client{Transport: okTransport{}}
	ld := makeLogs(1000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushLogs(ctx, ld); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "logs/s")
}
