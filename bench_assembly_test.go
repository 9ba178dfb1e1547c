package sentryexporter

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// Trace assembly's cost. BenchmarkPushTraces1000 runs with assembly on (the
// default): a complete batch takes the fast path (no copy, nothing held).
// Its peer BenchmarkPushTraces1000NoAssembly is the same push with
// assembly::wait 0; their ratio is what the fast path costs.
// BenchmarkPushTracesSplit1000 is the slow path: the same 1,002 spans as
// two pushes, the children (held) then their roots (released with them).

func benchExporterWith(b *testing.B, configure func(*Config)) *sentryExporter {
	clk := realClocks()
	cfg := createDefaultConfig().(*Config)
	cfg.DSN = "https://public@o1.ingest.sentry.io/1"
	configure(cfg)
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = componenttest.NewNopTelemetrySettings()
	e, err := newExporter(cfg, set, clk)
	if err != nil {
		b.Fatal(err)
	}
	e.def.sender.client = &http.Client{Transport: okTransport{}}
	return e
}

func BenchmarkPushTraces1000NoAssembly(b *testing.B) {
	e := benchExporterWith(b, func(c *Config) { c.Assembly.Wait = 0 })
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

func BenchmarkPushTracesSplit1000(b *testing.B) {
	e := benchExporterWith(b, func(c *Config) { c.Assembly.Wait = time.Minute })
	children, roots := splitTraces(smallTraces())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushTraces(ctx, children); err != nil {
			b.Fatal(err)
		}
		if err := e.pushTraces(ctx, roots); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	if e.asm.asm.Bytes() != 0 {
		b.Fatal("spans left held")
	}
	b.ReportMetric(float64(children.SpanCount()+roots.SpanCount())*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkAssemblyAdmit1000 is the fast path alone: admitting a complete
// batch of 1,002 spans (nothing held, no copy). Its peer is
// BenchmarkAssemblyPeerTranslate1000, the translation of the same batch into
// transactions, which every push does anyway.
func BenchmarkAssemblyAdmit1000(b *testing.B) {
	e := benchExporterWith(b, func(*Config) {})
	td := smallTraces()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out, _ := e.asm.admit(ctx, e.def, td); out != td {
			b.Fatal("a complete batch was copied")
		}
	}
}

func BenchmarkAssemblyPeerTranslate1000(b *testing.B) {
	e := benchExporterWith(b, func(*Config) {})
	td := smallTraces()
	b.ReportAllocs()
	for b.Loop() {
		res := e.translator.Traces(td, translate.TracesWant{Transactions: true, Errors: true, Segments: true})
		res.Release()
	}
}

// BenchmarkAssemblyHeldHeap checks the held-bytes estimate against the heap:
// it holds 30,000 spans (children whose roots never come, each with
// ASSEMBLY_HEAP_ATTRS, default 10, extra attributes) and reports the live heap
// they take after GC per span, the estimate per span, and their ratio
// heap/estimate (1.0: the bound assembly::max_bytes is the memory held). Run
// with -benchtime 1x; the work does not depend on b.N.
func BenchmarkAssemblyHeldHeap(b *testing.B) {
	attrs := 10
	if v := os.Getenv("ASSEMBLY_HEAP_ATTRS"); v != "" {
		if _, err := fmt.Sscan(v, &attrs); err != nil {
			b.Fatal(err)
		}
	}
	e := benchExporterWith(b, func(c *Config) { c.Assembly.MaxBytes = 1 << 40; c.Assembly.Wait = time.Hour })
	var batches []ptrace.Traces
	for i := range 50 {
		children, _ := splitTraces(requests(i*200, 200, 1, false))
		sps := children.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for k := range sps.Len() {
			for a := range attrs {
				sps.At(k).Attributes().PutStr(fmt.Sprint("attribute.key.", a), "some value of thirty bytes....")
			}
		}
		batches = append(batches, children)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	for _, td := range batches {
		n += td.SpanCount()
		if err := e.pushTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
	est := float64(e.asm.asm.Bytes())
	b.ReportMetric(heap/float64(n), "heap-B/span")
	b.ReportMetric(est/float64(n), "estimate-B/span")
	b.ReportMetric(heap/est, "heap/estimate")
	runtime.KeepAlive(batches)
}
