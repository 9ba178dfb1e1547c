package tracemetric

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// relaySize is Relay's canonical size of a decoded trace metric
// (relay-server processing/trace_metrics/utils.rs calculate_size, with
// relay-event-normalization eap/size.rs): the name's bytes, 8 for the value,
// and per attribute its key's bytes and its value's.
func relaySize(m map[string]any) int {
	n := len(m["name"].(string)) + 8
	attrs, _ := m["attributes"].(map[string]any)
	for k, a := range attrs {
		n += len(k) + relayValueSize(a.(map[string]any)["value"])
	}
	return n
}

func relayValueSize(v any) int {
	switch v := v.(type) {
	case bool:
		return 1
	case float64:
		return 8
	case string:
		return len(v)
	case []any:
		n := 0
		for _, e := range v {
			n += relayValueSize(e)
		}
		return n
	}
	return 0
}

// fitRow is one metric for TestItemsFitSentryIO: what the batch adds (and
// the resource, if set), how many items come out, what their attributes
// must show, and how many are invalid.
type fitRow struct {
	name     string
	add      func(ms pmetric.MetricSlice)
	resource func(attrs pcommon.Map)
	items    int
	check    func(t *testing.T, attrs map[string]any)
	invalid  int64
}

var fitRows = []fitRow{
	{name: "small: as written", add: func(ms pmetric.MetricSlice) {
		gauge(ms, "queue.depth", "", t0, 3).Attributes().PutStr("queue", "orders")
	}, items: 1, check: func(t *testing.T, attrs map[string]any) {
		assert.Equal(t, "orders", value(attrs, "queue"))
		assert.NotContains(t, attrs, droppedKey)
	}},
	{name: "one huge attribute value: truncated", add: func(ms pmetric.MetricSlice) {
		dp := gauge(ms, "queue.depth", "", t0, 3)
		dp.Attributes().PutStr("queue", "orders")
		dp.Attributes().PutStr("db.query.text", strings.Repeat("SELECT 1; ", 1000))
	}, items: 1, check: func(t *testing.T, attrs map[string]any) {
		assert.Equal(t, "orders", value(attrs, "queue"))
		q := value(attrs, "db.query.text").(string)
		assert.True(t, strings.HasPrefix(q, "SELECT 1; ") && strings.HasSuffix(q, truncatedMark), q)
		assert.Less(t, len(q), 300)
	}},
	{name: "huge selected resource attribute: truncated", add: func(ms pmetric.MetricSlice) {
		gauge(ms, "queue.depth", "", t0, 3)
	}, resource: func(attrs pcommon.Map) {
		attrs.PutStr("service.name", strings.Repeat("checkout", 500))
	}, items: 1, check: func(t *testing.T, attrs map[string]any) {
		assert.True(t, strings.HasSuffix(value(attrs, "service.name").(string), truncatedMark))
	}},
	{name: "many attributes: dropped and counted", add: func(ms pmetric.MetricSlice) {
		dp := gauge(ms, "queue.depth", "", t0, 3)
		for i := range 200 {
			dp.Attributes().PutInt("attribute.number."+strings.Repeat("x", i%7)+itoa(i), int64(i))
		}
	}, items: 1, check: func(t *testing.T, attrs map[string]any) {
		kept := len(attrs) - len(sdkDefaults) - 1 // the point's and service.name, less the count
		assert.Equal(t, float64(200+1-kept), value(attrs, droppedKey), "the count says how many were dropped")
		assert.Equal(t, 8, kept, "the second cut's cap")
	}},
	{name: "an array of many numbers: cut (Relay counts 8 bytes each)", add: func(ms pmetric.MetricSlice) {
		sl := gauge(ms, "queue.depth", "", t0, 3).Attributes().PutEmptySlice("shards")
		for i := range 400 {
			sl.AppendEmpty().SetInt(int64(i % 10))
		}
	}, items: 1, check: func(t *testing.T, attrs map[string]any) {
		assert.Len(t, value(attrs, "shards"), 16)
	}},
	{name: "summary: quantile kept under cut", add: func(ms pmetric.MetricSlice) {
		m := ms.AppendEmpty()
		m.SetName("latency")
		dp := m.SetEmptySummary().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.Timestamp(t0 - sec))
		dp.SetTimestamp(pcommon.Timestamp(t0))
		dp.Attributes().PutStr("route", strings.Repeat("/cart", 1000))
		dp.SetCount(3)
		dp.SetSum(30)
		q := dp.QuantileValues().AppendEmpty()
		q.SetQuantile(0.99)
		q.SetValue(12)
	}, items: 3, check: func(t *testing.T, attrs map[string]any) {
		assert.True(t, strings.HasSuffix(value(attrs, "route").(string), truncatedMark))
		if _, ok := attrs["quantile"]; ok { // not on the count and the sum
			assert.Equal(t, 0.99, value(attrs, "quantile"))
		}
	}},
	{name: "a name over 2 KiB: invalid (Relay never cuts a name)", add: func(ms pmetric.MetricSlice) {
		gauge(ms, strings.Repeat("n", 3000), "", t0, 3)
	}, invalid: 1},
}

var sdkDefaults = []string{"sentry.environment", "sentry.release", "sentry.sdk.name", "sentry.sdk.version", "server.address"}

// TestItemsFitSentryIO: a metric over sentry.io's 2 KiB is cut as a log
// over its budget is (values truncated, attributes dropped and counted),
// keeping its name, value, unit, ids, the SDK's defaults and a summary's
// quantile; one that cannot fit (its name alone is over) is invalid. Every
// item is within MaxItemBytes both in JSON bytes and in Relay's size.
func TestItemsFitSentryIO(t *testing.T) {
	for _, tt := range fitRows {
		t.Run(tt.name, func(t *testing.T) {
			md := batch(tt.add)
			if tt.resource != nil {
				tt.resource(md.ResourceMetrics().At(0).Resource().Attributes())
			}
			res := newTranslator().Metrics(md, NewStreams(1<<20, started), t0, Want{Items: true})
			require.Len(t, res.Items, tt.items)
			assert.Equal(t, tt.invalid, res.Invalid)
			for i, m := range decode(t, res.Items) {
				assert.LessOrEqual(t, len(res.Items[i]), MaxItemBytes, "JSON bytes")
				assert.LessOrEqual(t, relaySize(m), MaxItemBytes, "Relay's canonical size")
				attrs := m["attributes"].(map[string]any)
				for _, k := range sdkDefaults {
					assert.Contains(t, attrs, k)
				}
				assert.NotNil(t, m["value"])
				assert.NotEmpty(t, m["trace_id"])
				assert.NotEmpty(t, m["name"])
				tt.check(t, attrs)
			}
		})
	}
}

func value(attrs map[string]any, k string) any {
	a, _ := attrs[k].(map[string]any)
	return a["value"]
}

func itoa(i int) string {
	return string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}

// TestDefaultsTooLargeIsInvalid: the SDK's defaults are never cut, so a
// release over 2 KiB leaves nothing that fits.
func TestDefaultsTooLargeIsInvalid(t *testing.T) {
	tr := New(Options{SDKName: "sentry.otelcol.exporter", SDKVersion: "0.1.0", Release: strings.Repeat("r", 2100)})
	res := tr.Metrics(batch(func(ms pmetric.MetricSlice) { gauge(ms, "x", "", t0, 1) }), NewStreams(1<<20, started), t0, Want{Items: true})
	assert.Empty(t, res.Items)
	assert.Equal(t, int64(1), res.Invalid)
}
