package account

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Accountant is the one place where an item's fate is recorded: stored by
// Sentry (sent_items) or not (dropped_items by category and reason, plus the
// pending client report for reasons Sentry has not recorded itself).
//
// Every push returns nil to exporterhelper, whatever happened to its items:
// drops are final (rate-limited items must never come back as retryable, and
// network errors were already retried per envelope), so exporterhelper's own
// otelcol_exporter_sent_* counts items handed to this exporter, and
// otelcol_exporter_sentry_* are the truth about what Sentry stored.
type Accountant struct {
	tb      *metadata.TelemetryBuilder
	reports *ClientReports // nil when client reports are disabled

	dropOpts [NumReasons][NumCategories][]metric.AddOption
	sentOpts [NumCategories][]metric.AddOption
	reqOpts  map[int][]metric.AddOption // by status (0: no answer); built once for the statuses Sentry sends
	// Project labels every metric of this accountant (the project id, or
	// "unroutable"); the exporter's gauges use it too.
	Project attribute.KeyValue
}

// NewAccountant is the accountant of one project; reports is nil when client
// reports are disabled.
func NewAccountant(tb *metadata.TelemetryBuilder, projectID string, reports *ClientReports) *Accountant {
	a := &Accountant{tb: tb, reports: reports, Project: attribute.String("project", projectID), reqOpts: map[int][]metric.AddOption{}}
	for why := range NumReasons {
		for cat := range NumCategories {
			a.dropOpts[why][cat] = addOpts(a.Project, attribute.String("category", string(cat.Wire())), attribute.String("reason", why.Wire()))
		}
	}
	for cat := range NumCategories {
		a.sentOpts[cat] = addOpts(a.Project, attribute.String("category", string(cat.Wire())))
	}
	for _, status := range []int{200, 202, 400, 401, 403, 404, 413, 415, 429, 500, 502, 503, 504} {
		a.reqOpts[status] = addOpts(a.Project, attribute.String("status", strconv.Itoa(status)))
	}
	a.reqOpts[0] = addOpts(a.Project, attribute.String("status", statusNetworkError))
	return a
}

func addOpts(kvs ...attribute.KeyValue) []metric.AddOption {
	return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
}

const statusNetworkError = "network_error"

// Dropped records items that will never reach Sentry.
func (a *Accountant) Dropped(ctx context.Context, why Reason, c Counts) {
	for cat, n := range c {
		if n > 0 {
			a.tb.ExporterSentryDroppedItems.Add(ctx, n, a.dropOpts[why][cat]...)
		}
	}
	if a.reports != nil {
		a.reports.Add(why, c)
	}
}

// Sent records items Sentry accepted.
func (a *Accountant) Sent(ctx context.Context, c Counts) {
	for cat, n := range c {
		if n > 0 {
			a.tb.ExporterSentrySentItems.Add(ctx, n, a.sentOpts[cat]...)
		}
	}
}

// Outcome records what happened to the items of one envelope.
func (a *Accountant) Outcome(ctx context.Context, delivered bool, why Reason, c Counts) {
	if delivered {
		a.Sent(ctx, c)
		return
	}
	a.Dropped(ctx, why, c)
}

// CompressionFallback counts a project's switch from zstd to gzip (internal/send).
func (a *Accountant) CompressionFallback() {
	a.tb.ExporterSentryCompressionFallbacks.Add(context.Background(), 1, addOpts(a.Project)...)
}

// Request counts one POST by the status of its answer (0: no answer).
func (a *Accountant) Request(ctx context.Context, status int) {
	opts, ok := a.reqOpts[status]
	if !ok {
		opts = addOpts(a.Project, attribute.String("status", strconv.Itoa(status))) // rare statuses: allocate
	}
	a.tb.ExporterSentryRequests.Add(ctx, 1, opts...)
}

// ObserveLimits reports the seconds left on every active rate limit.
func (a *Accountant) ObserveLimits(o metric.Float64Observer, l ratelimit.Limits, now time.Time) {
	l.Each(func(c ratelimit.Category, deadline time.Time) {
		if !deadline.After(now) {
			return
		}
		o.Observe(deadline.Sub(now).Seconds(), metric.WithAttributes(a.Project, attribute.String("category", c.Label())))
	})
}
