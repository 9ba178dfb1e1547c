package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/internal/discovery"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// routed reports whether resources can go to more than the `dsn` project.
func (e *sentryExporter) routed() bool {
	return len(e.static) > 0 || e.resolver != nil
}

// route picks the project of one resource: routing::dsns by the attribute's
// value, else discovery by the value's slug, else the `dsn` project. nil means
// no project: the resource's items are dropped and counted as unroutable.
func (e *sentryExporter) route(ctx context.Context, res pcommon.Resource) *project {
	v, ok := res.Attributes().Get(e.cfg.Routing.Attribute)
	if !ok {
		return e.def
	}
	value := v.AsString()
	if p, ok := e.static[value]; ok {
		return p
	}
	if e.resolver == nil {
		return e.def
	}
	slug := discovery.Slug(value)
	if slug == "" {
		return e.def
	}
	rawDSN, err := e.resolver.Resolve(ctx, slug)
	if err != nil {
		e.warnOnce.log(e.logger, "resolve:"+slug, "Sentry project could not be resolved; its items are dropped",
			zap.String("project_slug", slug), zap.String("error", err.Error()))
		return nil
	}
	p, err := e.addProject(rawDSN)
	if err != nil {
		e.warnOnce.log(e.logger, "add:"+slug, "Sentry project could not be added; its items are dropped",
			zap.String("project_slug", slug), zap.String("error", err.Error()))
		return nil
	}
	return p
}

func (e *sentryExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	if !e.routed() {
		return e.def.pushTraces(ctx, td)
	}
	rss := td.ResourceSpans()
	targets := make([]*project, rss.Len())
	for i := range targets {
		targets[i] = e.route(ctx, rss.At(i).Resource())
	}
	if one, ok := single(targets); ok {
		return e.pushTracesTo(ctx, one, td)
	}
	parts := map[*project]ptrace.Traces{}
	for i, p := range targets {
		part, ok := parts[p]
		if !ok {
			part = ptrace.NewTraces()
			parts[p] = part
		}
		rss.At(i).CopyTo(part.ResourceSpans().AppendEmpty())
	}
	var wg sync.WaitGroup
	for p, part := range parts {
		wg.Go(func() { _ = e.pushTracesTo(ctx, p, part) })
	}
	wg.Wait()
	return nil
}

func (e *sentryExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	if !e.routed() {
		return e.def.pushLogs(ctx, ld)
	}
	rls := ld.ResourceLogs()
	targets := make([]*project, rls.Len())
	for i := range targets {
		targets[i] = e.route(ctx, rls.At(i).Resource())
	}
	if one, ok := single(targets); ok {
		return e.pushLogsTo(ctx, one, ld)
	}
	parts := map[*project]plog.Logs{}
	for i, p := range targets {
		part, ok := parts[p]
		if !ok {
			part = plog.NewLogs()
			parts[p] = part
		}
		rls.At(i).CopyTo(part.ResourceLogs().AppendEmpty())
	}
	var wg sync.WaitGroup
	for p, part := range parts {
		wg.Go(func() { _ = e.pushLogsTo(ctx, p, part) })
	}
	wg.Wait()
	return nil
}

// single reports whether every resource goes to the same project (or none),
// so the batch can be handed on without a copy.
func single(targets []*project) (*project, bool) {
	if len(targets) == 0 {
		return nil, false
	}
	for _, p := range targets[1:] {
		if p != targets[0] {
			return nil, false
		}
	}
	return targets[0], true
}

func (e *sentryExporter) pushTracesTo(ctx context.Context, p *project, td ptrace.Traces) error {
	if p != nil {
		return p.pushTraces(ctx, td)
	}
	// No project: count what would have been sent, serialise nothing.
	res := e.translator.Traces(td, translate.TracesWant{Errors: false})
	c := counts{catSpan: int64(res.SkippedSpans)}
	if e.cfg.TracesAs == TracesAsTransactions {
		c[catTransaction] = int64(res.SkippedTransactions)
	}
	if e.cfg.ErrorEvents.FromSpanExceptions {
		c[catError] = int64(res.SkippedErrors)
	}
	e.unroutable.dropped(ctx, reasonUnroutable, c)
	return nil
}

func (e *sentryExporter) pushLogsTo(ctx context.Context, p *project, ld plog.Logs) error {
	if p != nil {
		return p.pushLogs(ctx, ld)
	}
	res := e.translator.Logs(ld, translate.LogsWant{})
	c := counts{catLogItem: int64(res.SkippedLogs), catLogByte: int64(res.SkippedLogBytes)}
	if e.cfg.ErrorEvents.FromLogs {
		c[catError] = int64(res.SkippedErrors)
	}
	e.unroutable.dropped(ctx, reasonUnroutable, c)
	return nil
}
