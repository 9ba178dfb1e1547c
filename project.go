// One project's pipeline, wiring the stages for one DSN: a routed push goes
// through assembly (assembly.go), is gated on the project's rate limits
// before translation (internal/admit), translated (internal/translate),
// shaped and deduplicated (internal/errorshape, internal/dedupe), encoded
// (internal/encode), handed to the project's pending queue
// (internal/pending), sent (internal/send) with any client report riding
// along, and accounted (internal/account). It is in the root because it
// holds the exporter's shared parts and calls each stage; the work of each
// stage is in its package.

package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/admit"
	"github.com/otel-sentry/sentryexporter/internal/dedupe"
	"github.com/otel-sentry/sentryexporter/internal/dsn"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/pending"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/internal/send"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// project is everything the exporter keeps per DSN: its rate limits, its
// client-report aggregator, its counters (labelled with the project id), its
// sender with a connection pool of its own, and its pending queue with its own
// workers. A quota on one project never delays another, and neither does a
// Sentry that hangs: pushes hand envelopes over and return.
type project struct {
	exp     *sentryExporter
	dsn     *dsn.DSN
	limits  *ratelimit.State
	reports *account.ClientReports // nil when client reports are disabled
	// standaloneReports is set when an envelope carrying a client report was
	// refused with a 4xx: until a standalone report gets through, reports stop
	// riding along, so a report Sentry refuses can never take data down with it.
	standaloneReports atomic.Bool
	reporting         atomic.Bool // a periodic client report is being sent
	acct              *account.Accountant
	enc               *encode.Encoder // wraps the project's payloads into envelopes
	sender            *send.Sender
	queue             *pending.Queue // envelopes between push and answer, sent by the project's own workers
	heldBytes         atomic.Int64   // bytes of this project's spans held in trace assembly
}

func (p *project) pushTraces(ctx context.Context, td ptrace.Traces) error {
	p.exp.releaseDue(ctx, false)
	if a := p.exp.asm; a != nil {
		p.exp.expireHeld(ctx)
		var some bool
		if td, some = a.admit(ctx, p, td); !some {
			return nil
		}
	}
	p.translateTraces(ctx, td)
	return nil
}

// translateTraces translates spans that go now (rate limits decide which
// forms), accounts for them, and hands the envelopes to the pending queue.
func (p *project) translateTraces(ctx context.Context, td ptrace.Traces) {
	now := p.exp.clk.now()
	limits := p.limits.Load()
	mode := p.exp.cfg.TracesAs
	res := p.exp.translator.Traces(td, translate.TracesWant{
		Transactions: mode == TracesAsTransactions && !admit.GateTransaction.Limited(limits, now),
		SpanV2:       mode == TracesAsSpans && !admit.GateSpan.Limited(limits, now),
		Errors:       p.exp.cfg.ErrorEvents.FromSpanExceptions && !admit.GateError.Limited(limits, now),
		Segments:     true,
	})
	facts := p.exp.facts.Get()
	*facts = p.exp.index.Add(res.Segments, *facts)
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
	// once every envelope is settled the payload buffers can be reused
	p.hand(ctx, out, func() {
		p.exp.payloads.Put(payloads)
		res.Release()
	}, !p.exp.routed())
}

func (p *project) pushLogs(ctx context.Context, ld plog.Logs) error {
	p.exp.releaseDue(ctx, false)
	now := p.exp.clk.now()
	limits := p.limits.Load()
	res := p.exp.translator.Logs(ld, translate.LogsWant{
		Logs:   !admit.GateLogs.Limited(limits, now),
		Errors: p.exp.cfg.ErrorEvents.FromLogs && !admit.GateError.Limited(limits, now),
	})
	p.acct.Dropped(ctx, account.ReasonRateLimitBackoff, skippedLogs(&res))
	p.acct.Dropped(ctx, account.ReasonInvalid, account.Counts{account.CatLogItem: int64(res.InvalidLogs), account.CatError: int64(res.InvalidErrors)})

	payloads := p.exp.payloads.Get()
	out := p.enc.AppendLogs(ctx, make([]encode.Outgoing, 0, len(res.Logs)/encode.MaxLogsPerEnvelope+1+len(res.Errors)), res.Logs, payloads)
	out = p.appendErrorEnvelopes(ctx, out, res.Errors)
	// once every envelope is settled the payload buffers can be reused
	p.hand(ctx, out, func() {
		p.exp.payloads.Put(payloads)
		res.Release()
	}, !p.exp.routed())
	return nil
}

