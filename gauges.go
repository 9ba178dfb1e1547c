// The exporter's gauges: what each project holds and may send, and the
// memory budget, read when the collector's telemetry collects.

package sentryexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// int64Gauge is one int64 gauge: its generated registration, and what it
// observes at each collection.
type int64Gauge struct {
	register func(metric.Int64Callback) error
	observe  func(metric.Int64Observer)
}

// registerGauges registers the callbacks of the exporter's gauges.
func (e *sentryExporter) registerGauges() error {
	tb := e.tb
	err := tb.RegisterExporterSentryRateLimitRemainingCallback(func(_ context.Context, o metric.Float64Observer) error {
		now := time.Now()
		for _, p := range e.allProjects() {
			p.acct.ObserveLimits(o, p.limits.Load(), now)
		}
		return nil
	})
	if err != nil {
		return err
	}
	assemblyHeld := e.perProject(func(p *project) int64 { return p.heldBytes.Load() })
	if e.assembly == nil {
		assemblyHeld = func(metric.Int64Observer) {} // no data point while assembly is off
	}
	mem := e.stage.Memory()
	for _, g := range []int64Gauge{
		{tb.RegisterExporterSentryPendingBytesCallback, e.perProject(func(p *project) int64 { return p.lane.Held() })},
		{tb.RegisterExporterSentryAssemblyHeldBytesCallback, assemblyHeld},
		{tb.RegisterExporterSentryConcurrencyLimitCallback, e.perProject(func(p *project) int64 { return int64(p.lane.Limit()) })},
		{tb.RegisterExporterSentryInFlightBytesCallback, e.perProject(func(p *project) int64 { return p.lane.InFlightBytes() })},
		{tb.RegisterExporterSentryMemoryHeldBytesCallback, func(o metric.Int64Observer) { o.Observe(mem.Held()) }},
		{tb.RegisterExporterSentryMemoryLimitBytesCallback, func(o metric.Int64Observer) { o.Observe(mem.Max()) }},
	} {
		observe := g.observe
		if err := g.register(func(_ context.Context, o metric.Int64Observer) error { observe(o); return nil }); err != nil {
			return err
		}
	}
	return nil
}

// perProject observes value of each project, a data point labeled with the
// project's id.
func (e *sentryExporter) perProject(value func(*project) int64) func(metric.Int64Observer) {
	return func(o metric.Int64Observer) {
		for _, p := range e.allProjects() {
			o.Observe(value(p), metric.WithAttributes(p.acct.Project))
		}
	}
}
