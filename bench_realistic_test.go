package sentryexporter

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/send"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// The realistic fixture (issue 33): what make compare sends (cmd/otlpgen
// --spans-per-trace 10 --logs-per-trace 2 --exception-ratio 0.05), the
// attributes real instrumentation sets. 100 traces of 10 spans over three
// services: an http.server root, db and http.client children with ~90-character
// SQL, one trace in 20 failing with an exception event carrying a Go stack
// trace; two log records per trace with their call site and request.

const realisticStack = "goroutine 42 [running]:\n" +
	"main.(*CartStore).Load(0xc000124000, {0x7f1c2a, 0x4})\n" +
	"\t/app/store/cart.go:88 +0x1d4\n" +
	"main.(*Server).handleCart(0xc0001a2000, {0x9b6e40, 0xc0002a0000}, 0xc000316000)\n" +
	"\t/app/server/cart.go:41 +0x9a\n" +
	"net/http.HandlerFunc.ServeHTTP(0xc000118f40, {0x9b6e40, 0xc0002a0000}, 0xc000316000)\n" +
	"\t/usr/local/go/src/net/http/server.go:2294 +0x29\n" +
	"net/http.serverHandler.ServeHTTP({0xc0001a8000}, {0x9b6e40, 0xc0002a0000}, 0xc000316000)\n" +
	"\t/usr/local/go/src/net/http/server.go:3301 +0x8e\n" +
	"created by net/http.(*Server).Serve in goroutine 1\n" +
	"\t/usr/local/go/src/net/http/server.go:3454 +0x485\n"

const realisticQuery = "SELECT id, status, total, currency FROM orders WHERE customer_id = $1 ORDER BY id DESC LIMIT 20"

// realisticTraceCount is how many traces the fixture holds: 1,000 spans.
const realisticTraceCount = 100

var realisticServices = []string{"checkout", "inventory", "payments"}

func realisticResource(r pcommon.Resource, svc string) {
	a := r.Attributes()
	a.PutStr("service.name", svc)
	a.PutStr("service.version", "1.4.2")
	a.PutStr("deployment.environment.name", "production")
	a.PutStr("host.name", svc+"-7c9f")
	a.PutStr("telemetry.sdk.language", "go")
	a.PutStr("telemetry.sdk.name", "opentelemetry")
	a.PutStr("telemetry.sdk.version", "1.38.0")
}

// realisticTraces is realisticTraceCount request-shaped traces of 10 spans.
func realisticTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	var sss []ptrace.SpanSlice
	for _, svc := range realisticServices {
		rs := td.ResourceSpans().AppendEmpty()
		realisticResource(rs.Resource(), svc)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
		ss.Scope().SetVersion("0.63.0")
		sss = append(sss, ss.Spans())
	}
	start := pcommon.Timestamp(1_742_921_669_158_209_000)
	for t := range realisticTraceCount {
		realisticTrace(sss[t%len(sss)], realisticServices[t%len(sss)], t, start+pcommon.Timestamp(t)*1e6)
	}
	return td
}

func realisticTrace(spans ptrace.SpanSlice, svc string, t int, start pcommon.Timestamp) {
	tid := pcommon.TraceID{0xab, 0, 0, 0, 0, 0, 0, 0, byte(t >> 8), byte(t), 10, 11, 12, 13, 14, 15}
	rootID := pcommon.SpanID{byte(t >> 8), byte(t), 0, 1, 2, 3, 4, 5}
	for i := range 10 {
		sp := spans.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID{byte(t >> 8), byte(t), byte(i), 1, 2, 3, 4, 5})
		sp.SetStartTimestamp(start + pcommon.Timestamp(i)*1e6)
		sp.SetEndTimestamp(start + pcommon.Timestamp(i+2)*1e6)
		a := sp.Attributes()
		if i == 0 {
			sp.SetEndTimestamp(start + 120e6)
			realisticRoot(sp, svc, t)
			continue
		}
		sp.SetParentSpanID(rootID)
		sp.SetKind(ptrace.SpanKindClient)
		switch {
		case i == 3:
			sp.SetName("serialize quote")
			sp.SetKind(ptrace.SpanKindInternal)
			a.PutInt("quote.items", 3)
		case i%2 == 1:
			sp.SetName("SELECT shop.orders")
			a.PutStr("db.system.name", "postgresql")
			a.PutStr("db.namespace", "shop")
			a.PutStr("db.operation.name", "SELECT")
			a.PutStr("db.collection.name", "orders")
			a.PutStr("db.query.text", realisticQuery)
			a.PutStr("server.address", "postgresql.internal")
		default:
			sp.SetName("GET")
			a.PutStr("http.request.method", "GET")
			a.PutStr("url.full", "https://payments.internal:8080/v1/rates?currency=EUR")
			a.PutStr("server.address", "payments.internal")
			a.PutInt("server.port", 8080)
			a.PutInt("http.response.status_code", 200)
		}
	}
}

