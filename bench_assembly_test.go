package sentryexporter

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// Trace assembly's cost. BenchmarkPushTraces1000 runs with assembly on (the
// default): a complete batch takes the fast path (no copy, nothing held).
// Its peer BenchmarkPushTraces1000NoAssembly is the same push with
// assembly::wait 0; their ratio is what the fast path costs.
// BenchmarkPushTracesSplit1000 is the slow path: the same 1,002 spans as
// two pushes, the children (held) then their roots (released with them).

// benchExporterWith is benchExporter configured, sending to a Sentry that
// answers 200 at once.
func benchExporterWith(tb testing.TB, configure func(*Config)) *sentryExporter {
	return newBenchExporterWith(tb, configure, okTransport{})
}

func BenchmarkPushTraces1000NoAssembly(b *testing.B) {
	benchPushTraces(b, benchExporterWith(b, func(c *Config) { c.Assembly.Wait = 0 }), smallTraces())
}

func BenchmarkPushTracesSplit1000(b *testing.B) {
	e := benchExporterWith(b, func(c *Config) { c.Assembly.Wait = time.Minute })
	children, roots := splitTraces(smallTraces())
	ctx := b.Context()
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
	if e.assemblyHeldBytes() != 0 {
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
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if out, _, _ := e.assembly.Admit(ctx, time.Now(), e.def, td); out != td {
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

// heldHeap holds 15,000 spans in assembly (children whose roots never come,
// each with attrs extra attributes) and returns the live heap they take after
// GC and assembly's estimate of it (what assembly::max_bytes bounds).
func heldHeap(tb testing.TB, attrs int) (heap, estimate float64, spans int) {
	e := benchExporterWith(tb, func(c *Config) {
		c.Assembly.MaxBytes = 1 << 40
		c.Assembly.Wait = time.Hour
		c.ClientConfig.Compression = "" // the spans flushed at shutdown, after the measure, go uncompressed
	})
	var batches []ptrace.Traces
	for i := range 25 {
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
	for _, td := range batches {
		spans += td.SpanCount()
		if err := e.pushTraces(tb.Context(), td); err != nil {
			tb.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(batches) // the input stays, so the difference is what assembly holds
	return float64(int64(after.HeapAlloc) - int64(before.HeapAlloc)), float64(e.assemblyHeldBytes()), spans
}

// TestAssemblyEstimateCoversTheHeap fails when held spans take more heap than
// assembly counts against assembly::max_bytes, so that the bound is a bound
// on memory.
func TestAssemblyEstimateCoversTheHeap(t *testing.T) {
	for _, attrs := range []int{0, 10, 60} {
		heap, est, n := heldHeap(t, attrs)
		if n == 0 || est == 0 {
			t.Fatalf("%d attributes: nothing held", attrs)
		}
		if heap > est*1.05 {
			t.Errorf("%d attributes: %d held spans take %.0f B of heap, %.2f x the estimate %.0f B", attrs, n, heap, heap/est, est)
		}
	}
}

// BenchmarkAssemblyHeldHeap reports the live heap held spans take per span,
// assembly's estimate per span, and their ratio heap/estimate (1.0: the bound
// assembly::max_bytes is the memory held); ASSEMBLY_HEAP_ATTRS (default 10)
// extra attributes per span. Run with -benchtime 1x; the work does not
// depend on b.N.
func BenchmarkAssemblyHeldHeap(b *testing.B) {
	attrs := 10
	if v := os.Getenv("ASSEMBLY_HEAP_ATTRS"); v != "" {
		if _, err := fmt.Sscan(v, &attrs); err != nil {
			b.Fatal(err)
		}
	}
	heap, est, n := heldHeap(b, attrs)
	b.ReportMetric(heap/float64(n), "heap-B/span")
	b.ReportMetric(est/float64(n), "estimate-B/span")
	b.ReportMetric(heap/est, "heap/estimate")
}
