package tracemetric

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

var (
	t0      = uint64(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC).UnixNano())
	started = t0 - uint64(time.Hour) // the exporter's start
	sec     = uint64(time.Second)
)

func newTranslator() *Translator {
	return New(Options{SDKName: "sentry.otelcol.exporter", SDKVersion: "0.1.0"})
}

// batch is one resource (checkout, prod, 1.2.3, host-1) with one scope;
// add appends its metrics.
func batch(add func(ms pmetric.MetricSlice)) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	ra := rm.Resource().Attributes()
	ra.PutStr("service.name", "checkout")
	ra.PutStr("deployment.environment.name", "prod")
	ra.PutStr("service.version", "1.2.3")
	ra.PutStr("host.name", "host-1")
	ra.PutStr("process.command_line", "checkout --token=secret")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("checkout.meter")
	add(sm.Metrics())
	return md
}

func decode(t *testing.T, items [][]byte) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(items))
	for i, it := range items {
		require.NoError(t, json.Unmarshal(it, &out[i]), string(it))
	}
	return out
}

// brief is an item's type, name, value and unit, as a table row reads it.
type brief struct {
	Type, Name string
	Value      float64
	Unit       string
}

func briefs(items []map[string]any) []brief {
	out := make([]brief, len(items))
	for i, m := range items {
		u, _ := m["unit"].(string)
		out[i] = brief{m["type"].(string), m["name"].(string), m["value"].(float64), u}
	}
	return out
}

func gauge(ms pmetric.MetricSlice, name, unit string, ts uint64, v float64) pmetric.NumberDataPoint {
	m := ms.AppendEmpty()
	m.SetName(name)
	m.SetUnit(unit)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.Timestamp(ts))
	dp.SetDoubleValue(v)
	return dp
}

func sum(ms pmetric.MetricSlice, name string, monotonic bool, tm pmetric.AggregationTemporality, start, ts uint64, v int64) {
	m := ms.AppendEmpty()
	m.SetName(name)
	s := m.SetEmptySum()
	s.SetIsMonotonic(monotonic)
	s.SetAggregationTemporality(tm)
	dp := s.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(pcommon.Timestamp(start))
	dp.SetTimestamp(pcommon.Timestamp(ts))
	dp.SetIntValue(v)
}

func hist(ms pmetric.MetricSlice, name string, tm pmetric.AggregationTemporality, start, ts, count uint64, total float64) {
	m := ms.AppendEmpty()
	m.SetName(name)
	m.SetUnit("ms")
	h := m.SetEmptyHistogram()
	h.SetAggregationTemporality(tm)
	dp := h.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(pcommon.Timestamp(start))
	dp.SetTimestamp(pcommon.Timestamp(ts))
	dp.SetCount(count)
	dp.SetSum(total)
	dp.SetMin(1.5)
	dp.SetMax(40)
	dp.ExplicitBounds().FromRaw([]float64{5, 10})
	dp.BucketCounts().FromRaw([]uint64{count / 2, count - count/2, 0})
}

const (
	delta      = pmetric.AggregationTemporalityDelta
	cumulative = pmetric.AggregationTemporalityCumulative
)

// TestEveryMetricType: what each OTLP metric type becomes, for a stream
// seen for the first time (started after the exporter) and then again.
func TestEveryMetricType(t *testing.T) {
	for _, tt := range metricTypeCases {
		t.Run(tt.name, func(t *testing.T) {
			tr, st := newTranslator(), NewStreams(1<<20, started)
			first := tr.Metrics(batch(func(ms pmetric.MetricSlice) { tt.add(ms, t0, 10) }), st, t0, Want{Items: true})
			assert.Equal(t, tt.first, briefs(decode(t, first.Items)))
			next := tr.Metrics(batch(func(ms pmetric.MetricSlice) { tt.add(ms, t0+10*sec, 25) }), st, t0, Want{Items: true})
			assert.Equal(t, tt.nxt, briefs(decode(t, next.Items)))
			assert.Zero(t, first.NoBaseline+first.Invalid+next.NoBaseline+next.Invalid)
		})
	}
}

// newStart is the start of a stream that began after the exporter: its
// first point is all new.
var newStart = started + sec

// metricTypeCase adds one metric of a type, with value v at ts, and says
// what its first point (v 10) and its next (v 25) become.
type metricTypeCase struct {
	name       string
	add        func(ms pmetric.MetricSlice, ts uint64, v int64)
	first, nxt []brief
}

