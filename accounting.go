package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// accountant is the one place where an item's fate is recorded: stored by
// Sentry (sent_items) or not (dropped_items by category and reason, plus the
// pending client report for reasons Sentry has not recorded itself).
//
// Every push returns nil to exporterhelper, whatever happened to its items:
// drops are final (rate-limited items must never come back as retryable, and
// network errors were already retried per envelope), so exporterhelper's own
// otelcol_exporter_sent_* counts items handed to this exporter, and
// otelcol_exporter_sentry_* are the truth about what Sentry stored.
type accountant struct {
	tb      *metadata.TelemetryBuilder
	reports *account.ClientReports // nil when client reports are disabled

	dropOpts [account.NumReasons][account.NumCategories][]metric.AddOption
	sentOpts [account.NumCategories][]metric.AddOption
	reqOpts  map[int][]metric.AddOption // by status (0: no answer); built once for the statuses Sentry sends
	project  attribute.KeyValue
}

func newAccountant(tb *metadata.TelemetryBuilder, projectID string, reports *account.ClientReports) *accountant {
	a := &accountant{tb: tb, reports: reports, project: attribute.String("project", projectID), reqOpts: map[int][]metric.AddOption{}}
	for why := range account.NumReasons {
		for cat := range account.NumCategories {
			a.dropOpts[why][cat] = addOpts(a.project, attribute.String("category", string(cat.Wire())), attribute.String("reason", why.Wire()))
		}
	}
	for cat := range account.NumCategories {
		a.sentOpts[cat] = addOpts(a.project, attribute.String("category", string(cat.Wire())))
	}
	for _, status := range []int{200, 202, 400, 401, 403, 404, 413, 415, 429, 500, 502, 503, 504} {
		a.reqOpts[status] = addOpts(a.project, attribute.String("status", strconv.Itoa(status)))
	}
	a.reqOpts[0] = addOpts(a.project, attribute.String("status", statusNetworkError))
	return a
}

func addOpts(kvs ...attribute.KeyValue) []metric.AddOption {
	return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
}

const statusNetworkError = "network_error"

// dropped records items that will never reach Sentry.
func (a *accountant) dropped(ctx context.Context, why account.Reason, c account.Counts) {
	for cat, n := range c {
		if n > 0 {
			a.tb.ExporterSentryDroppedItems.Add(ctx, n, a.dropOpts[why][cat]...)
		}
	}
	if a.reports != nil {
		a.reports.Add(why, c)
	}
}

// sent records items Sentry accepted.
func (a *accountant) sent(ctx context.Context, c account.Counts) {
	for cat, n := range c {
		if n > 0 {
			a.tb.ExporterSentrySentItems.Add(ctx, n, a.sentOpts[cat]...)
		}
	}
}

// outcome records what happened to the items of one envelope.
func (a *accountant) outcome(ctx context.Context, r sendResult, c account.Counts) {
	if r.delivered {
		a.sent(ctx, c)
		return
	}
	a.dropped(ctx, r.reason, c)
}

// compressionFallback counts a project's switch from zstd to gzip (compress.go).
func (a *accountant) compressionFallback() {
	a.tb.ExporterSentryCompressionFallbacks.Add(context.Background(), 1, addOpts(a.project)...)
}

// request counts one POST by the status of its answer (0: no answer).
func (a *accountant) request(ctx context.Context, status int) {
	opts, ok := a.reqOpts[status]
	if !ok {
		opts = addOpts(a.project, attribute.String("status", strconv.Itoa(status))) // rare statuses: allocate
	}
	a.tb.ExporterSentryRequests.Add(ctx, 1, opts...)
}

// observeLimits reports the seconds left on every active rate limit.
func (a *accountant) observeLimits(o metric.Float64Observer, l ratelimit.Limits, now time.Time) {
	l.Each(func(c ratelimit.Category, deadline time.Time) {
		if !deadline.After(now) {
			return
		}
		name := string(c)
		if c == ratelimit.CategoryAll {
			name = "all"
		}
		o.Observe(deadline.Sub(now).Seconds(), metric.WithAttributes(a.project, attribute.String("category", name)))
	})
}
