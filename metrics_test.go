package sentryexporter

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// makeMetrics is one push of a service's metrics as the OTel SDK exports
// them at its defaults (cumulative): a gauge, a counter and a histogram,
// each with n points (attribute route=/r<i>). The counter's and histogram's
// streams start at start; at is the export time.
func makeMetrics(n int, start, at time.Time, value int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "checkout")
	rm.Resource().Attributes().PutStr("host.name", "checkout-7d9f")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName("cart.size")
	gs := g.SetEmptyGauge()
	c := ms.AppendEmpty()
	c.SetName("http.server.requests")
	cs := c.SetEmptySum()
	cs.SetIsMonotonic(true)
	cs.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	h := ms.AppendEmpty()
	h.SetName("http.server.request.duration")
	h.SetUnit("s")
	hs := h.SetEmptyHistogram()
	hs.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range n {
		route := "/r" + string(rune('a'+i))
		gp := gs.DataPoints().AppendEmpty()
		gp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		gp.SetIntValue(value)
		gp.Attributes().PutStr("route", route)
		cp := cs.DataPoints().AppendEmpty()
		cp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		cp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		cp.SetIntValue(value)
		cp.Attributes().PutStr("route", route)
		hp := hs.DataPoints().AppendEmpty()
		hp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		hp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		hp.SetCount(uint64(value))
		hp.SetSum(float64(value) * 0.25)
		hp.Attributes().PutStr("route", route)
	}
	return md
}

func (h *harness) consumeMetrics(md pmetric.Metrics) {
	require.NoError(h.t, h.metrics.ConsumeMetrics(context.Background(), md))
}

// metricsOf are the trace metrics the fake Sentry stored, decoded.
func (f *fakeSentry) metricsOf(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeTraceMetric {
				continue
			}
			var c struct{ Items []map[string]any }
			require.NoError(t, json.Unmarshal(it.Payload, &c))
			out = append(out, c.Items...)
		}
	}
	return out
}

// TestMetricsReachSentry: a service's cumulative metrics, exported twice,
// become valid trace_metric containers; each point is stored or counted in
// trace_metric, in the unit docs/mapping.md defines.
func TestMetricsReachSentry(t *testing.T) { synctest.Test(t, testMetricsReachSentry) }

func testMetricsReachSentry(t *testing.T) {
	h := newHarness(t, nil)
	start := time.Now().Add(time.Second) // the service started after the collector
	h.consumeMetrics(makeMetrics(3, start, start.Add(10*time.Second), 5))
	h.consumeMetrics(makeMetrics(3, start, start.Add(20*time.Second), 8))
	h.shutdown()
	h.sentry.requireNoInvalid()

	// per push: 3 gauges, 3 counters, 3 histograms × (count, sum) = 12 items
	assert.EqualValues(t, 24, h.sent("trace_metric"))
	assert.Zero(t, h.droppedAll("trace_metric"))
	got := h.sentry.metricsOf(t)
	require.Len(t, got, 24)
	byName := map[string][]float64{}
	for _, m := range got {
		byName[m["name"].(string)] = append(byName[m["name"].(string)], m["value"].(float64))
	}
	assert.Equal(t, []float64{5, 5, 5, 3, 3, 3}, byName["http.server.requests"], "the whole count, then the increase")
	assert.Equal(t, []float64{5, 5, 5, 8, 8, 8}, byName["cart.size"])
	assert.Equal(t, []float64{1.25, 1.25, 1.25, 0.75, 0.75, 0.75}, byName["http.server.request.duration.sum"])
	assert.Equal(t, "second", got[len(got)-1]["unit"])
}

// TestMetricsWithoutBaselineAreCounted: a stream that began before the
// exporter started has nothing to subtract at first: counted no_baseline,
// never sent as a wrong value, and its next point is a delta.
func TestMetricsWithoutBaselineAreCounted(t *testing.T) {
	synctest.Test(t, testMetricsWithoutBaselineAreCounted)
}

func testMetricsWithoutBaselineAreCounted(t *testing.T) {
	h := newHarness(t, nil)
	start := time.Now().Add(-time.Hour)
	h.consumeMetrics(makeMetrics(2, start, time.Now(), 100))
	h.consumeMetrics(makeMetrics(2, start, time.Now().Add(10*time.Second), 130))
	h.shutdown()
	h.sentry.requireNoInvalid()
	// first push: 2 gauges sent; 2 counters + 2 × (count, sum) without a baseline
	assert.EqualValues(t, 6, h.dropped("trace_metric", "no_baseline"))
	assert.EqualValues(t, 2+8, h.sent("trace_metric"))
	assert.Empty(t, h.sentry.discards(), "no_baseline is not a client report reason")
}