var metricTypeCases = []metricTypeCase{
	{
		"gauge", func(ms pmetric.MetricSlice, ts uint64, v int64) { gauge(ms, "queue.depth", "{job}", ts, float64(v)) },
		[]brief{{"gauge", "queue.depth", 10, ""}},
		[]brief{{"gauge", "queue.depth", 25, ""}},
	},
	{
		"monotonic delta sum", func(ms pmetric.MetricSlice, ts uint64, v int64) { sum(ms, "requests", true, delta, ts-sec, ts, v) },
		[]brief{{"counter", "requests", 10, ""}},
		[]brief{{"counter", "requests", 25, ""}},
	},
	{
		"monotonic cumulative sum", func(ms pmetric.MetricSlice, ts uint64, v int64) {
			sum(ms, "requests", true, cumulative, newStart, ts, v)
		},
		[]brief{{"counter", "requests", 10, ""}},
		[]brief{{"counter", "requests", 15, ""}},
	},
	{
		"non-monotonic cumulative sum", func(ms pmetric.MetricSlice, ts uint64, v int64) {
			sum(ms, "pool.used", false, cumulative, newStart, ts, v)
		},
		[]brief{{"gauge", "pool.used", 10, ""}},
		[]brief{{"gauge", "pool.used", 25, ""}},
	},
	{
		"non-monotonic delta sum", func(ms pmetric.MetricSlice, ts uint64, v int64) { sum(ms, "pool.used", false, delta, ts-sec, ts, -v) },
		[]brief{{"counter", "pool.used", -10, ""}},
		[]brief{{"counter", "pool.used", -25, ""}},
	},
	{
		"delta histogram", func(ms pmetric.MetricSlice, ts uint64, v int64) {
			hist(ms, "http.duration", delta, ts-sec, ts, uint64(v), float64(v)*2)
		},
		[]brief{{"counter", "http.duration.count", 10, ""}, {"counter", "http.duration.sum", 20, "millisecond"}, {"gauge", "http.duration.min", 1.5, "millisecond"}, {"gauge", "http.duration.max", 40, "millisecond"}},
		[]brief{{"counter", "http.duration.count", 25, ""}, {"counter", "http.duration.sum", 50, "millisecond"}, {"gauge", "http.duration.min", 1.5, "millisecond"}, {"gauge", "http.duration.max", 40, "millisecond"}},
	},
	{
		"cumulative histogram", func(ms pmetric.MetricSlice, ts uint64, v int64) {
			hist(ms, "http.duration", cumulative, newStart, ts, uint64(v), float64(v)*2)
		},
		[]brief{{"counter", "http.duration.count", 10, ""}, {"counter", "http.duration.sum", 20, "millisecond"}},
		[]brief{{"counter", "http.duration.count", 15, ""}, {"counter", "http.duration.sum", 30, "millisecond"}},
	},
	{
		"cumulative exponential histogram", cumulativeExpHistogram,
		[]brief{{"counter", "rpc.duration.count", 10, ""}, {"counter", "rpc.duration.sum", 2.5, "second"}},
		[]brief{{"counter", "rpc.duration.count", 15, ""}, {"counter", "rpc.duration.sum", 3.75, "second"}},
	},
	{
		"summary", gcPauseSummary,
		[]brief{{"counter", "gc.pause.count", 10, ""}, {"counter", "gc.pause.sum", 1000, "nanosecond"}, {"gauge", "gc.pause.quantile", 70, "nanosecond"}},
		[]brief{{"counter", "gc.pause.count", 15, ""}, {"counter", "gc.pause.sum", 1500, "nanosecond"}, {"gauge", "gc.pause.quantile", 175, "nanosecond"}},
	},
}

// cumulativeExpHistogram adds rpc.duration, a cumulative exponential
// histogram in seconds of v points summing to v/4, started at newStart.
func cumulativeExpHistogram(ms pmetric.MetricSlice, ts uint64, v int64) {
	m := ms.AppendEmpty()
	m.SetName("rpc.duration")
	m.SetUnit("s")
	h := m.SetEmptyExponentialHistogram()
	h.SetAggregationTemporality(cumulative)
	dp := h.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(pcommon.Timestamp(newStart))
	dp.SetTimestamp(pcommon.Timestamp(ts))
	dp.SetCount(uint64(v))
	dp.SetSum(float64(v) / 4)
	dp.SetScale(3)
	dp.Positive().BucketCounts().FromRaw([]uint64{uint64(v)})
}