func realisticRoot(sp ptrace.Span, svc string, t int) {
	sp.SetName("GET /cart/{id}")
	sp.SetKind(ptrace.SpanKindServer)
	a := sp.Attributes()
	a.PutStr("http.request.method", "GET")
	a.PutStr("http.route", "/cart/{id}")
	a.PutStr("url.path", fmt.Sprint("/cart/", 8000+t))
	a.PutStr("url.scheme", "http")
	a.PutStr("server.address", svc+".internal")
	a.PutInt("server.port", 8080)
	a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) otlpgen/0.1")
	a.PutStr("client.address", fmt.Sprint("10.0.3.", 2+t%250))
	status := int64(200)
	if t%20 == 7 {
		status = 500
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage("dial tcp 10.0.3.7:5432: connect: connection refused")
		ev := sp.Events().AppendEmpty()
		ev.SetName("exception")
		ev.SetTimestamp(sp.StartTimestamp() + 5e6)
		ea := ev.Attributes()
		ea.PutStr("exception.type", "*net.OpError")
		ea.PutStr("exception.message", "dial tcp 10.0.3.7:5432: connect: connection refused")
		ea.PutStr("exception.stacktrace", realisticStack)
		ea.PutBool("exception.escaped", true)
	}
	a.PutInt("http.response.status_code", status)
}

// realisticLogs is n log records of requests, with their call site.
func realisticLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	realisticResource(rl.Resource(), "checkout")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := range n {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_742_921_669_158_209_000 + i*1000))
		lr.SetTraceID(pcommon.TraceID{0xab, byte(i >> 8), byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
		lr.SetSpanID(pcommon.SpanID{byte(i >> 8), byte(i), 0, 1, 2, 3, 4, 5})
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(fmt.Sprintf("GET /cart/%d completed with 200 in %dms", 8000+i, 2+i%240))
		a := lr.Attributes()
		a.PutStr("code.function.name", "handleGET")
		a.PutStr("code.file.path", "/app/server/handlers.go")
		a.PutInt("code.line.number", int64(40+i%120))
		a.PutStr("http.request.method", "GET")
		a.PutStr("http.route", "/cart/{id}")
		a.PutInt("http.response.status_code", 200)
		a.PutInt("http.response.body.size", int64(i%4096))
		a.PutStr("enduser.id", fmt.Sprint("user-", 1000+i))
	}
	return ld
}

// BenchmarkPushTracesRealistic is a whole push (BenchmarkPushTraces1000) of
// the realistic fixture; its peer is BenchmarkOTLPHTTPTracesRealistic.
func BenchmarkPushTracesRealistic(b *testing.B) {
	benchPushNewTraces(b, benchExporterWith(b, func(*Config) {}), realisticTraces())
}

// BenchmarkPushTracesSpansRealistic is the same in traces_as: spans.
func BenchmarkPushTracesSpansRealistic(b *testing.B) {
	benchPushNewTraces(b, benchExporterWith(b, func(c *Config) { c.TracesAs = TracesAsSpans }), realisticTraces())
}

