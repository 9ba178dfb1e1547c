package sentryexporter

// Per-category rate limits through the whole exporter (factory,
// exporterhelper, HTTP in memory, virtual time): a 429 naming one category
// stops exactly the items it covers, every other signal flows, and the
// accounting is exact (docs/rate-limits.md).

import (
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// reportedCategories are the categories whose local drops client reports carry.
var reportedCategories = []string{"error", "transaction", "span", "log_item", "log_byte", "trace_metric", "trace_metric_byte"}

// localDrops is what the exporter's metrics say it dropped locally while
// limited, keyed as fakeSentry.discards keys client reports.
func (h *harness) localDrops() map[string]uint64 {
	out := map[string]uint64{}
	for _, c := range reportedCategories {
		if n := h.dropped(c, "ratelimit_backoff"); n > 0 {
			out["ratelimit_backoff/"+c] = uint64(n)
		}
	}
	return out
}

// consumeRound is one second of a service's traffic: a trace with an
// exception (a transaction or span container, and an error event), two
// logs and a push of cumulative metrics (its first only a baseline for the
// counter and the histogram).
func (h *harness) consumeRound(i int, start time.Time) {
	h.consumeTraces(i, 1, true)
	h.consumeLogs(2)
	h.consumeMetrics(makeMetrics(1, start, start.Add(time.Duration(i+1)*time.Second), int64(10*(i+1))))
}

// TestScenarioEachCategoryLimit: for each category the exporter enforces,
// Sentry answers the first envelope it covers with a 429 naming only it.
// That item type then stops (the 429'd envelope is the only one Sentry
// sees), every other item type is stored each second, the categories
// dropped are exactly those of the stopped item type, and the client
// reports equal the local drops.
func TestScenarioEachCategoryLimit(t *testing.T) {
	for _, tt := range []categoryLimit{
		{"error", envelope.ItemTypeEvent, false, []string{"error"}},
		{"transaction", envelope.ItemTypeTransaction, false, []string{"transaction", "span"}},
		{"span", envelope.ItemTypeSpan, true, []string{"span"}},
		{"log_item", envelope.ItemTypeLog, false, []string{"log_item", "log_byte"}},
		{"log_byte", envelope.ItemTypeLog, false, []string{"log_item", "log_byte"}},
		{"trace_metric", envelope.ItemTypeTraceMetric, false, []string{"trace_metric", "trace_metric_byte"}},
		{"trace_metric_byte", envelope.ItemTypeTraceMetric, false, []string{"trace_metric", "trace_metric_byte"}},
	} {
		t.Run(tt.category, inBubble(tt.run))
	}
}

// categoryLimit is one case of TestScenarioEachCategoryLimit: the category
// limited, the item type it stops, traces_as: spans, the categories dropped.
type categoryLimit struct {
	category string
	itemType string
	spans    bool
	dropped  []string
}

func (tt categoryLimit) run(t *testing.T) {
	const rounds = 6
	h := newHarness(t, func(c *Config) {
		noDedupe(c)
		if tt.spans {
			c.TracesAs = TracesAsSpans
		}
	})
	q := &quota{itemType: tt.itemType, headers: map[string]string{
		"X-Sentry-Rate-Limits": "60:" + tt.category + ":organization:quota_exceeded",
	}}
	h.sentry.setRespond(q.respond)
	start := time.Now()
	for i := range rounds {
		h.consumeRound(i, start)
		time.Sleep(time.Second)
	}
	assert.False(t, h.allLimited(), "no all-category limit")
	assert.Positive(t, h.limitRemaining(tt.category))
	h.shutdown()
	h.sentry.requireNoInvalid()

	signals := []string{envelope.ItemTypeEvent, envelope.ItemTypeLog, envelope.ItemTypeTraceMetric, envelope.ItemTypeTransaction}
	if tt.spans {
		signals[3] = envelope.ItemTypeSpan
	}
	for _, it := range signals {
		want := rounds
		if it == tt.itemType {
			want = 1 // the envelope answered 429
		}
		assert.Equal(t, want, h.sentry.countType(it), "%q envelopes", it)
	}
	for _, c := range reportedCategories {
		if slices.Contains(tt.dropped, c) {
			assert.Positive(t, h.dropped(c, "ratelimit_backoff"), "%q dropped while limited", c)
			assert.Positive(t, h.dropped(c, "rate_limited"), "%q: the 429'd envelope", c)
		} else {
			assert.Zero(t, h.droppedAll(c), "%q flows", c)
		}
	}
	assert.Equal(t, h.localDrops(), h.sentry.discards(), "client reports equal the local drops")
}

// allLimited: the gauge shows an all-category limit for project 1.
func (h *harness) allLimited() bool {
	return h.limitRemaining("all") > 0
}

// TestScenarioTraceMetricByteQuota is issue 40's run: Relay answers the first
// trace_metric envelope with 429 and a trace_metric_byte quota (as it does to
// an organization over its metrics byte quota), and a transaction and a
// delta counter are sent every second. Every transaction is stored, the
// metrics are dropped and counted in trace_metric and trace_metric_byte, and
// the client report reaches Sentry within the second that follows a drop.
func TestScenarioTraceMetricByteQuota(t *testing.T) {
	synctest.Test(t, testScenarioTraceMetricByteQuota)
}

func testScenarioTraceMetricByteQuota(t *testing.T) {
	h := newHarness(t, nil)
	q := &quota{itemType: envelope.ItemTypeTraceMetric, headers: map[string]string{
		"X-Sentry-Rate-Limits": "60:trace_metric_byte:organization:quota_exceeded",
	}}
	h.sentry.setRespond(q.respond)
	start := time.Now()
	for i := range 7 {
		h.consumeMetrics(deltaCounter(start.Add(time.Duration(i) * time.Second)))
		h.consumeTraces(i, 1, false)
		time.Sleep(time.Second)
	}
	assert.Equal(t, 7, h.sentry.countType(envelope.ItemTypeTransaction), "every transaction, during the metrics' limit too")
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeTraceMetric), "only the 429'd one")
	assert.Equal(t, map[string]uint64{"ratelimit_backoff/trace_metric": 6, "ratelimit_backoff/trace_metric_byte": uint64(h.dropped("trace_metric_byte", "ratelimit_backoff"))},
		h.sentry.discards(), "reported by the transaction sent just after each drop")
	assert.Positive(t, h.dropped("trace_metric_byte", "ratelimit_backoff"))
	assert.Positive(t, h.dropped("trace_metric_byte", "rate_limited"))
	assert.EqualValues(t, 1, h.dropped("trace_metric", "rate_limited"))
	h.shutdown()
	assert.Zero(t, h.droppedAll("transaction"))
	assert.Equal(t, h.localDrops(), h.sentry.discards())
}

