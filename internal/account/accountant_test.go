package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/account/accounttest"
	"github.com/otel-sentry/sentryexporter/internal/metadatatest"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

const (
	metricDropped = "otelcol_exporter_sentry_dropped_items"
	metricSent    = "otelcol_exporter_sentry_sent_items"
	metricReqs    = "otelcol_exporter_sentry_requests"
)

type fixture struct {
	tel     *accounttest.Telemetry
	reports *account.ClientReports
	acct    *account.Accountant
}

// newFixture is the accountant of project "7"; withReports turns client
// reports on.
func newFixture(t *testing.T, withReports bool) *fixture {
	t.Helper()
	f := &fixture{tel: accounttest.New(t)}
	if withReports {
		f.reports = &account.ClientReports{}
	}
	f.acct = account.NewAccountant(f.tel.Builder, "7", f.reports)
	return f
}

// points returns a sum metric's points keyed by their encoded attributes
// ("category=span,project=7,reason=invalid"); empty when never recorded.
func (f *fixture) points(t *testing.T, name string) map[string]int64 {
	t.Helper()
	return f.tel.Sums(t, name)
}

// reported lists, independently of Reason.Reported, which reasons go into
// client reports: Relay records 429s itself, unroutable items have no
// project to report to, deduplicated items were not lost.
var reported = map[account.Reason]bool{
	account.ReasonRateLimitBackoff: true,
	account.ReasonRateLimited:      false,
	account.ReasonSendError:        true,
	account.ReasonNetworkError:     true,
	account.ReasonInvalid:          true,
	account.ReasonUnroutable:       false,
	account.ReasonDeduplicated:     false,
	account.ReasonQueueOverflow:    true,
	account.ReasonNoBaseline:       false,
	account.ReasonUnchanged:        false,
	account.ReasonNotAllowed:       false,
}

func TestReasonWireNames(t *testing.T) {
	want := map[account.Reason]string{
		account.ReasonRateLimitBackoff: "ratelimit_backoff", account.ReasonRateLimited: "rate_limited",
		account.ReasonSendError: "send_error", account.ReasonNetworkError: "network_error",
		account.ReasonInvalid:    "invalid",
		account.ReasonUnroutable: "unroutable", account.ReasonDeduplicated: "deduplicated",
		account.ReasonQueueOverflow: "queue_overflow", account.ReasonNoBaseline: "no_baseline",
		account.ReasonUnchanged: "unchanged", account.ReasonNotAllowed: "not_allowed",
	}
	require.Len(t, want, int(account.NumReasons))
	for why, name := range want {
		assert.Equal(t, name, why.Wire())
		assert.Equal(t, reported[why], why.Reported(), name)
	}
}

func TestDropped(t *testing.T) {
	for why := range account.NumReasons {
		t.Run(why.Wire(), func(t *testing.T) {
			for _, withReports := range []bool{true, false} {
				f := newFixture(t, withReports)
				ctx := t.Context()
				f.acct.Dropped(ctx, why, account.Counts{account.CatLogItem: 2, account.CatLogByte: 300, account.CatSpan: 0})
				f.acct.Dropped(ctx, why, account.Counts{account.CatLogItem: 1, account.CatLogByte: 50})
				f.acct.Dropped(ctx, why, account.Counts{}) // records nothing

				r := why.Wire()
				assert.Equal(t, map[string]int64{
					"category=log_item,project=7,reason=" + r: 3,
					"category=log_byte,project=7,reason=" + r: 350,
				}, f.points(t, metricDropped), "zero counts record no point")
				assert.Empty(t, f.points(t, metricSent))
				if !withReports {
					continue
				}
				got := f.reports.Take()
				if !reported[why] {
					assert.Empty(t, got, "%s must not go into a client report", r)
					continue
				}
				assert.ElementsMatch(t, []envelope.Discard{
					{Reason: r, Category: "log_item", Quantity: 3},
					{Reason: r, Category: "log_byte", Quantity: 350},
				}, got)
				assert.Nil(t, f.reports.Take(), "Take empties the tally")
			}
		})
	}
}