// gcPauseSummary adds gc.pause, a summary in nanoseconds of v points
// summing to v*100 with a 0.99 quantile of v*7, started at newStart.
func gcPauseSummary(ms pmetric.MetricSlice, ts uint64, v int64) {
	m := ms.AppendEmpty()
	m.SetName("gc.pause")
	m.SetUnit("ns")
	dp := m.SetEmptySummary().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(pcommon.Timestamp(newStart))
	dp.SetTimestamp(pcommon.Timestamp(ts))
	dp.SetCount(uint64(v))
	dp.SetSum(float64(v) * 100)
	q := dp.QuantileValues().AppendEmpty()
	q.SetQuantile(0.99)
	q.SetValue(float64(v) * 7)
}

// TestItemFields: one item as sentry-go writes it: the fields, the trace of
// the exemplar, typed attributes with the SDK's defaults and the selected
// resource attributes (not the command line).
func TestItemFields(t *testing.T) {
	md := batch(func(ms pmetric.MetricSlice) {
		dp := gauge(ms, "memory.used", "By", t0+123456789, 2048)
		dp.Attributes().PutStr("pool", "heap")
		dp.Attributes().PutInt("generation", 2)
		dp.Attributes().PutBool("compacted", true)
		require.NoError(t, dp.Attributes().PutEmptySlice("zones").FromRaw([]any{"a", "b"}))
		ex := dp.Exemplars().AppendEmpty()
		ex.SetTraceID(pcommon.TraceID{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c})
		ex.SetSpanID(pcommon.SpanID{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74})
	})
	res := newTranslator().Metrics(md, NewStreams(1<<20, started), t0, Want{Items: true})
	require.Len(t, res.Items, 1)
	assert.JSONEq(t, `{
		"timestamp": 1796292000.123456, "trace_id": "5b8efff798038103d269b633813fc60c", "span_id": "eee19b7ec3c1b174",
		"type": "gauge", "name": "memory.used", "value": 2048.0, "unit": "byte",
		"attributes": {
			"pool": {"type": "string", "value": "heap"},
			"generation": {"type": "integer", "value": 2},
			"compacted": {"type": "boolean", "value": true},
			"zones": {"type": "array", "value": ["a", "b"]},
			"sentry.environment": {"type": "string", "value": "prod"},
			"sentry.release": {"type": "string", "value": "1.2.3"},
			"sentry.sdk.name": {"type": "string", "value": "sentry.otelcol.exporter"},
			"sentry.sdk.version": {"type": "string", "value": "0.1.0"},
			"server.address": {"type": "string", "value": "host-1"},
			"service.name": {"type": "string", "value": "checkout"}
		}}`, string(res.Items[0]))
}

// TestPointAttributesWin: a point attribute of the same key as a default or
// a resource attribute is written once, the point's.
func TestPointAttributesWin(t *testing.T) {
	md := batch(func(ms pmetric.MetricSlice) {
		dp := gauge(ms, "x", "", t0, 1)
		dp.Attributes().PutStr("service.name", "cart")
		dp.Attributes().PutStr("sentry.environment", "canary")
	})
	res := newTranslator().Metrics(md, NewStreams(1<<20, started), t0, Want{Items: true})
	attrs := decode(t, res.Items)[0]["attributes"].(map[string]any)
	assert.Equal(t, "cart", attrs["service.name"].(map[string]any)["value"])
	assert.Equal(t, "canary", attrs["sentry.environment"].(map[string]any)["value"])
	assert.Equal(t, "1.2.3", attrs["sentry.release"].(map[string]any)["value"])
}