// sendAll hands out to the project's pending queue and returns at once: it
// never waits on the network, nor for room. What does not fit is dropped and
// counted as queue_overflow; the rest is sent by the project's workers.
func (p *project) sendAll(ctx context.Context, out []encode.Outgoing) {
	p.hand(ctx, out, nil, false)
}

// hand gives the envelopes of one push to the pending queue; release runs
// once every one of them is settled (sent, or dropped and counted). With wait
// a push waits for room (back-pressure, for the single-project case) until its
// context ends (queue_overflow) or the drain time after shutdown is over
// (network_error); without it, what does not fit is dropped as queue_overflow.
func (p *project) hand(ctx context.Context, out []encode.Outgoing, release func(), wait bool) {
	if len(out) == 0 {
		if release != nil {
			release()
		}
		return
	}
	done := pending.NewPush(len(out), release)
	for i := range out {
		taken, why := p.queue.Offer(ctx, &out[i], done, wait)
		if taken {
			continue
		}
		p.acct.Dropped(ctx, why, out[i].Counts)
		done.Settle()
	}
}

// deliver sends one envelope, with any pending client report riding along,
// and accounts for it. A container that Sentry finds too large (413) is split
// in two and each half is sent once before its items are counted.
func (p *project) deliver(ctx context.Context, o *encode.Outgoing) {
	report := p.attachReport(&o.Env)
	res := p.sender.Send(ctx, &o.Env, o.Gate)
	p.settleReport(report, res)
	if res.TooLarge && o.Splittable() {
		for _, half := range o.Halves() {
			hres := p.sender.Send(ctx, &half.Env, half.Gate)
			p.acct.Outcome(ctx, hres.Delivered, hres.Reason, half.Counts)
		}
		return
	}
	p.acct.Outcome(ctx, res.Delivered, res.Reason, o.Counts)
}

// attachReport appends the pending client report to env; it returns what it
// took so that settleReport can put it back if the envelope does not arrive.
func (p *project) attachReport(env *envelope.Envelope) []envelope.Discard {
	if p.reports == nil || p.standaloneReports.Load() {
		return nil
	}
	d := p.reports.Take()
	if d == nil {
		return nil
	}
	env.Items = append(env.Items, envelope.Item{
		Type:    envelope.ItemTypeClientReport,
		Payload: envelope.AppendClientReport(nil, p.exp.clk.now(), d),
	})
	return d
}

// settleReport keeps a client report that did not reach Sentry. An envelope
// answered 429 still counts as delivered for its report: Relay never rate
// limits client_report items (they have no data category).
func (p *project) settleReport(report []envelope.Discard, res send.Result) {
	if report == nil || res.Delivered || res.Status == http.StatusTooManyRequests {
		return
	}
	p.reports.Restore(report)
	if res.Status >= 400 && res.Status < 500 {
		p.standaloneReports.Store(true)
	}
}

// flushReport sends the pending client report in an envelope of its own.
// Only an all-category limit blocks it; then the counts are kept for later,
// or, at shutdown, logged so they are not lost without a trace.
func (p *project) flushReport(ctx context.Context, final bool) {
	d := p.reports.Take()
	if d == nil {
		return
	}
	env := envelope.Envelope{
		Header: envelope.Header{SDK: sdkinfo.Envelope()},
		Items:  []envelope.Item{{Type: envelope.ItemTypeClientReport, Payload: envelope.AppendClientReport(nil, p.exp.clk.now(), d)}},
	}
	res := p.sender.Send(ctx, &env, admit.GateInternal)
	if res.Delivered || res.Status == http.StatusTooManyRequests {
		p.standaloneReports.Store(false)
		return
	}
	if !final {
		p.reports.Restore(d)
		return
	}
	fields := make([]zap.Field, 0, len(d)+2)
	fields = append(fields, zap.String("project", p.dsn.ProjectID), zap.String("why", res.Reason.Wire()))
	for _, x := range d {
		fields = append(fields, zap.Uint64(x.Reason+"."+x.Category, x.Quantity))
	}
	p.exp.logger.Warn("Final Sentry client report could not be sent; its counts are also in otelcol_exporter_sentry_dropped_items", fields...)
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
	now := p.exp.clk.now()
	var deduped account.Counts
	for i := range evs {
		ev, what := d.Offer(p, &evs[i], now)
		switch what {
		case dedupe.Held:
			continue
		case dedupe.Merged:
			deduped[account.CatError]++
		}
		out = append(out, p.enc.Error(&ev))
	}
	p.acct.Dropped(ctx, account.ReasonDeduplicated, deduped)
	return out
}
