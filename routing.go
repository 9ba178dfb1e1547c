// The route stage, and the push entry points exporterhelper calls: which
// Sentry project each resource's items go to (routing::dsns, discovery, or
// `dsn`). It is in the root because it reads the Config and owns the set of
// projects; the look-up itself is internal/discovery, and the cut of a batch
// into each project's part is internal/split.

package sentryexporter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/discovery"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
	"github.com/otel-sentry/sentryexporter/internal/split"
	"github.com/otel-sentry/sentryexporter/internal/tracemetric"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// routed reports whether resources can go to more than the `dsn` project,
// or must be checked against their sender's projects.
func (e *sentryExporter) routed() bool {
	return len(e.static) > 0 || e.cfg.Routing.Discovery.HasValue() || e.cfg.Routing.Sender.on()
}

// route picks the project of one resource (target), a discovered one from
// discovered: the batch's discovery answers by slug (discoverAll), so that
// a batch asks (and, when the management API is slow, waits) once. nil
// means no project: the resource's items are dropped and counted as
// unroutable; e.refused means its sender may not write there (not_allowed).
func (e *sentryExporter) route(res pcommon.Resource, from *sender, discovered map[string]*project) *project {
	p, slug := e.target(res, from)
	if slug == "" {
		return p
	}
	return discovered[slug]
}

// target is where res goes before any look-up: routing::dsns by the
// routing value, else the `dsn` project when discovery has no slug for it
// (e.refused for either when its sender may not write there); else the
// slug discovery must resolve, never one the sender may not write to.
func (e *sentryExporter) target(res pcommon.Resource, from *sender) (*project, string) {
	value, ok := from.value(res, e.cfg.Routing.Attribute)
	if !ok {
		return from.only(value, e.def, e.refused), ""
	}
	if p, ok := e.static[value]; ok {
		return from.only(value, p, e.refused), ""
	}
	var slug string
	if e.resolver != nil {
		slug = discovery.Slug(value)
	}
	if slug == "" {
		return from.only(value, e.def, e.refused), ""
	}
	if !from.mayWrite(value, slug) {
		return e.refused, "" // no look-up for a project the sender may not write to
	}
	return nil, slug
}

// maxConcurrentLookups bounds the look-ups one push runs at once.
const maxConcurrentLookups = 16

// discoverAll resolves the slugs of every resource of a batch before it is
// routed: concurrently, all within one discoveryWait, so that a batch of
// many new names holds its queue consumer discoveryWait at most, not that
// per name. The answers (nil: none) are by slug, for route.
func discoverAll[B any](ctx context.Context, e *sentryExporter, s split.Signal[B], batch B, from *sender) map[string]*project {
	var slugs []string
	seen := map[string]bool{}
	for i := range s.Len(batch) {
		if _, slug := e.target(s.Resource(batch, i), from); slug != "" && !seen[slug] {
			seen[slug] = true
			slugs = append(slugs, slug)
		}
	}
	if len(slugs) == 0 {
		return map[string]*project{}
	}
	found := make([]*project, len(slugs))
	ctx, cancel := e.lookupContext(ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(slugs), maxConcurrentLookups) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(slugs); i = int(next.Add(1) - 1) {
				found[i] = e.discover(ctx, from.spender, slugs[i])
			}
		})
	}
	wg.Wait()
	discovered := make(map[string]*project, len(slugs))
	for i, slug := range slugs {
		discovered[slug] = found[i]
	}
	return discovered
}

// discover resolves slug through the management API, charged to spender
// (sender.spender), within ctx's look-up deadline (lookupContext); nil
// when it cannot. The project is in use (it cannot retire) until done is
// called with it.
func (e *sentryExporter) discover(ctx context.Context, spender, slug string) *project {
	rawDSN, err := e.resolver.ResolveFor(ctx, spender, slug)
	if err != nil {
		e.logLimiter.Log(e.logger, "resolve:"+slug, "Sentry project could not be resolved; its items are dropped",
			zap.String("project_slug", slug), zap.String("error", err.Error()))
		return nil
	}
	p, err := e.useProject(rawDSN)
	if err != nil {
		e.logLimiter.Log(e.logger, "add:"+slug, "Sentry project could not be added; its items are dropped",
			zap.String("project_slug", slug), zap.String("error", err.Error()))
		return nil
	}
	return p
}

// discoveryWait is the longest a push waits for its look-ups, all of them
// together. A slow or hanging management API must not hold the queue
// consumers that carry the other projects' data: past it the resources'
// items are counted unroutable, and the look-ups go on in the background,
// so later pushes find them cached.
const discoveryWait = 2 * time.Second