// TestScenarioReportUnderOtherLimit: with nothing else to ride on, the
// client report of metrics dropped under a trace_metric_byte limit goes out
// on its own at the report interval (30 s), inside the limit's 60 s.
func TestScenarioReportUnderOtherLimit(t *testing.T) {
	synctest.Test(t, testScenarioReportUnderOtherLimit)
}

func testScenarioReportUnderOtherLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Interval = 30 * time.Second }) // the default
	q := &quota{itemType: envelope.ItemTypeTraceMetric, headers: map[string]string{
		"X-Sentry-Rate-Limits": "60:trace_metric_byte:organization:quota_exceeded",
	}}
	h.sentry.setRespond(q.respond)
	start := time.Now()
	for i := range 35 {
		h.consumeMetrics(deltaCounter(start.Add(time.Duration(i) * time.Second)))
		time.Sleep(time.Second)
	}
	var reports []time.Duration
	for _, r := range h.sentry.envelopes() {
		if len(r.dataTypes()) == 0 {
			reports = append(reports, r.at.Sub(start))
		}
	}
	assert.Equal(t, []time.Duration{30 * time.Second}, reports, "one standalone report, at the first tick")
	h.shutdown()
	assert.EqualValues(t, 34, h.dropped("trace_metric", "ratelimit_backoff"))
	assert.Equal(t, h.localDrops(), h.sentry.discards())
}

