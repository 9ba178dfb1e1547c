package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// project is everything the exporter keeps per DSN: its rate limits, its
// client-report aggregator, its counters (labelled with the project id) and
// its sender with a connection pool of its own. A quota on one project never
// delays another.
type project struct {
	exp     *sentryExporter
	dsn     *dsn
	limits  *ratelimit.State
	reports *clientReports // nil when client reports are disabled
	acct    *accountant
	sender  *sender
}

func (e *project) pushTraces(ctx context.Context, td ptrace.Traces) error {
	now := e.exp.now()
	limits := e.limits.Load()
	res := e.exp.translator.Traces(td, translate.TracesWant{
		Transactions: e.exp.cfg.TracesAs == TracesAsTransactions && !gateTransaction.limited(limits, now),
		SpanV2:       e.exp.cfg.TracesAs == TracesAsSpans && !gateSpan.limited(limits, now),
		Errors:       e.exp.cfg.ErrorEvents.FromSpanExceptions && !gateError.limited(limits, now),
	})
	skipped := counts{catSpan: int64(res.SkippedSpans), catError: int64(res.SkippedErrors)}
	if e.exp.cfg.TracesAs == TracesAsTransactions { // in spans mode no transaction is ever built, so none is dropped
		skipped[catTransaction] = int64(res.SkippedTransactions)
	}
	e.acct.dropped(ctx, reasonRateLimitBackoff, skipped)
	e.acct.dropped(ctx, reasonInvalid, counts{catSpan: int64(res.InvalidSpans), catError: int64(res.InvalidErrors)})

	out := make([]outgoing, 0, len(res.Transactions)+len(res.SpanGroups)+len(res.Errors))
	for i := range res.Transactions {
		out = append(out, e.transactionEnvelope(&res.Transactions[i]))
	}
	for i := range res.SpanGroups {
		out = e.appendSpanEnvelopes(ctx, out, &res.SpanGroups[i])
	}
	for i := range res.Errors {
		out = append(out, e.errorEnvelope(&res.Errors[i]))
	}
	e.sendAll(ctx, out)
	res.Release() // every envelope is settled: the payload buffer can be reused
	return nil
}

func (e *project) pushLogs(ctx context.Context, ld plog.Logs) error {
	now := e.exp.now()
	limits := e.limits.Load()
	res := e.exp.translator.Logs(ld, translate.LogsWant{
		Logs:   !gateLogs.limited(limits, now),
		Errors: e.exp.cfg.ErrorEvents.FromLogs && !gateError.limited(limits, now),
	})
	e.acct.dropped(ctx, reasonRateLimitBackoff, counts{
		catLogItem: int64(res.SkippedLogs), catLogByte: int64(res.SkippedLogBytes), catError: int64(res.SkippedErrors),
	})
	e.acct.dropped(ctx, reasonInvalid, counts{catLogItem: int64(res.InvalidLogs), catError: int64(res.InvalidErrors)})

	out := e.appendLogEnvelopes(ctx, make([]outgoing, 0, len(res.Logs)/maxLogsPerEnvelope+1+len(res.Errors)), res.Logs)
	for i := range res.Errors {
		out = append(out, e.errorEnvelope(&res.Errors[i]))
	}
	e.sendAll(ctx, out)
	res.Release()
	return nil
}

// sendAll sends every envelope concurrently (the sender caps what is in
// flight) and accounts for each outcome. It returns when all are settled.
func (e *project) sendAll(ctx context.Context, out []outgoing) {
	if len(out) == 1 {
		e.deliver(ctx, &out[0])
		return
	}
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func(o *outgoing) {
			defer wg.Done()
			e.deliver(ctx, o)
		}(&out[i])
	}
	wg.Wait()
}

// deliver sends one envelope, with any pending client report riding along,
// and accounts for it. A container that Sentry finds too large (413) is split
// in two and each half is sent once before its items are counted.
func (e *project) deliver(ctx context.Context, o *outgoing) {
	report := e.attachReport(&o.env)
	res := e.sender.send(ctx, &o.env, o.gate)
	e.settleReport(report, res)
	if res.tooLarge && len(o.items) > 1 {
		for _, half := range o.halves() {
			e.acct.outcome(ctx, e.sender.send(ctx, &half.env, half.gate), half.counts)
		}
		return
	}
	e.acct.outcome(ctx, res, o.counts)
}

// attachReport appends the pending client report to env; it returns what it
// took so that settleReport can put it back if the envelope does not arrive.
func (e *project) attachReport(env *envelope.Envelope) []envelope.Discard {
	if e.reports == nil {
		return nil
	}
	d := e.reports.take()
	if d == nil {
		return nil
	}
	env.Items = append(env.Items, envelope.Item{
		Type:    envelope.ItemTypeClientReport,
		Payload: envelope.AppendClientReport(nil, e.exp.now(), d),
	})
	return d
}

// settleReport keeps a client report that did not reach Sentry. An envelope
// answered 429 still counts as delivered for its report: Relay never rate
// limits client_report items (they have no data category).
func (e *project) settleReport(report []envelope.Discard, res sendResult) {
	if report != nil && !res.delivered && res.status != http.StatusTooManyRequests {
		e.reports.restore(report)
	}
}

// flushReport sends the pending client report in an envelope of its own.
// Only an all-category limit blocks it; then the counts are kept for later,
// or, at shutdown, logged so they are not lost without a trace.
func (e *project) flushReport(ctx context.Context, final bool) {
	d := e.reports.take()
	if d == nil {
		return
	}
	env := envelope.Envelope{
		Header: envelope.Header{SDK: &envelope.SDKInfo{Name: sdkName, Version: sdkVersion}},
		Items:  []envelope.Item{{Type: envelope.ItemTypeClientReport, Payload: envelope.AppendClientReport(nil, e.exp.now(), d)}},
	}
	res := e.sender.send(ctx, &env, gateInternal)
	if res.delivered || res.status == http.StatusTooManyRequests {
		return
	}
	if !final {
		e.reports.restore(d)
		return
	}
	fields := make([]zap.Field, 0, len(d)+1)
	fields = append(fields, zap.String("why", res.reason.wire()))
	for _, x := range d {
		fields = append(fields, zap.Uint64(x.Reason+"."+x.Category, x.Quantity))
	}
	e.exp.logger.Warn("Final Sentry client report could not be sent; its counts are also in otelcol_exporter_sentry_dropped_items", fields...)
}