// lookupContext is ctx for a push's look-ups: done after discoveryWait, or
// when the drain time after shutdown is over: a hanging management API can
// hold neither the other projects' data nor the shutdown.
func (e *sentryExporter) lookupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, discoveryWait)
	stop := context.AfterFunc(e.stage.Running(), cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

func (e *sentryExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	pushRouted(ctx, e, split.Traces(), td, (*project).pushTraces, e.unroutableTraces)
	return nil
}

func (e *sentryExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	pushRouted(ctx, e, split.Logs(), ld, (*project).pushLogs, e.unroutableLogs)
	return nil
}

func (e *sentryExporter) pushMetrics(ctx context.Context, md pmetric.Metrics) error {
	pushRouted(ctx, e, split.Metrics(), md, (*project).pushMetrics, e.unroutableMetrics)
	return nil
}

func (e *sentryExporter) pushProfiles(ctx context.Context, pd pprofile.Profiles) error {
	pushRouted(ctx, e, split.Profiles(), pd, (*project).pushProfiles, e.unroutableProfiles)
	return nil
}

// pushRouted is the route stage of every signal: each of the batch's
// resources goes to its project (internal/split cuts the batch), and each
// project's part is pushed, concurrently; the part of no project is only
// counted (unroutable). Without routing, or when every resource goes to one
// project, the batch is pushed as it is, without a copy.
func pushRouted[B any](ctx context.Context, e *sentryExporter, s split.Signal[B], batch B,
	push func(*project, context.Context, B) error, unroutable func(context.Context, B, account.Reason),
) {
	if !e.routed() {
		pushPart(ctx, e, e.def, batch, push, unroutable)
		return
	}
	from := e.senderOf(ctx)
	var discovered map[string]*project
	if e.resolver != nil {
		discovered = discoverAll(ctx, e, s, batch, &from)
		defer func() {
			for _, p := range discovered {
				e.done(p)
			}
		}()
	}
	parts := split.By(s, batch, func(r pcommon.Resource) *project { return e.route(r, &from, discovered) })
	if len(parts) == 1 {
		pushPart(ctx, e, parts[0].To, parts[0].Batch, push, unroutable)
		return
	}
	var wg sync.WaitGroup
	for _, part := range parts {
		wg.Go(func() { pushPart(ctx, e, part.To, part.Batch, push, unroutable) })
	}
	wg.Wait()
}

// pushPart pushes b through p's pipeline; with no project (or one its
// sender may not write to), b is only counted.
func pushPart[B any](ctx context.Context, e *sentryExporter, p *project, b B, push func(*project, context.Context, B) error, drop func(context.Context, B, account.Reason)) {
	switch p {
	case nil:
		drop(ctx, b, account.ReasonUnroutable)
	case e.refused:
		drop(ctx, b, account.ReasonNotAllowed)
	default:
		_ = push(p, ctx, b)
	}
}

// unroutableTraces counts what td would have been sent as, serializing nothing.
func (e *sentryExporter) unroutableTraces(ctx context.Context, td ptrace.Traces, why account.Reason) {
	res := e.translator.Traces(td, translate.TracesWant{})
	e.unroutable.Dropped(ctx, why, e.skippedTraces(&res))
}

// skippedTraces is what res did not serialize: its spans, its exception
// events (the translator counts them only with error_events::from_span_exceptions)
// and, in transactions mode, its transactions (in spans mode none is ever
// built, so none is dropped).
func (e *sentryExporter) skippedTraces(res *translate.TracesResult) account.Counts {
	c := account.Counts{account.CatSpan: int64(res.SkippedSpans), account.CatError: int64(res.SkippedErrors)}
	if e.cfg.TracesAs == TracesAsTransactions {
		c[account.CatTransaction] = int64(res.SkippedTransactions)
	}
	return c
}

// unroutableLogs counts what ld would have been sent as, serializing nothing.
func (e *sentryExporter) unroutableLogs(ctx context.Context, ld plog.Logs, why account.Reason) {
	res := e.translator.Logs(ld, translate.LogsWant{})
	e.unroutable.Dropped(ctx, why, skippedLogs(&res))
}

// skippedLogs is what res did not serialize: its log records (and their
// bytes) and its exception records (the translator counts them only with
// error_events::from_logs).
func skippedLogs(res *translate.LogsResult) account.Counts {
	return account.Counts{
		account.CatLogItem: int64(res.SkippedLogs), account.CatLogByte: int64(res.SkippedLogBytes), account.CatError: int64(res.SkippedErrors),
	}
}

// unroutableMetrics counts what each data point of md would have become;
// no stream advances.
func (e *sentryExporter) unroutableMetrics(ctx context.Context, md pmetric.Metrics, why account.Reason) {
	res := e.metrics.Metrics(md, nil, uint64(time.Now().UnixNano()), tracemetric.Want{})
	e.unroutable.Dropped(ctx, why, account.Counts{
		account.CatTraceMetric: res.Skipped + res.Invalid + res.NoBaseline + res.Unchanged, account.CatTraceMetricByte: res.SkippedBytes,
	})
}

// unroutableProfiles counts what pd would have been sent as (its chunks and
// their milliseconds, in Sentry's units), serializing nothing; a profile
// that repeats another's samples is counted deduplicated, as with a project.
func (e *sentryExporter) unroutableProfiles(ctx context.Context, pd pprofile.Profiles, why account.Reason) {
	res := e.profiles.Profiles(pd, profilechunk.Want{})
	for _, c := range []account.Counts{res.Skipped, res.Invalid, res.NoTimestamps, res.Unsupported} {
		e.unroutable.Dropped(ctx, why, c)
	}
	e.unroutable.Dropped(ctx, account.ReasonDeduplicated, res.Duplicate)
}