// TestScenarioUnknownCategory429: a 429 whose X-Sentry-Rate-Limits names
// only a category this exporter does not know (one Relay added later)
// limits the refused envelope's own categories for the header's time, not
// every category: the transactions stop, errors, logs and metrics flow,
// and the client report goes out on the next envelope.
func TestScenarioUnknownCategory429(t *testing.T) { synctest.Test(t, testScenarioUnknownCategory429) }

func testScenarioUnknownCategory429(t *testing.T) {
	h := newHarness(t, noDedupe)
	q := &quota{itemType: envelope.ItemTypeTransaction, headers: map[string]string{
		"X-Sentry-Rate-Limits": "20:transaction_v3:organization:quota_exceeded", "Retry-After": "60",
	}}
	h.sentry.setRespond(q.respond)
	start := time.Now()
	for i := range 5 {
		h.consumeRound(i, start)
		time.Sleep(time.Second)
	}
	remaining := h.limitRemaining("transaction")
	assert.InDelta(t, 20-5, remaining, 0.001, "the header's 20 s, not Retry-After's 60 s")
	assert.False(t, h.allLimited())
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeTransaction))
	assert.Equal(t, 5, h.sentry.countType(envelope.ItemTypeEvent))
	assert.Equal(t, 5, h.sentry.countType(envelope.ItemTypeLog))
	assert.Equal(t, 5, h.sentry.countType(envelope.ItemTypeTraceMetric))
	assert.Equal(t, map[string]uint64{"ratelimit_backoff/transaction": 4, "ratelimit_backoff/span": 12}, h.sentry.discards())
	assert.Equal(t, h.localDrops(), h.sentry.discards())
}

// deltaCounter is one delta counter point (of 5) at at, as a service
// exporting delta temporality sends it.
func deltaCounter(at time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "checkout")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("orders.placed")
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	p := s.DataPoints().AppendEmpty()
	p.SetStartTimestamp(pcommon.NewTimestampFromTime(at.Add(-time.Second)))
	p.SetTimestamp(pcommon.NewTimestampFromTime(at))
	p.SetIntValue(5)
	p.Attributes().PutStr("region", "eu")
	return md
}

// TestScenarioBare429StillAll: a 429 with no header at all still limits
// every category for 60 s, as the SDKs' spec says (TestScenarioBare429 has
// the details); a 429 to a trace_metric envelope so stops transactions too.
func TestScenarioBare429StillAll(t *testing.T) { synctest.Test(t, testScenarioBare429StillAll) }

func testScenarioBare429StillAll(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests}))
	start := time.Now()
	h.consumeMetrics(deltaCounter(start))
	h.consumeTraces(0, 1, false)
	assert.Zero(t, h.sentry.countType(envelope.ItemTypeTransaction))
	assert.InDelta(t, 60, h.limitRemaining("all"), 0.001)
	h.shutdown()
}

// TestScenarioTraceMetricByteOn200: a trace_metric_byte limit Sentry
// announces on a 200 (no refusal to fall back on) stops the metrics, and
// only them: the exporter knows the category.
func TestScenarioTraceMetricByteOn200(t *testing.T) {
	synctest.Test(t, testScenarioTraceMetricByteOn200)
}

func testScenarioTraceMetricByteOn200(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusOK, headers: map[string]string{"X-Sentry-Rate-Limits": "30:trace_metric_byte:organization"}}))
	start := time.Now()
	h.consumeMetrics(deltaCounter(start)) // stored, and announces the limit
	h.consumeMetrics(deltaCounter(start.Add(time.Second)))
	h.consumeTraces(0, 1, false)
	h.shutdown()
	assert.EqualValues(t, 1, h.sent("trace_metric"))
	assert.Positive(t, h.sent("trace_metric_byte"))
	assert.EqualValues(t, 1, h.dropped("trace_metric", "ratelimit_backoff"))
	assert.Positive(t, h.dropped("trace_metric_byte", "ratelimit_backoff"))
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeTransaction), "other categories flow")
	assert.Equal(t, h.localDrops(), h.sentry.discards())
}
