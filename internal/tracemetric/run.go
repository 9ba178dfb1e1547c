package tracemetric

import (
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// run is one call of Metrics: its buffer, its items and its counts.
type run struct {
	t       *Translator
	st      *Streams
	now     uint64
	want    bool
	buf     []byte
	ends    []int  // each item ends here in buf; it starts where the one before ended
	scratch []byte // the current point's attributes, rendered once

	res Result
}

// emit writes one item within MaxItemBytes (cut if it must be), or counts
// it unchanged, skipped or invalid.
func (r *run) emit(rc *resCtx, p *point, it *metricItem) {
	switch {
	case it.ty == typeCounter && it.value.zero():
		r.res.Unchanged++ // adds nothing to any sum or rate; not lost, so not skipped even while limited
		return
	case !r.want:
		r.res.Skipped++
		return
	case !it.value.valid():
		r.res.Invalid++
		return
	}
	start := len(r.buf)
	r.buf = r.appendItem(r.buf, rc, p, it)
	if !r.fits(start, p.elems+rc.elems) && !r.refit(rc, p, it, start) {
		r.res.Invalid++
		return
	}
	r.ends = append(r.ends, len(r.buf))
}

// result is the call's Result; its Items hold the buffer until Release,
// and a buffer that holds none goes back at once.
func (r *run) result() Result {
	switch {
	case len(r.ends) > 0:
		r.res.Items = make([][]byte, len(r.ends))
		start := 0
		for i, end := range r.ends {
			r.res.Items[i] = r.buf[start:end:end]
			start = end
		}
		r.res.release = r.t.bufs.Releaser(r.buf)
	case cap(r.buf) > 0:
		r.t.bufs.Releaser(r.buf).Release() // no item holds it: back at once
	}
	return r.res
}

// Stream kinds, so that a sum and a histogram of one name are two streams.
const (
	kindSum byte = iota + 1
	kindHistogram
	kindExpHistogram
	kindSummary
)

// metric translates each data point of m.
func (r *run) metric(rc *resCtx, base uint64, m pmetric.Metric) {
	name, unit := m.Name(), unitOf(m.Unit())
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for _, dp := range m.Gauge().DataPoints().All() {
			p := pointOf(rc, dp.Timestamp(), dp.Attributes(), r.now)
			p.exemplars(dp.Exemplars())
			r.emit(rc, &p, &metricItem{ty: typeGauge, name: name, unit: unit, value: numberOf(dp)})
		}
	case pmetric.MetricTypeSum:
		r.sum(rc, base, m.Sum(), name, unit)
	case pmetric.MetricTypeHistogram:
		hs := m.Histogram()
		for _, dp := range hs.DataPoints().All() {
			p, h := histogramOf(rc, dp, r.now)
			r.histogram(rc, &p, base, kindHistogram, hs.AggregationTemporality(), h, name, unit)
		}
	case pmetric.MetricTypeExponentialHistogram:
		hs := m.ExponentialHistogram()
		for _, dp := range hs.DataPoints().All() {
			p, h := histogramOf(rc, dp, r.now)
			r.histogram(rc, &p, base, kindExpHistogram, hs.AggregationTemporality(), h, name, unit)
		}
	case pmetric.MetricTypeSummary:
		for _, dp := range m.Summary().DataPoints().All() {
			r.summary(rc, base, dp, name, unit)
		}
	}
}

func numberOf(dp pmetric.NumberDataPoint) number {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return intOf(dp.IntValue())
	}
	return floatOf(dp.DoubleValue())
}

// sum: a delta is a counter as it is (monotonic: the increase; not: the net
// change); a cumulative non-monotonic sum is the level, a gauge; a
// cumulative monotonic sum is a counter of its increase since the stream's
// previous point.
func (r *run) sum(rc *resCtx, base uint64, s pmetric.Sum, name, unit string) {
	temporality := s.AggregationTemporality()
	for _, dp := range s.DataPoints().All() {
		p := pointOf(rc, dp.Timestamp(), dp.Attributes(), r.now)
		p.exemplars(dp.Exemplars())
		it := metricItem{ty: typeCounter, name: name, unit: unit, value: numberOf(dp)}
		switch {
		case temporality == pmetric.AggregationTemporalityDelta:
		case temporality != pmetric.AggregationTemporalityCumulative:
			r.res.Invalid++
			continue
		case !s.IsMonotonic():
			it.ty = typeGauge
		default:
			c := cum{start: uint64(dp.StartTimestamp()), time: p.time, i: it.value.i, f: it.value.f}
			d, ok := r.delta(r.t.h.streamKey(base, name, kindSum, dp.Attributes()), c, !it.value.isInt, 1)
			if !ok {
				continue
			}
			it.value.i, it.value.f = d.i, d.f
		}
		r.emit(rc, &p, &it)
	}
}

// delta is Streams.delta with its counts: n items of the point are counted
// without a baseline when there is none.
func (r *run) delta(key uint64, c cum, fFalls bool, n int64) (cum, bool) {
	if r.st == nil {
		return c, true // only counting (Want.Items false, no streams): every item is skipped
	}
	d, o, held := r.st.delta(key, c, fFalls)
	r.res.HeldDelta += held
	if o == noBaseline {
		r.res.NoBaseline += n
		return cum{}, false
	}
	return d, true
}