func TestDroppedEveryCategory(t *testing.T) {
	f := newFixture(t, true)
	f.acct.Dropped(t.Context(), account.ReasonQueueOverflow, account.Counts{
		account.CatError: 1, account.CatTransaction: 2, account.CatSpan: 3, account.CatLogItem: 4, account.CatLogByte: 5,
	})
	project := attribute.String("project", "7")
	reason := attribute.String("reason", "queue_overflow")
	dp := func(cat string, v int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(project, attribute.String("category", cat), reason), Value: v}
	}
	metadatatest.AssertEqualExporterSentryDroppedItems(t, f.tel.Telemetry, []metricdata.DataPoint[int64]{
		dp("error", 1), dp("transaction", 2), dp("span", 3), dp("log_item", 4), dp("log_byte", 5),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	assert.ElementsMatch(t, []envelope.Discard{
		{Reason: "queue_overflow", Category: "error", Quantity: 1},
		{Reason: "queue_overflow", Category: "transaction", Quantity: 2},
		{Reason: "queue_overflow", Category: "span", Quantity: 3},
		{Reason: "queue_overflow", Category: "log_item", Quantity: 4},
		{Reason: "queue_overflow", Category: "log_byte", Quantity: 5},
	}, f.reports.Take())
}

// TestDroppedProfileCategories: a profile chunk's four categories keep
// Relay's names in the metric and the client report, and the durations
// their milliseconds.
func TestDroppedProfileCategories(t *testing.T) {
	f := newFixture(t, true)
	f.acct.Dropped(t.Context(), account.ReasonRateLimitBackoff, account.Counts{
		account.CatProfileChunk: 1, account.CatProfileDuration: 10_000, account.CatProfileChunkUI: 2, account.CatProfileDurationUI: 3_500,
	})
	project := attribute.String("project", "7")
	reason := attribute.String("reason", "ratelimit_backoff")
	dp := func(cat string, v int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(project, attribute.String("category", cat), reason), Value: v}
	}
	metadatatest.AssertEqualExporterSentryDroppedItems(t, f.tel.Telemetry, []metricdata.DataPoint[int64]{
		dp("profile_chunk", 1), dp("profile_duration", 10_000), dp("profile_chunk_ui", 2), dp("profile_duration_ui", 3_500),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	assert.ElementsMatch(t, []envelope.Discard{
		{Reason: "ratelimit_backoff", Category: "profile_chunk", Quantity: 1},
		{Reason: "ratelimit_backoff", Category: "profile_duration", Quantity: 10_000},
		{Reason: "ratelimit_backoff", Category: "profile_chunk_ui", Quantity: 2},
		{Reason: "ratelimit_backoff", Category: "profile_duration_ui", Quantity: 3_500},
	}, f.reports.Take())
}

func TestDroppedNothing(t *testing.T) {
	f := newFixture(t, true)
	f.acct.Dropped(t.Context(), account.ReasonInvalid, account.Counts{})
	_, err := f.tel.GetMetric(metricDropped)
	assert.Error(t, err, "no drop, no point")
	assert.Nil(t, f.reports.Take())
}

func TestSent(t *testing.T) {
	tests := []struct {
		name   string
		counts []account.Counts
		want   map[string]int64
	}{
		{name: "nothing", counts: []account.Counts{{}}, want: map[string]int64{}},
		{
			name: "a transaction and its spans", counts: []account.Counts{{account.CatTransaction: 1, account.CatSpan: 4}},
			want: map[string]int64{"category=transaction,project=7": 1, "category=span,project=7": 4},
		},
		{
			name: "adds up", counts: []account.Counts{{account.CatError: 1}, {account.CatError: 2, account.CatLogItem: 0}},
			want: map[string]int64{"category=error,project=7": 3},
		},
		{
			name: "logs", counts: []account.Counts{{account.CatLogItem: 100, account.CatLogByte: 12345}},
			want: map[string]int64{"category=log_item,project=7": 100, "category=log_byte,project=7": 12345},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, true)
			for _, c := range tt.counts {
				f.acct.Sent(t.Context(), c)
			}
			assert.Equal(t, tt.want, f.points(t, metricSent))
			assert.Empty(t, f.points(t, metricDropped))
			assert.Nil(t, f.reports.Take(), "what Sentry stored is no discard")
		})
	}
}

func TestOutcome(t *testing.T) {
	c := account.Counts{account.CatSpan: 5}
	tests := []struct {
		name        string
		delivered   bool
		why         account.Reason
		wantSent    map[string]int64
		wantDropped map[string]int64
		wantReport  []envelope.Discard
	}{
		{
			name: "delivered", delivered: true, why: account.ReasonSendError,
			wantSent: map[string]int64{"category=span,project=7": 5}, wantDropped: map[string]int64{},
		},
		{
			name: "send error", why: account.ReasonSendError,
			wantSent: map[string]int64{}, wantDropped: map[string]int64{"category=span,project=7,reason=send_error": 5},
			wantReport: []envelope.Discard{{Reason: "send_error", Category: "span", Quantity: 5}},
		},
		{
			name: "429", why: account.ReasonRateLimited,
			wantSent: map[string]int64{}, wantDropped: map[string]int64{"category=span,project=7,reason=rate_limited": 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, true)
			f.acct.Outcome(t.Context(), tt.delivered, tt.why, c)
			assert.Equal(t, tt.wantSent, f.points(t, metricSent))
			assert.Equal(t, tt.wantDropped, f.points(t, metricDropped))
			assert.Equal(t, tt.wantReport, f.reports.Take())
		})
	}
}

