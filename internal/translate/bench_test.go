package translate

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/cputime"
)

// benchTraces is a realistic batch: n spans in n/20 traces over 5 services,
// about 10 attributes each (http server roots, db and http client children).
func benchTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	sss := benchResources(td)
	start := pcommon.Timestamp(1_742_921_669_158_209_000)
	var root [8]byte
	for i := range n {
		t := i / 20
		sp := sss[t%5].AppendEmpty()
		sp.SetTraceID([16]byte{byte(t), byte(t >> 8), 0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
		id := [8]byte{byte(i), byte(i >> 8), 0xbb, 1, 2, 3, 4, 5}
		sp.SetSpanID(id)
		sp.SetStartTimestamp(start + pcommon.Timestamp(i*1000))
		sp.SetEndTimestamp(start + pcommon.Timestamp(i*1000+50_000))
		switch {
		case i%20 == 0:
			root = id
			benchServerSpan(sp, i)
		case i%2 == 0:
			sp.SetParentSpanID(root)
			benchDBSpan(sp)
		default:
			sp.SetParentSpanID(root)
			benchClientSpan(sp, i)
		}
	}
	return td
}

// benchResources adds benchTraces' five services, each with one scope, and
// returns their span slices.
func benchResources(td ptrace.Traces) []ptrace.SpanSlice {
	var sss []ptrace.SpanSlice
	for r := range 5 {
		rs := td.ResourceSpans().AppendEmpty()
		a := rs.Resource().Attributes()
		a.PutStr("service.name", fmt.Sprint("service-", r))
		a.PutStr("service.version", "1.4.2")
		a.PutStr("deployment.environment.name", "production")
		a.PutStr("host.name", fmt.Sprint("ip-10-0-0-", r))
		a.PutStr("telemetry.sdk.language", "go")
		a.PutStr("telemetry.sdk.name", "opentelemetry")
		a.PutStr("telemetry.sdk.version", "1.38.0")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
		ss.Scope().SetVersion("0.63.0")
		sss = append(sss, ss.Spans())
	}
	return sss
}

// benchServerSpan makes span i an HTTP server root.
func benchServerSpan(sp ptrace.Span, i int) {
	a := sp.Attributes()
	sp.SetName("GET /api/users/{id}")
	sp.SetKind(ptrace.SpanKindServer)
	a.PutStr("http.request.method", "GET")
	a.PutStr("http.route", "/api/users/{id}")
	a.PutStr("url.path", fmt.Sprint("/api/users/", i))
	a.PutStr("url.scheme", "https")
	a.PutInt("http.response.status_code", 200)
	a.PutStr("server.address", "api.example.com")
	a.PutInt("server.port", 443)
	a.PutStr("client.address", "10.1.2.3")
	a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36")
	a.PutStr("network.protocol.version", "1.1")
}

// benchDBSpan makes a span a database query.
func benchDBSpan(sp ptrace.Span) {
	a := sp.Attributes()
	sp.SetName("SELECT users")
	sp.SetKind(ptrace.SpanKindClient)
	a.PutStr("db.system.name", "postgresql")
	a.PutStr("db.query.text", "SELECT id, name, email FROM users WHERE id = $1")
	a.PutStr("db.operation.name", "SELECT")
	a.PutStr("db.collection.name", "users")
	a.PutStr("db.namespace", "app")
	a.PutStr("server.address", "db.internal")
	a.PutInt("server.port", 5432)
	a.PutInt("db.response.returned_rows", 1)
	a.PutBool("db.cached", false)
	a.PutDouble("db.cost", 0.25)
}

// benchClientSpan makes span i an HTTP client call.
func benchClientSpan(sp ptrace.Span, i int) {
	a := sp.Attributes()
	sp.SetName("GET")
	sp.SetKind(ptrace.SpanKindClient)
	a.PutStr("http.request.method", "GET")
	a.PutStr("url.full", fmt.Sprint("https://billing.internal/v1/accounts/", i, "?expand=true"))
	a.PutInt("http.response.status_code", 200)
	a.PutStr("server.address", "billing.internal")
	a.PutInt("server.port", 443)
	a.PutStr("network.protocol.version", "2")
	a.PutInt("http.request.body.size", 0)
	a.PutInt("http.response.body.size", 1234)
	a.PutStr("peer.service", "billing")
	tags := a.PutEmptySlice("tags")
	tags.AppendEmpty().SetStr("a")
	tags.AppendEmpty().SetStr("b")
}

func benchLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	ra := rl.Resource().Attributes()
	ra.PutStr("service.name", "checkout")
	ra.PutStr("service.version", "1.4.2")
	ra.PutStr("deployment.environment.name", "production")
	ra.PutStr("host.name", "ip-10-0-0-1")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("app.logger")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_742_921_669_158_209_000 + i*1000))
		lr.SetSeverityNumber(plog.SeverityNumber(1 + i%24))
		lr.Body().SetStr(fmt.Sprint("user ", i, " checked out cart with 3 items in 245ms"))
		if i%2 == 0 {
			lr.SetTraceID([16]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
			lr.SetSpanID([8]byte{byte(i), 1, 2, 3, 4, 5, 6, 7})
		}
		a := lr.Attributes()
		a.PutStr("user.id", fmt.Sprint("u-", i))
		a.PutInt("cart.items", 3)
		a.PutDouble("duration_ms", 245.5)
		a.PutBool("cached", true)
		a.PutStr("code.function.name", "checkout.Handle")
		a.PutStr("code.file.path", "/app/checkout/handler.go")
	}
	return ld
}

