// Trace assembly's wiring (docs/assembly.md): one assembler
// (internal/assemblepdata) is shared by all projects, after routing and
// before translation, so that assembly::max_bytes bounds them all, each
// project within its share; a project's spans are assembled only with its
// own. What comes out goes on at once through its own project's pipeline
// (project.go), so that rate limits, accounting and error extraction apply
// when a span is released. A project is the assembly's owner: it keeps its
// share of the bytes held (the gauge) and counts its fragments.

package sentryexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otel-sentry/sentryexporter/internal/assemble"
	"github.com/otel-sentry/sentryexporter/internal/assemblepdata"
)

// newAssembly is the assembly of cfg; nil when assembly::wait is 0.
func newAssembly(cfg AssemblyConfig) *assemblepdata.Assembly[*project] {
	return assemblepdata.New[*project](assemblepdata.Config{Wait: cfg.Wait, MaxBytes: cfg.MaxBytes})
}

// expireHeld sends the held spans whose wait is over.
func (e *sentryExporter) expireHeld(ctx context.Context) {
	if e.assembly == nil {
		return
	}
	translateEach(ctx, e.assembly.Expire(ctx, time.Now()))
}

// flushHeld sends everything held (shutdown); from then on nothing is held.
func (e *sentryExporter) flushHeld(ctx context.Context) {
	if e.assembly == nil {
		return
	}
	translateEach(ctx, e.assembly.Flush(ctx))
}

// translateEach sends each project's batch through its pipeline.
func translateEach(ctx context.Context, batches map[*project]ptrace.Traces) {
	for p, td := range batches {
		p.translateTraces(ctx, td)
	}
}

// HoldAssembled counts n more bytes of p's spans held in assembly (fewer
// when negative): in the project's gauge and in the memory budget.
func (p *project) HoldAssembled(n int64) {
	p.heldBytes.Add(n)
	p.exp.assemblyMem.Add(n)
}

// CountFragments counts n spans of p sent without their local root.
func (p *project) CountFragments(ctx context.Context, why assemble.Reason, n int64) {
	p.exp.tb.ExporterSentryAssemblyFragments.Add(ctx, n, metric.WithAttributes(p.acct.Project, attribute.String("assembly_reason", why.String())))
}

// assemblyTick is how often expired spans are looked for when no push
// comes by: a fragment goes out at most this long after its wait is over.
func (e *sentryExporter) assemblyTick() time.Duration {
	return min(max(e.cfg.Assembly.Wait/10, 100*time.Millisecond), time.Second)
}
