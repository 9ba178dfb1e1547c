package sentryexporter

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"

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