// benchPushNewTraces is benchPushTraces with new trace ids in every round, as in
// steady traffic (the trace index sees each trace once).
func benchPushNewTraces(b *testing.B, e *sentryExporter, td ptrace.Traces) {
	ctx := b.Context()
	b.ReportAllocs()
	var round uint64
	for b.Loop() {
		round++
		renewTraceIDs(td, round)
		if err := e.pushTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(float64(td.SpanCount())*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkEncodeTracesRealistic is translation, envelopes and encoding of the
// realistic fixture, without compression or sending.
func BenchmarkEncodeTracesRealistic(b *testing.B) { benchEncodeTraces(b, realisticTraces()) }

// BenchmarkOTLPHTTPTracesRealistic is what the otlphttp exporter spends on the
// same batch before its request: protobuf and gzip (confighttp's default).
func BenchmarkOTLPHTTPTracesRealistic(b *testing.B) {
	td := realisticTraces()
	m := &ptrace.ProtoMarshaler{}
	benchProtoGzip(b, float64(td.SpanCount()), "spans/s", func() ([]byte, error) { return m.MarshalTraces(td) })
}

// BenchmarkPushLogsRealistic is BenchmarkPushLogs1000 on realistic records;
// its peer is BenchmarkOTLPHTTPLogsRealistic.
func BenchmarkPushLogsRealistic(b *testing.B) { benchPushLogs(b, realisticLogs(1000)) }

func BenchmarkOTLPHTTPLogsRealistic(b *testing.B) {
	ld := realisticLogs(1000)
	m := &plog.ProtoMarshaler{}
	benchProtoGzip(b, 1000, "logs/s", func() ([]byte, error) { return m.MarshalLogs(ld) })
}

func benchProtoGzip(b *testing.B, items float64, unit string, marshal func() ([]byte, error)) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	b.ReportAllocs()
	for b.Loop() {
		p, err := marshal()
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		zw.Reset(&buf)
		_, _ = zw.Write(p)
		_ = zw.Close()
	}
	b.ReportMetric(items*float64(b.N)/b.Elapsed().Seconds(), unit)
}

// BenchmarkWireBytesRealistic is what the protocol makes of the realistic
// fixture's bytes, per span or log record (no time worth reading): the
// envelopes as JSON (json-B), each compressed alone as the exporter sends
// them (zstd-alone-B), the same envelopes as one zstd stream, what a
// protocol that batched many envelopes in one request would pay
// (zstd-together-B), and the otlphttp peer's protobuf (proto-B) and its
// gzip (proto-gzip-B).
func BenchmarkWireBytesRealistic(b *testing.B) {
	comp := send.NewCompressors(configcompression.DefaultCompressionLevel)
	td, ld := realisticTraces(), realisticLogs(1000)
	tp, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	lp, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	for _, c := range []struct {
		name   string
		bodies [][]byte
		proto  []byte
		items  int
	}{
		{"transactions", realisticBodies(b, td, TracesAsTransactions), tp, td.SpanCount()},
		{"spans", realisticBodies(b, td, TracesAsSpans), tp, td.SpanCount()},
		{"logs", realisticLogBodies(b, ld), lp, ld.LogRecordCount()},
	} {
		b.Run(c.name, func(b *testing.B) {
			var raw, alone int
			var buf []byte
			for b.Loop() {
				raw, alone = 0, 0
				for _, body := range c.bodies {
					raw += len(body)
					buf = comp.Compress(send.EncodingZstd, body, buf[:0])
					alone += len(buf)
				}
			}
			n := float64(c.items)
			b.ReportMetric(float64(raw)/n, "json-B/item")
			b.ReportMetric(float64(alone)/n, "zstd-alone-B/item")
			b.ReportMetric(float64(len(comp.Compress(send.EncodingZstd, bytes.Join(c.bodies, nil), nil)))/n, "zstd-together-B/item")
			b.ReportMetric(float64(len(c.proto))/n, "proto-B/item")
			b.ReportMetric(float64(gzipLen(c.proto))/n, "proto-gzip-B/item")
		})
	}
}

// realisticBodies is the envelope bodies one push of td makes in mode.
func realisticBodies(b *testing.B, td ptrace.Traces, mode TracesAs) [][]byte {
	b.Helper()
	return envelopeBodies(traceEnvelopes(b, benchExporter(b), td, mode, true))
}

// traceEnvelopes is the envelopes one push of td makes in mode: its
// transactions or span containers, then its error events if errors.
func traceEnvelopes(b *testing.B, e *sentryExporter, td ptrace.Traces, mode TracesAs, errors bool) []encode.Outgoing {
	b.Helper()
	res := e.translator.Traces(td, translate.TracesWant{
		Transactions: mode == TracesAsTransactions, SpanV2: mode == TracesAsSpans, Errors: errors, Segments: true,
	})
	facts := e.facts.Get()
	*facts = e.index.Add(res.Segments, *facts)
	var out []encode.Outgoing
	for i := range res.Transactions {
		out = append(out, e.def.enc.Transaction(&res.Transactions[i], *facts))
	}
	for i := range res.SpanGroups {
		out = e.def.enc.AppendSpans(b.Context(), out, &res.SpanGroups[i], &encode.Arena{})
	}
	for i := range res.Errors {
		out = append(out, e.def.enc.Error(&res.Errors[i]))
	}
	return out
}

// realisticLogBodies is the envelope bodies one push of ld makes.
func realisticLogBodies(b *testing.B, ld plog.Logs) [][]byte {
	b.Helper()
	e := benchExporter(b)
	res := e.translator.Logs(ld, translate.LogsWant{Logs: true, Errors: true})
	defer res.Release()
	out := e.def.enc.AppendLogs(b.Context(), nil, res.Logs, &encode.Arena{})
	for i := range res.Errors {
		out = append(out, e.def.enc.Error(&res.Errors[i]))
	}
	return envelopeBodies(out)
}

func envelopeBodies(out []encode.Outgoing) [][]byte {
	bodies := make([][]byte, len(out))
	for i := range out {
		out[i].Env.Header.SentAt = testStart
		bodies[i] = out[i].Env.AppendTo(nil)
	}
	return bodies
}

func gzipLen(p []byte) int {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(p)
	_ = zw.Close()
	return buf.Len()
}