// TestServerAddressOnce: the host is server.address, as Sentry's metrics
// spec and @sentry/core write it; a point's own server.address (an HTTP
// client metric's peer) wins, and a resource that carries server.address
// with every resource attribute selected does not write the key twice.
func TestServerAddressOnce(t *testing.T) {
	md := batch(func(ms pmetric.MetricSlice) {
		gauge(ms, "host", "", t0, 1)
		gauge(ms, "peer", "", t0, 2).Attributes().PutStr("server.address", "payments.internal")
	})
	md.ResourceMetrics().At(0).Resource().Attributes().PutStr("server.address", "10.0.0.7")
	tr := New(Options{SDKName: "sentry.otelcol.exporter", SDKVersion: "0.1.0", ResourceAttributes: []string{"*"}})
	res := tr.Metrics(md, NewStreams(1<<20, started), t0, Want{Items: true})
	require.Len(t, res.Items, 2)
	for i, want := range []string{"host-1", "payments.internal"} {
		assert.Equal(t, 1, strings.Count(string(res.Items[i]), `"server.address"`), string(res.Items[i]))
		attrs := decode(t, res.Items[i:i+1])[0]["attributes"].(map[string]any)
		assert.Equal(t, want, attrs["server.address"].(map[string]any)["value"])
		assert.NotContains(t, attrs, "sentry.server.address")
	}
}

// TestTraceIDWithoutExemplar: points with no exemplar carry their
// resource's one trace id, as an SDK's metrics carry its propagation
// context's when no span is active; another resource has another.
func TestTraceIDWithoutExemplar(t *testing.T) {
	tr := newTranslator()
	md := batch(func(ms pmetric.MetricSlice) {
		gauge(ms, "a", "", t0, 1)
		gauge(ms, "b", "", t0, 2)
	})
	other := pmetric.NewMetrics()
	md.ResourceMetrics().At(0).CopyTo(other.ResourceMetrics().AppendEmpty())
	other.ResourceMetrics().At(0).Resource().Attributes().PutStr("service.instance.id", "pod-2")
	items := decode(t, tr.Metrics(md, nil, t0, Want{Items: true}).Items)
	again := decode(t, tr.Metrics(md, nil, t0, Want{Items: true}).Items)
	elsewhere := decode(t, tr.Metrics(other, nil, t0, Want{Items: true}).Items)
	assert.Len(t, items[0]["trace_id"], 32)
	assert.Equal(t, items[0]["trace_id"], items[1]["trace_id"])
	assert.Equal(t, items[0]["trace_id"], again[0]["trace_id"])
	assert.NotEqual(t, items[0]["trace_id"], elsewhere[0]["trace_id"])
	assert.NotContains(t, items[0], "span_id")
}

// TestCumulativeBaseline: a cumulative stream's first point of unknown or
// earlier start has nothing to subtract (counted), a reset (new start)
// counts from zero, and a stale point is counted.
func TestCumulativeBaseline(t *testing.T) {
	tr, st := newTranslator(), NewStreams(1<<20, started)
	push := func(start, ts uint64, v int64) Result {
		return tr.Metrics(batch(func(ms pmetric.MetricSlice) { sum(ms, "requests", true, cumulative, start, ts, v) }), st, t0, Want{Items: true})
	}
	old := started - sec // began before the exporter: maybe sent before
	r := push(old, t0, 100)
	assert.Equal(t, Result{NoBaseline: 1, HeldDelta: StreamBytes}, r)
	assert.Equal(t, []brief{{"counter", "requests", 20, ""}}, briefs(decode(t, push(old, t0+sec, 120).Items)))
	assert.Equal(t, []brief{{"counter", "requests", 7, ""}}, briefs(decode(t, push(t0+2*sec, t0+3*sec, 7).Items)), "a new start: a reset")
	assert.Equal(t, Result{NoBaseline: 1}, push(t0+2*sec, t0+3*sec, 7), "the same point again: stale")
	assert.Equal(t, Result{NoBaseline: 1}, push(old, t0+4*sec, 500), "an older start than held: stale")
	assert.Equal(t, []brief{{"counter", "requests", 3, ""}}, briefs(decode(t, push(0, t0+5*sec, 3).Items)), "a fall without start times: a reset")
}

