// One project's pipeline, wiring the stages for one DSN: a routed push goes
// through assembly (assembly.go, internal/assemblepdata), is gated on the
// project's rate limits before translation (internal/gate), translated
// (internal/translate),
// shaped and deduplicated (internal/errorshape, internal/dedupe), encoded
// (internal/encode) and offered to the project's lane of the send stage
// (internal/send), which queues, sends, retries and accounts for them
// (internal/account). It is in the root because it holds the exporter's
// shared parts and calls each stage; the work of each stage is in its package.

package sentryexporter

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/dedupe"
	"github.com/otel-sentry/sentryexporter/internal/dsn"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/send"
	"github.com/otel-sentry/sentryexporter/internal/traceindex"
	"github.com/otel-sentry/sentryexporter/internal/tracemetric"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// The rate-limit gate here is not the one that decides: the send stage's,
// checked before each attempt (internal/send), is the one, since a limit
// can arrive while an envelope waits. This one only spares the work of
// translating and encoding what that gate would drop: a limited category
// is not rendered, and its items are counted ratelimit_backoff here.

// project is everything the exporter keeps per DSN: its rate limits, its
// client-report aggregator, its counters (labeled with the project id), its
// encoder, and its lane of the send stage (internal/send), with its own
// queues, workers and connection pool. A quota on one project never delays
// another, and neither does a Sentry that hangs: pushes hand envelopes to the
// lane and return.
type project struct {
	exp       *sentryExporter
	dsn       *dsn.DSN
	limits    *ratelimit.State
	acct      *account.Accountant
	enc       *encode.Encoder      // wraps the project's payloads into envelopes
	index     *traceindex.Index    // the project's view of the trace index: its own traces only
	streams   *tracemetric.Streams // its cumulative streams, its share of the exporter's
	lane      *send.Lane           // the send stage's part for this project
	heldBytes atomic.Int64         // bytes of this project's spans held in trace assembly

	retirable bool         // found by discovery: retired after routing::idle_timeout without use (retire.go)
	users     atomic.Int64 // pushes routed to it and not yet done
	lastUsed  atomic.Int64 // when the last of them ended (Unix ns, the exporter's clock)
}

func (p *project) pushTraces(ctx context.Context, td ptrace.Traces) error {
	p.exp.releaseDue(ctx, false)
	if a := p.exp.assembly; a != nil {
		p.exp.expireHeld(ctx)
		now, some, others := a.Admit(ctx, time.Now(), p, td)
		translateEach(ctx, others) // held spans of other projects, released by this batch's roots
		if !some {
			return nil
		}
		td = now
	}
	p.translateTraces(ctx, td)
	return nil
}

// translateTraces translates spans that go now (rate limits decide which
// forms), accounts for them, and hands the envelopes to the pending queue.
func (p *project) translateTraces(ctx context.Context, td ptrace.Traces) {
	now := time.Now()
	limits := p.limits.Load()
	mode := p.exp.cfg.TracesAs
	res := p.exp.translator.Traces(td, translate.TracesWant{
		Transactions:   mode == TracesAsTransactions && !gate.GateTransaction.Limited(limits, now),
		SpanV2:         mode == TracesAsSpans && !gate.GateSpan.Limited(limits, now),
		Errors:         p.exp.cfg.ErrorEvents.FromSpanExceptions && !gate.GateError.Limited(limits, now),
		Segments:       true,
		ProfilerOf:     p.profilerOf(limits, now),
		SpanProfilerOf: p.spanProfilerOf(limits, now),
	})
	facts := p.exp.facts.Get()
	*facts = p.index.Add(res.Segments, *facts)
	p.acct.Dropped(ctx, account.ReasonRateLimitBackoff, p.exp.skippedTraces(&res))
	p.acct.Dropped(ctx, account.ReasonInvalid, account.Counts{account.CatSpan: int64(res.InvalidSpans), account.CatError: int64(res.InvalidErrors)})

	out := make([]encode.Outgoing, 0, len(res.Transactions)+len(res.SpanGroups)+len(res.Errors))
	for i := range res.Transactions {
		out = append(out, p.enc.Transaction(&res.Transactions[i], *facts))
	}
	payloads := p.exp.payloads.Get()
	for i := range res.SpanGroups {
		out = p.enc.AppendSpans(ctx, out, &res.SpanGroups[i], payloads)
	}
	p.exp.facts.Put(facts) // the envelopes have copied what they need
	out = p.appendErrorEnvelopes(ctx, out, res.Errors)
	// once no envelope needs them the payload buffers can be reused
	p.lane.Offer(ctx, out, func() {
		p.exp.payloads.Put(payloads)
		res.Release()
	})
}