// TestIdleCountersCounted: a service whose counters and histograms did not
// move since the last collection (the OTel SDK exports every cumulative
// stream each time) sends its gauges again and nothing else; each item not
// sent is counted unchanged, and no client report claims it was lost.
func TestIdleCountersCounted(t *testing.T) { synctest.Test(t, testIdleCountersCounted) }

func testIdleCountersCounted(t *testing.T) {
	h := newHarness(t, nil)
	start := time.Now().Add(time.Second)
	for i := range 3 {
		h.consumeMetrics(makeMetrics(2, start, start.Add(time.Duration(i+1)*10*time.Second), 100))
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	// per push 2 gauges, 2 counters, 2 × (count, sum): the first push sends 8, each idle one 2
	assert.EqualValues(t, 8+2+2, h.sent("trace_metric"))
	assert.EqualValues(t, 2*6, h.dropped("trace_metric", "unchanged"))
	assert.EqualValues(t, 3*8, h.sent("trace_metric")+h.droppedAll("trace_metric"), "points in × items per point = sent + dropped")
	assert.Len(t, h.sentry.metricsOf(t), 12)
	assert.Empty(t, h.sentry.discards(), "unchanged is not a client report reason")
}

// TestScenarioTraceMetricLimit: a 429 limiting trace_metric drops the
// envelope it answered (rate_limited) and every later metric before it is
// serialized (ratelimit_backoff), each counted in trace_metric exactly;
// logs go on; the client report carries the local drops.
func TestScenarioTraceMetricLimit(t *testing.T) {
	for _, tt := range []struct{ name, limit string }{
		{"trace_metric", "60:trace_metric:organization:usage_exceeded"},
		{"all categories", "60::organization:usage_exceeded"},
	} {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			h := newHarness(t, nil)
			q := &quota{itemType: envelope.ItemTypeTraceMetric, cap: 1, refill: time.Minute, headers: map[string]string{
				"X-Sentry-Rate-Limits": tt.limit, "Retry-After": "60",
			}}
			h.sentry.setRespond(q.respond)
			start := time.Now().Add(time.Second)
			for i := range 4 {
				h.consumeMetrics(makeMetrics(1, start, start.Add(time.Duration(i+1)*10*time.Second), int64(10*(i+1))))
				time.Sleep(time.Second)
			}
			time.Sleep(time.Minute) // the limit is over: the next delta is exact
			h.consumeMetrics(makeMetrics(1, start, start.Add(50*time.Second), 50))
			h.shutdown()
			h.sentry.requireNoInvalid()

			assert.EqualValues(t, 4+4, h.sent("trace_metric"), "the first push and the one after the limit")
			assert.EqualValues(t, 4, h.dropped("trace_metric", "rate_limited"), "the envelope answered 429")
			assert.EqualValues(t, 8, h.dropped("trace_metric", "ratelimit_backoff"), "two pushes, before serializing")
			assert.Equal(t, uint64(8), h.sentry.discards()["ratelimit_backoff/trace_metric"])
			last := h.sentry.metricsOf(t)
			for _, m := range last[len(last)-4:] {
				if m["name"] == "http.server.requests" {
					assert.InDelta(t, 10.0, m["value"], 0, "50 - 40: the streams advanced while limited")
				}
			}
		}))
	}
}

// TestMetricsRouted: each resource's points go to its service's project;
// those of a service with no project are counted unroutable, in the same
// unit (a histogram point's count and sum are two).
func TestMetricsRouted(t *testing.T) { synctest.Test(t, testMetricsRouted) }

func testMetricsRouted(t *testing.T) {
	sentry := newMemSentry(t)
	h := newHarnessWith(t, sentry, func(c *Config) {
		c.DSN = ""
		c.Routing.DSNs = map[string]configopaque.String{
			"checkout": configopaque.String(sentry.dsnFor("2")),
			"cart":     configopaque.String(sentry.dsnFor("3")),
		}
	})
	start := time.Now().Add(time.Second)
	md := pmetric.NewMetrics()
	for _, svc := range []string{"checkout", "cart", "unknown"} {
		one := makeMetrics(2, start, start.Add(10*time.Second), 4)
		one.ResourceMetrics().At(0).Resource().Attributes().PutStr("service.name", svc)
		one.ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	}
	h.consumeMetrics(md)
	h.shutdown()
	sentry.requireNoInvalid()
	for _, p := range []string{"2", "3"} {
		assert.EqualValues(t, 8, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": p, "category": "trace_metric"}))
	}
	assert.EqualValues(t, 8, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "unroutable", "category": "trace_metric", "reason": "unroutable"}))
}