func TestRequest(t *testing.T) {
	f := newFixture(t, false)
	ctx := t.Context()
	for _, status := range []int{200, 200, 429, 0, 0, 0, 418, 503} {
		f.acct.Request(ctx, status)
	}
	project := attribute.String("project", "7")
	dp := func(status string, v int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(project, attribute.String("status", status)), Value: v}
	}
	metadatatest.AssertEqualExporterSentryRequests(t, f.tel.Telemetry, []metricdata.DataPoint[int64]{
		dp("200", 2), dp("429", 1), dp("network_error", 3), dp("418", 1), dp("503", 1),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestCompressionFallback(t *testing.T) {
	f := newFixture(t, false)
	f.acct.CompressionFallback()
	f.acct.CompressionFallback()
	metadatatest.AssertEqualExporterSentryCompressionFallbacks(t, f.tel.Telemetry, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("project", "7")), Value: 2},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// Two projects' accountants share the telemetry and keep their points apart.
func TestProjectsApart(t *testing.T) {
	f := newFixture(t, false)
	other := account.NewAccountant(f.tel.Builder, "unroutable", nil)
	assert.Equal(t, attribute.String("project", "unroutable"), other.Project)
	f.acct.Dropped(t.Context(), account.ReasonInvalid, account.Counts{account.CatError: 1})
	other.Dropped(t.Context(), account.ReasonUnroutable, account.Counts{account.CatError: 2})
	assert.Equal(t, map[string]int64{
		"category=error,project=7,reason=invalid":             1,
		"category=error,project=unroutable,reason=unroutable": 2,
	}, f.points(t, metricDropped))
}

func TestObserveLimits(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	parse := func(h string) ratelimit.Limits {
		l, _ := ratelimit.Parse(h, base)
		return l
	}
	tests := []struct {
		name   string
		limits ratelimit.Limits
		now    time.Time
		want   map[string]float64 // category → seconds left
	}{
		{name: "none", limits: ratelimit.Limits{}, now: base, want: map[string]float64{}},
		{
			name: "one category", limits: parse("60:log_item:organization"), now: base.Add(15 * time.Second),
			want: map[string]float64{"log_item": 45},
		},
		{
			name: "all categories is named all", limits: parse("30::organization"), now: base.Add(10 * time.Second),
			want: map[string]float64{"all": 20},
		},
		{
			name: "expired ones are left out", limits: parse("60:log_item;log_byte:organization, 30::organization, 5:span:key"), now: base.Add(10 * time.Second),
			want: map[string]float64{"log_item": 50, "log_byte": 50, "all": 20},
		},
		{
			name: "a limit ending now is over", limits: parse("10:error:key, 11:transaction:key"), now: base.Add(10 * time.Second),
			want: map[string]float64{"transaction": 1},
		},
		{name: "all expired", limits: parse("5:span:key, 1::key"), now: base.Add(time.Minute), want: map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, false)
			require.NoError(t, f.tel.Builder.RegisterExporterSentryRateLimitRemainingCallback(func(_ context.Context, o metric.Float64Observer) error {
				f.acct.ObserveLimits(o, tt.limits, tt.now)
				return nil
			}))
			got := map[string]float64{}
			m, err := f.tel.GetMetric("otelcol_exporter_sentry_rate_limit_remaining")
			if err == nil {
				gauge, ok := m.Data.(metricdata.Gauge[float64])
				require.True(t, ok, "%T", m.Data)
				for _, dp := range gauge.DataPoints {
					project, _ := dp.Attributes.Value("project")
					assert.Equal(t, "7", project.AsString())
					cat, _ := dp.Attributes.Value("category")
					got[cat.AsString()] = dp.Value
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// A client report that could not be delivered is put back whole.
func TestClientReportsRestore(t *testing.T) {
	r := &account.ClientReports{}
	assert.Nil(t, r.Take())
	r.Add(account.ReasonNetworkError, account.Counts{account.CatError: 2})
	taken := r.Take()
	require.Equal(t, []envelope.Discard{{Reason: "network_error", Category: "error", Quantity: 2}}, taken)
	r.Add(account.ReasonNetworkError, account.Counts{account.CatError: 1})
	r.Restore(taken)
	r.Restore([]envelope.Discard{{Reason: "no_such_reason", Category: "error", Quantity: 9}})
	assert.Equal(t, []envelope.Discard{{Reason: "network_error", Category: "error", Quantity: 3}}, r.Take())
}
