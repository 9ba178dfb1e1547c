package tracemetric

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// histogram is what a histogram or exponential histogram point says that
// Sentry can chart: how many values, their sum, least and greatest. Its
// buckets have no Sentry form: a trace metric carries one value, with no
// weight.
type histogram struct {
	count          uint64
	sum, min, max  float64
	hasSum         bool
	hasMin, hasMax bool
	start          uint64
}

// histogramPoint is what a histogram and an exponential histogram data
// point have in common.
type histogramPoint interface {
	StartTimestamp() pcommon.Timestamp
	Timestamp() pcommon.Timestamp
	Attributes() pcommon.Map
	Exemplars() pmetric.ExemplarSlice
	Count() uint64
	Sum() float64
	HasSum() bool
	Min() float64
	HasMin() bool
	Max() float64
	HasMax() bool
}

// histogramOf reads a histogram or exponential histogram data point.
func histogramOf[P histogramPoint](rc *resCtx, dp P, now uint64) (point, histogram) {
	p := pointOf(rc, dp.Timestamp(), dp.Attributes(), now)
	p.exemplars(dp.Exemplars())
	return p, histogram{
		count: dp.Count(), sum: dp.Sum(), hasSum: dp.HasSum(), min: dp.Min(), hasMin: dp.HasMin(),
		max: dp.Max(), hasMax: dp.HasMax(), start: uint64(dp.StartTimestamp()),
	}
}

// histogram writes <name>.count and <name>.sum as counters (their delta,
// for a cumulative point), and for a delta point <name>.min and <name>.max
// as gauges (a cumulative point's min and max are over the stream's whole
// life, so they are not written).
func (r *run) histogram(rc *resCtx, p *point, base uint64, kind byte, temporality pmetric.AggregationTemporality, h histogram, name, unit string) {
	delta := temporality == pmetric.AggregationTemporalityDelta
	n := int64(1)
	if h.hasSum {
		n++
	}
	switch {
	case delta: // every item is emitted, each counted on its own
	case temporality != pmetric.AggregationTemporalityCumulative:
		r.res.Invalid += n
		return
	default:
		c := cum{start: h.start, time: p.time, i: int64(h.count), f: h.sum}
		d, ok := r.delta(r.t.h.streamKey(base, name, kind, p.attrs), c, false, n)
		if !ok {
			return
		}
		h.count, h.sum = uint64(d.i), d.f
	}
	if h.count == 0 { // no observation: its min and max describe nothing either
		r.res.Unchanged += n + b2i(delta && h.hasMin) + b2i(delta && h.hasMax)
		return
	}
	r.emit(rc, p, &metricItem{ty: typeCounter, name: name, suffix: ".count", value: intOf(int64(h.count))})
	if h.hasSum {
		r.emit(rc, p, &metricItem{ty: typeCounter, name: name, suffix: ".sum", unit: unit, value: floatOf(h.sum)})
	}
	if delta && h.hasMin {
		r.emit(rc, p, &metricItem{ty: typeGauge, name: name, suffix: ".min", unit: unit, value: floatOf(h.min)})
	}
	if delta && h.hasMax {
		r.emit(rc, p, &metricItem{ty: typeGauge, name: name, suffix: ".max", unit: unit, value: floatOf(h.max)})
	}
}

// summary writes <name>.count and <name>.sum as counters of their increase
// (a summary's count and sum are cumulative), and each quantile as a gauge
// <name>.quantile with the quantile as a double attribute.
func (r *run) summary(rc *resCtx, base uint64, dp pmetric.SummaryDataPoint, name, unit string) {
	p := pointOf(rc, dp.Timestamp(), dp.Attributes(), r.now)
	c := cum{start: uint64(dp.StartTimestamp()), time: p.time, i: int64(dp.Count()), f: dp.Sum()}
	if d, ok := r.delta(r.t.h.streamKey(base, name, kindSummary, dp.Attributes()), c, false, 2); ok {
		r.emit(rc, &p, &metricItem{ty: typeCounter, name: name, suffix: ".count", value: intOf(d.i)})
		r.emit(rc, &p, &metricItem{ty: typeCounter, name: name, suffix: ".sum", unit: unit, value: floatOf(d.f)})
	}
	for _, q := range dp.QuantileValues().All() {
		r.emit(rc, &p, &metricItem{
			ty: typeGauge, name: name, suffix: ".quantile", unit: unit,
			value: floatOf(q.Value()), quantile: q.Quantile(), hasQuantile: true,
		})
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// PerPoint is how many items one data point becomes (the accounting unit):
// a gauge or sum point one; a histogram point one (count), plus one for its
// sum, plus, when delta, one each for its min and max; a summary point two
// (count and sum) plus one per quantile.
func PerPoint(m pmetric.Metric, i int) int64 {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		h := m.Histogram()
		return histogramItems(h.AggregationTemporality(), h.DataPoints().At(i))
	case pmetric.MetricTypeExponentialHistogram:
		h := m.ExponentialHistogram()
		return histogramItems(h.AggregationTemporality(), h.DataPoints().At(i))
	case pmetric.MetricTypeSummary:
		return 2 + int64(m.Summary().DataPoints().At(i).QuantileValues().Len())
	}
	return 1
}

// histogramItems is how many items a histogram point becomes: its count,
// its sum if it has one, and when delta its min and max if it has them.
func histogramItems[P histogramPoint](t pmetric.AggregationTemporality, dp P) int64 {
	n := 1 + b2i(dp.HasSum())
	if t == pmetric.AggregationTemporalityDelta {
		n += b2i(dp.HasMin()) + b2i(dp.HasMax())
	}
	return n
}
