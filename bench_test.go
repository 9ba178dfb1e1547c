package sentryexporter

import (
	"context"
	"encoding/binary"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// benchExporter is an exporter that is never started: the benchmarks below
// measure translation, envelope building and encoding, or the drop path,
// without HTTP.
func benchExporter(tb testing.TB) *sentryExporter {
	return newBenchExporter(tb, func(*Config) {})
}

// newBenchExporter builds a never-started exporter of one project with the
// default config as configure leaves it; it is shut down when tb ends.
func newBenchExporter(tb testing.TB, configure func(*Config)) *sentryExporter {
	return newBenchExporterWith(tb, configure, nil)
}

// newBenchExporterWith is newBenchExporter, started, with every HTTP client
// on rt when rt is set.
func newBenchExporterWith(tb testing.TB, configure func(*Config), rt http.RoundTripper) *sentryExporter {
	cfg := createDefaultConfig().(*Config)
	cfg.DSN = "https://public@o1.ingest.sentry.io/1"
	configure(cfg)
	if rt != nil {
		sendtest.Use(&cfg.ClientConfig)
	}
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = componenttest.NewNopTelemetrySettings()
	e, err := newExporter(cfg, set)
	if err != nil {
		tb.Fatal(err)
	}
	if rt != nil {
		if err := e.start(tb.Context(), sendtest.Host(sendtest.Transport(rt))); err != nil {
			tb.Fatal(err)
		}
	}
	// No lingering workers for goleak. tb.Context is done once cleanup runs, hence WithoutCancel.
	tb.Cleanup(func() { _ = e.shutdown(context.WithoutCancel(tb.Context())) })
	return e
}

// encodeAll builds every envelope of a batch and encodes it, as the sender
// would, into one reused buffer.
func encodeAll(out []encode.Outgoing, buf []byte) []byte {
	for i := range out {
		out[i].Env.Header.SentAt = testStart
		buf = out[i].Env.AppendTo(buf[:0])
	}
	return buf
}

// BenchmarkEncodeTraces1000 is translation + envelopes + encoding of 1,002
// spans (334 traces of 3 spans, one with an exception), as the sender would
// write them; its peer is BenchmarkProtoMarshalTraces1000 on the same batch.
func BenchmarkEncodeTraces1000(b *testing.B) { benchEncodeTraces(b, smallTraces()) }

func BenchmarkProtoMarshalTraces1000(b *testing.B) { benchProtoTraces(b, smallTraces()) }

// smallTraces is 334 traces of 3 spans, one with an exception.
func smallTraces() ptrace.Traces {
	td := makeTraces(0, 333, false)
	withErrors := makeTraces(1000, 1, true)
	withErrors.ResourceSpans().At(0).CopyTo(td.ResourceSpans().AppendEmpty())
	return td
}

// benchEncodeTraces measures translation, envelopes and encoding of td,
// with the trace index (DSC heads) as pushTraces keeps it.
func benchEncodeTraces(b *testing.B, td ptrace.Traces) {
	e := benchExporter(b)
	spans := td.SpanCount()
	var buf []byte
	b.ReportAllocs()
	var round uint64
	for b.Loop() {
		// Every trace is new to the index, as in steady traffic: the index
		// retires a generation every ~60 rounds, as it would in production.
		round++
		renewTraceIDs(td, round)
		res := e.translator.Traces(td, translate.TracesWant{Transactions: true, Errors: true, Segments: true})
		facts := e.facts.Get()
		*facts = e.index.Add(res.Segments, *facts)
		out := make([]encode.Outgoing, 0, len(res.Transactions)+len(res.Errors))
		for i := range res.Transactions {
			out = append(out, e.def.enc.Transaction(&res.Transactions[i], *facts))
		}
		e.facts.Put(facts)
		for i := range res.Errors {
			out = append(out, e.def.enc.Error(&res.Errors[i]))
		}
		buf = encodeAll(out, buf)
		res.Release()
	}
	b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// renewTraceIDs writes round into bytes 1 to 7 of every span's trace id,
// which makeTraces leaves zero, so each round's traces are new and distinct.
func renewTraceIDs(td ptrace.Traces, round uint64) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				id := s.TraceID()
				binary.BigEndian.PutUint64(id[:8], round)
				id[0] = 0xab
				s.SetTraceID(id)
			}
		}
	}
}

// benchProtoTraces is the peer: what the otlphttp exporter pays to encode td.
func benchProtoTraces(b *testing.B, td ptrace.Traces) {
	spans := td.SpanCount()
	m := &ptrace.ProtoMarshaler{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.MarshalTraces(td); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkEncodeLogs1000 is translation + 10 log containers + encoding of
// 1,000 log records; its peer is BenchmarkProtoMarshalLogs1000.
func BenchmarkEncodeLogs1000(b *testing.B) {
	e := benchExporter(b)
	ld := makeLogs(1000)
	ctx := b.Context()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		res := e.translator.Logs(ld, translate.LogsWant{Logs: true, Errors: true})
		payloads := e.payloads.Get()
		out := e.def.enc.AppendLogs(ctx, nil, res.Logs, payloads)
		buf = encodeAll(out, buf)
		e.payloads.Put(payloads)
		res.Release()
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "logs/s")
}

func BenchmarkProtoMarshalLogs1000(b *testing.B) {
	ld := makeLogs(1000)
	m := &plog.ProtoMarshaler{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.MarshalLogs(ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "logs/s")
}

// BenchmarkDropPath is a whole push of 1,000 spans (with exceptions) while
// an all-category limit is active: nothing is serialized, every item is
// counted. ns/dropped-span is the figure quoted in the README.
func BenchmarkDropPath(b *testing.B) {
	now := time.Now()
	e := benchExporter(b) // the hour-long limit outlasts any run
	l, _ := ratelimit.Parse("3600::organization", now)
	e.def.limits.Merge(l)
	td := makeTraces(0, 333, true)
	spans := td.SpanCount()
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(spans), "ns/dropped-span")
}

// BenchmarkDropPathLogs is the same for 1,000 logs under a log_byte limit.
func BenchmarkDropPathLogs(b *testing.B) {
	now := time.Now()
	e := benchExporter(b) // the hour-long limit outlasts any run
	l, _ := ratelimit.Parse("3600:log_byte:organization", now)
	e.def.limits.Merge(l)
	ld := makeLogs(1000)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushLogs(ctx, ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/dropped-log")
}

// makeWideTraces builds nTraces traces of one root and perTrace-1 db children
// each: fewer, larger transactions than makeTraces.
func makeWideTraces(nTraces, perTrace int) ptrace.Traces {
	td := makeTraces(0, nTraces, false)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range nTraces {
		for j := 3; j < perTrace; j++ {
			s := spans.AppendEmpty()
			spans.At(i*3 + 1).CopyTo(s) // the db child of trace i as a template
			s.SetSpanID(spanID(i, j))
		}
	}
	return td
}

// BenchmarkEncodeTraces1000Wide is the same for 50 traces of 20 spans: the
// per-transaction overhead (headers, contexts, resource) is paid 50 times
// instead of 334.
func BenchmarkEncodeTraces1000Wide(b *testing.B) { benchEncodeTraces(b, makeWideTraces(50, 20)) }

func BenchmarkProtoMarshalTraces1000Wide(b *testing.B) { benchProtoTraces(b, makeWideTraces(50, 20)) }