func (p *project) pushLogs(ctx context.Context, ld plog.Logs) error {
	p.exp.releaseDue(ctx, false)
	now := time.Now()
	limits := p.limits.Load()
	res := p.exp.translator.Logs(ld, translate.LogsWant{
		Logs:   !gate.GateLogs.Limited(limits, now),
		Errors: p.exp.cfg.ErrorEvents.FromLogs && !gate.GateError.Limited(limits, now),
	})
	p.acct.Dropped(ctx, account.ReasonRateLimitBackoff, skippedLogs(&res))
	p.acct.Dropped(ctx, account.ReasonInvalid, account.Counts{account.CatLogItem: int64(res.InvalidLogs), account.CatError: int64(res.InvalidErrors)})

	payloads := p.exp.payloads.Get()
	out := p.enc.AppendLogs(ctx, make([]encode.Outgoing, 0, len(res.Logs)/encode.MaxLogsPerEnvelope+1+len(res.Errors)), res.Logs, payloads)
	out = p.appendErrorEnvelopes(ctx, out, res.Errors)
	// once no envelope needs them the payload buffers can be reused
	p.lane.Offer(ctx, out, func() {
		p.exp.payloads.Put(payloads)
		res.Release()
	})
	return nil
}

// pushMetrics translates a push's data points into trace metrics, unless
// trace_metric or trace_metric_byte (or everything) is rate limited: then
// they are only counted (their bytes estimated),
// and the cumulative streams still advance, so the first delta after the
// limit is exact. What cannot become a metric is counted by reason.
func (p *project) pushMetrics(ctx context.Context, md pmetric.Metrics) error {
	e := p.exp
	now := time.Now()
	want := !gate.GateTraceMetric.Limited(p.limits.Load(), now)
	res := e.metrics.Metrics(md, p.streams, uint64(now.UnixNano()), tracemetric.Want{Items: want})
	e.streamMem.Add(res.HeldDelta)
	p.acct.Dropped(ctx, account.ReasonRateLimitBackoff, account.Counts{account.CatTraceMetric: res.Skipped, account.CatTraceMetricByte: res.SkippedBytes})
	p.acct.Dropped(ctx, account.ReasonInvalid, account.Counts{account.CatTraceMetric: res.Invalid})
	p.acct.Dropped(ctx, account.ReasonNoBaseline, account.Counts{account.CatTraceMetric: res.NoBaseline})
	p.acct.Dropped(ctx, account.ReasonUnchanged, account.Counts{account.CatTraceMetric: res.Unchanged})
	if len(res.Items) == 0 {
		return nil
	}
	payloads := e.payloads.Get()
	out := p.enc.AppendTraceMetrics(ctx, make([]encode.Outgoing, 0, len(res.Items)/encode.MaxTraceMetricsPerEnvelope+1), res.Items, payloads)
	p.lane.Offer(ctx, out, func() {
		e.payloads.Put(payloads)
		res.Release()
	})
	return nil
}

// appendErrorEnvelopes appends the envelopes of a push's error events. With
// the dedupe window on, linked events are offered to it first: held ones are
// sent later (releaseDue), and an event merged with its held counterpart is
// sent once, the other counted as deduplicated.
func (p *project) appendErrorEnvelopes(ctx context.Context, out []encode.Outgoing, evs []translate.ErrorEvent) []encode.Outgoing {
	d := p.exp.dedupe
	if d == nil {
		for i := range evs {
			out = append(out, p.enc.Error(&evs[i]))
		}
		return out
	}
	now := time.Now()
	var deduped account.Counts
	held := false
	for i := range evs {
		ev, what := d.Offer(p, &evs[i], now)
		switch what {
		case dedupe.Held:
			held = true
			continue
		case dedupe.Merged:
			deduped[account.CatError]++
		}
		out = append(out, p.enc.Error(&ev))
	}
	p.acct.Dropped(ctx, account.ReasonDeduplicated, deduped)
	if held {
		p.exp.releaseDue(ctx, false) // what gave way to p's events (dedupe.Window.Projects) goes now
	}
	return out
}
