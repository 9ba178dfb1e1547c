package send

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
)

// Client reports tell Sentry what the exporter dropped before Sentry could
// see it. The counts ride along on the project's next outgoing envelope; a
// standalone report goes out every ReportInterval and at shutdown. A report
// is kept until an answer shows Sentry has it.

// attachReport appends the pending client report to env; it returns what it
// took so that settleReport can put it back if the envelope does not arrive.
func (l *Lane) attachReport(env *envelope.Envelope) []envelope.Discard {
	if l.reports == nil || l.standaloneReports.Load() {
		return nil
	}
	d := l.reports.Take()
	if d == nil {
		return nil
	}
	env.Items = append(env.Items, envelope.Item{
		Type:    envelope.ItemTypeClientReport,
		Payload: envelope.AppendClientReport(nil, time.Now(), d),
	})
	return d
}

// settleReport keeps a client report that did not reach Sentry. An envelope
// answered 429 still counts as delivered for its report: Relay never rate
// limits client_report items (they have no data category).
func (l *Lane) settleReport(report []envelope.Discard, res Result) {
	if report == nil || res.Delivered || res.Status == http.StatusTooManyRequests {
		return
	}
	l.reports.Restore(report)
	if res.Status >= 400 && res.Status < 500 {
		l.standaloneReports.Store(true)
	}
}

// flushReport sends the pending client report in an envelope of its own,
// one attempt. Only an all-category limit blocks it; then the counts are
// kept for later, or, at shutdown (final), logged so they are not lost
// without a trace.
func (l *Lane) flushReport(ctx context.Context, final bool) {
	d := l.reports.Take()
	if d == nil {
		return
	}
	env := envelope.Envelope{
		Header: envelope.Header{SDK: sdkinfo.Envelope()},
		Items:  []envelope.Item{{Type: envelope.ItemTypeClientReport, Payload: envelope.AppendClientReport(nil, time.Now(), d)}},
	}
	res := l.sendReport(ctx, &env)
	if res.Delivered || res.Status == http.StatusTooManyRequests {
		l.standaloneReports.Store(false)
		return
	}
	if !final {
		l.reports.Restore(d)
		return
	}
	fields := make([]zap.Field, 0, len(d)+2)
	fields = append(fields, zap.String("project", l.acct.Project.Value.AsString()), zap.String("why", res.Reason.Wire()))
	for _, x := range d {
		fields = append(fields, zap.Uint64(x.Reason+"."+x.Category, x.Quantity))
	}
	l.stage.set.Logger.Warn("Final Sentry client report could not be sent; its counts are also in otelcol_exporter_sentry_dropped_items", fields...)
}

// sendReport makes one attempt for a standalone report, holding a place
// like any request, unless an all-category limit is active. Its lane has a
// client: the report loop starts once Start built them all, and Shutdown
// skips a lane without one.
func (l *Lane) sendReport(ctx context.Context, env *envelope.Envelope) Result {
	t, ok := l.limit.Acquire(ctx)
	if !ok {
		return Result{Reason: account.ReasonNetworkError}
	}
	res, _ := l.gatedAttempt(ctx, gate.GateInternal, t, func() (Result, bool) { return l.http.attempt(ctx, gate.GateInternal, env), true })
	return res
}