// measure runs op, which handles 1,000 items (spans or log records), in the
// benchmark loop and reports items/s (wall) and cpu-ns/op, the process CPU
// time per op, which includes GC work and stays meaningful when other
// processes compete for the CPU.
func measure(b *testing.B, unit string, op func()) {
	const n = 1000
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), unit)
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkTracesTransactions1000(b *testing.B) {
	td := benchTraces(1000)
	tr := New(Options{})
	measure(b, "spans/s", func() { tr.Traces(td, TracesWant{Transactions: true}) })
}

func BenchmarkTracesSpanV2_1000(b *testing.B) {
	td := benchTraces(1000)
	tr := New(Options{})
	measure(b, "spans/s", func() { tr.Traces(td, TracesWant{SpanV2: true}) })
}

func BenchmarkTracesSkipped1000(b *testing.B) {
	td := benchTraces(1000)
	tr := New(Options{})
	measure(b, "spans/s", func() { tr.Traces(td, TracesWant{}) })
}

func BenchmarkProtoMarshalTraces1000(b *testing.B) {
	td := benchTraces(1000)
	var m ptrace.ProtoMarshaler
	measure(b, "spans/s", func() {
		if _, err := m.MarshalTraces(td); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkLogs1000(b *testing.B) {
	ld := benchLogs(1000)
	tr := New(Options{})
	measure(b, "logs/s", func() { tr.Logs(ld, LogsWant{Logs: true}) })
}

func BenchmarkProtoMarshalLogs1000(b *testing.B) {
	ld := benchLogs(1000)
	var m plog.ProtoMarshaler
	measure(b, "logs/s", func() {
		if _, err := m.MarshalLogs(ld); err != nil {
			b.Fatal(err)
		}
	})
}

// The *Release benchmarks give the payload memory back after each call, as an
// exporter does once the payloads are encoded into envelopes.

func BenchmarkTracesTransactions1000Release(b *testing.B) {
	td := benchTraces(1000)
	tr := New(Options{})
	measure(b, "spans/s", func() {
		r := tr.Traces(td, TracesWant{Transactions: true})
		r.Release()
	})
}

func BenchmarkTracesSpanV2_1000Release(b *testing.B) {
	td := benchTraces(1000)
	tr := New(Options{})
	measure(b, "spans/s", func() {
		r := tr.Traces(td, TracesWant{SpanV2: true})
		r.Release()
	})
}

func BenchmarkLogs1000Release(b *testing.B) {
	ld := benchLogs(1000)
	tr := New(Options{})
	measure(b, "logs/s", func() {
		r := tr.Logs(ld, LogsWant{Logs: true})
		r.Release()
	})
}
