package tracemetric

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestIdleCounterNotSent: a cumulative counter seen at 100, then 100, then
// 100 sends nothing after its baseline (an SDK sends no count for a counter
// nobody incremented), and sends the increase once it moves again; each
// point it does not send is counted Unchanged, so the accounting holds.
func TestIdleCounterNotSent(t *testing.T) {
	tr, st := newTranslator(), NewStreams(1<<20, started)
	start := t0 - sec // began after the exporter: its first point counts whole
	push := func(ts uint64, v int64) Result {
		return tr.Metrics(batch(func(ms pmetric.MetricSlice) { sum(ms, "requests", true, cumulative, start, ts, v) }), st, t0, Want{Items: true})
	}
	assert.Equal(t, []brief{{"counter", "requests", 100, ""}}, briefs(decode(t, push(t0, 100).Items)))
	for i := uint64(1); i <= 2; i++ {
		r := push(t0+i*sec, 100)
		assert.Empty(t, r.Items, "collection %d: idle", i)
		assert.Equal(t, int64(1), r.Unchanged, "collection %d", i)
	}
	assert.Equal(t, []brief{{"counter", "requests", 5, ""}}, briefs(decode(t, push(t0+3*sec, 105).Items)), "moving again: the increase")
}

// TestUnchangedByType: the decision for each OTLP point that carries no
// change. Counters of 0 (a delta of 0, a sum or histogram that did not
// move, a summary's count and sum) are not sent; gauges are, every time,
// because a level observed again is information (a window's avg, min and
// max need it; OTel SDKs and Sentry's meters send a gauge for each
// observation too).
func TestUnchangedByType(t *testing.T) {
	type want struct {
		items     []brief
		unchanged int64
	}
	rows := []struct {
		name string
		add  func(ms pmetric.MetricSlice, ts uint64)
		// second is what the second of two equal collections becomes
		second want
	}{
		{
			"gauge: sent again", func(ms pmetric.MetricSlice, ts uint64) { gauge(ms, "queue", "", ts, 5) },
			want{items: []brief{{"gauge", "queue", 5, ""}}},
		},
		{"non-monotonic cumulative sum (a level): sent again", func(ms pmetric.MetricSlice, ts uint64) {
			sum(ms, "conns", false, cumulative, t0-sec, ts, 7)
		}, want{items: []brief{{"gauge", "conns", 7, ""}}}},
		{
			"monotonic delta of 0", func(ms pmetric.MetricSlice, ts uint64) { sum(ms, "hits", true, delta, ts-sec, ts, 0) },
			want{unchanged: 1},
		},
		{"non-monotonic delta of 0 (no net change)", func(ms pmetric.MetricSlice, ts uint64) {
			sum(ms, "stock", false, delta, ts-sec, ts, 0)
		}, want{unchanged: 1}},
		{"cumulative histogram that did not move: count and sum", func(ms pmetric.MetricSlice, ts uint64) {
			hist(ms, "latency", cumulative, t0-sec, ts, 4, 8)
		}, want{unchanged: 2}},
		{"delta histogram of no observation: count, sum, min and max", func(ms pmetric.MetricSlice, ts uint64) {
			hist(ms, "latency", delta, ts-sec, ts, 0, 0)
		}, want{unchanged: 4}},
		{"summary that did not move: count and sum; its quantile is a level, sent", func(ms pmetric.MetricSlice, ts uint64) {
			dp := ms.AppendEmpty()
			dp.SetName("rtt")
			p := dp.SetEmptySummary().DataPoints().AppendEmpty()
			p.SetStartTimestamp(pcommon.Timestamp(t0 - sec))
			p.SetTimestamp(pcommon.Timestamp(ts))
			p.SetCount(3)
			p.SetSum(30)
			q := p.QuantileValues().AppendEmpty()
			q.SetQuantile(0.5)
			q.SetValue(9)
		}, want{items: []brief{{"gauge", "rtt.quantile", 9, ""}}, unchanged: 2}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			tr, st := newTranslator(), NewStreams(1<<20, started)
			tr.Metrics(batch(func(ms pmetric.MetricSlice) { row.add(ms, t0) }), st, t0, Want{Items: true})
			r := tr.Metrics(batch(func(ms pmetric.MetricSlice) { row.add(ms, t0+sec) }), st, t0, Want{Items: true})
			assert.Equal(t, row.second.items, nilIfEmpty(briefs(decode(t, r.Items))))
			assert.Equal(t, row.second.unchanged, r.Unchanged)
			assert.Zero(t, r.Skipped+r.Invalid+r.NoBaseline)
		})
	}
}

// TestUnchangedWhileLimited: a counter of 0 while trace_metric is rate
// limited is counted Unchanged, not Skipped: nothing was lost to the limit,
// so no client report claims it was.
func TestUnchangedWhileLimited(t *testing.T) {
	r := newTranslator().Metrics(batch(func(ms pmetric.MetricSlice) {
		sum(ms, "hits", true, delta, t0-sec, t0, 0)
		sum(ms, "misses", true, delta, t0-sec, t0, 2)
	}), NewStreams(1<<20, started), t0, Want{})
	assert.Equal(t, int64(1), r.Unchanged)
	assert.Equal(t, int64(1), r.Skipped)
}

func nilIfEmpty(b []brief) []brief {
	if len(b) == 0 {
		return nil
	}
	return b
}