// TestEveryPointAccounted: over a batch of every type, items + skipped +
// invalid + no baseline + unchanged = the sum of PerPoint, wanted or not.
func TestEveryPointAccounted(t *testing.T) {
	md := batch(func(ms pmetric.MetricSlice) {
		gauge(ms, "g", "", t0, math.NaN())
		gauge(ms, "g2", "", t0, 3)
		sum(ms, "c", true, cumulative, started-sec, t0, 5)
		sum(ms, "u", true, pmetric.AggregationTemporalityUnspecified, 0, t0, 5)
		hist(ms, "h", delta, t0-sec, t0, 4, 8)
		hist(ms, "hc", cumulative, started-sec, t0, 4, 8)
		sum(ms, "idle", true, delta, t0-sec, t0, 0)
	})
	var perPoint int64
	for _, m := range md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().All() {
		for i := range pointsOf(m) {
			perPoint += PerPoint(m, i)
		}
	}
	tr := newTranslator()
	r := tr.Metrics(md, NewStreams(1<<20, started), t0, Want{Items: true})
	assert.Equal(t, perPoint, int64(len(r.Items))+r.Skipped+r.Invalid+r.NoBaseline+r.Unchanged)
	assert.Equal(t, int64(2), r.Invalid)
	assert.Equal(t, int64(3), r.NoBaseline)
	assert.Equal(t, int64(1), r.Unchanged)
	skipped := tr.Metrics(md, nil, t0, Want{})
	assert.Equal(t, perPoint-2, skipped.Skipped, "the unspecified temporality is invalid, the delta of 0 unchanged, either way")
}

// TestSkippedBytes: skipped items (trace_metric limited) are weighed for
// trace_metric_byte without being written: at firstPerItem before any item
// was written, then at the mean size of the items the last call wrote.
func TestSkippedBytes(t *testing.T) {
	md := batch(func(ms pmetric.MetricSlice) {
		gauge(ms, "g", "", t0, 1)
		gauge(ms, "g2", "", t0, 3)
		hist(ms, "h", delta, t0-sec, t0, 4, 8)
	})
	tr := newTranslator()
	first := tr.Metrics(md, nil, t0, Want{})
	require.Positive(t, first.Skipped)
	assert.Equal(t, first.Skipped*firstPerItem, first.SkippedBytes)
	assert.Empty(t, first.Items, "nothing written")

	written := tr.Metrics(md, NewStreams(1<<20, started), t0, Want{Items: true})
	var n int
	for _, it := range written.Items {
		n += len(it)
	}
	assert.Zero(t, written.SkippedBytes)
	mean := int64(n / len(written.Items))
	assert.Equal(t, first.Skipped*mean, tr.Metrics(md, nil, t0, Want{}).SkippedBytes)
}

func pointsOf(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	}
	return 0
}

// TestAttributesRenderedOncePerPoint: every item of a point (a histogram's
// four, a summary's count, sum and quantiles) carries the point's
// attributes, a clash resolved for each, and a point attribute named
// quantile is not written twice.
func TestAttributesRenderedOncePerPoint(t *testing.T) {
	md := batch(func(ms pmetric.MetricSlice) {
		hist(ms, "h", delta, t0-sec, t0, 4, 8)
		m := ms.AppendEmpty()
		m.SetName("s")
		dp := m.SetEmptySummary().DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.Timestamp(t0))
		dp.Attributes().PutStr("quantile", "mine")
		q := dp.QuantileValues().AppendEmpty()
		q.SetQuantile(0.5)
	})
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	ms.At(0).Histogram().DataPoints().At(0).Attributes().PutStr("service.name", "cart")
	res := newTranslator().Metrics(md, NewStreams(1<<20, started), t0, Want{Items: true})
	items := decode(t, res.Items)
	require.Len(t, items, 5, "4 of the histogram, the summary's quantile (its count and sum have no baseline)")
	for _, it := range items[:4] {
		attrs := it["attributes"].(map[string]any)
		assert.Equal(t, "cart", attrs["service.name"].(map[string]any)["value"], it["name"])
		assert.Equal(t, "prod", attrs["sentry.environment"].(map[string]any)["value"], it["name"])
	}
	assert.Equal(t, "mine", items[4]["attributes"].(map[string]any)["quantile"].(map[string]any)["value"])
	assert.Equal(t, 1, strings.Count(string(res.Items[4]), `"quantile"`), "one quantile key")
	assert.Equal(t, 1, strings.Count(string(res.Items[0]), `"service.name"`), "one service.name key")
}

// TestRelease: a result's buffer goes back once; a later call reuses it,
// and an empty result has nothing to give back.
func TestRelease(t *testing.T) {
	var empty Result
	empty.Release()
	tr := newTranslator()
	md := batch(func(ms pmetric.MetricSlice) { gauge(ms, "g", "", t0, 3) })
	r := tr.Metrics(md, nil, t0, Want{Items: true})
	require.Len(t, r.Items, 1)
	first := string(r.Items[0])
	r.Release()
	r.Release()
	again := tr.Metrics(md, nil, t0, Want{Items: true})
	assert.Equal(t, first, string(again.Items[0]))
}
