package tracemetric

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// sdkBatch is one export of a service's metrics as the OTel SDK makes them
// at its defaults (cumulative): per route and method, a request counter, an
// in-flight gauge and a duration histogram with the SDK's 15 bounds; n
// series, 3n points.
func sdkBatch(n int, start, ts uint64, v int64) pmetric.Metrics {
	md := batch(func(pmetric.MetricSlice) {})
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	c, g, h := ms.AppendEmpty(), ms.AppendEmpty(), ms.AppendEmpty()
	c.SetName("http.server.requests")
	cs := c.SetEmptySum()
	cs.SetIsMonotonic(true)
	cs.SetAggregationTemporality(cumulative)
	g.SetName("http.server.active_requests")
	gs := g.SetEmptyGauge()
	h.SetName("http.server.request.duration")
	h.SetUnit("s")
	hs := h.SetEmptyHistogram()
	hs.SetAggregationTemporality(cumulative)
	for i := range n {
		attrs := func(m pcommon.Map) {
			m.PutStr("http.request.method", "GET")
			m.PutStr("http.route", fmt.Sprintf("/api/v1/items/%d", i))
			m.PutInt("http.response.status_code", 200)
			m.PutStr("url.scheme", "https")
		}
		cp := cs.DataPoints().AppendEmpty()
		cp.SetStartTimestamp(pcommon.Timestamp(start))
		cp.SetTimestamp(pcommon.Timestamp(ts))
		cp.SetIntValue(v)
		attrs(cp.Attributes())
		gp := gs.DataPoints().AppendEmpty()
		gp.SetTimestamp(pcommon.Timestamp(ts))
		gp.SetIntValue(v % 7)
		attrs(gp.Attributes())
		hp := hs.DataPoints().AppendEmpty()
		hp.SetStartTimestamp(pcommon.Timestamp(start))
		hp.SetTimestamp(pcommon.Timestamp(ts))
		hp.SetCount(uint64(v))
		hp.SetSum(float64(v) * 0.042)
		hp.ExplicitBounds().FromRaw([]float64{0, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10})
		hp.BucketCounts().FromRaw(make([]uint64, 16))
		attrs(hp.Attributes())
	}
	return md
}

// BenchmarkMetrics: the translation of a data point, against its peer
// measured in the same run: otlphttp's work on the same batch (the OTLP
// protobuf encoding). Streams are warm: every cumulative point is a delta.
// go test -run ^$ -bench BenchmarkMetrics ./internal/tracemetric
func BenchmarkMetrics(b *testing.B) {
	const series = 300
	md := sdkBatch(series, started+sec, t0, 10)
	points := float64(md.DataPointCount())
	b.Run("tracemetric", func(b *testing.B) {
		tr, st := newTranslator(), NewStreams(8<<20, started)
		ts := t0
		b.ReportAllocs()
		for b.Loop() {
			ts += sec
			setTime(md, ts)
			r := tr.Metrics(md, st, ts, Want{Items: true})
			r.Release()
			if r.NoBaseline > 0 && ts > t0+sec {
				b.Fatal("streams went cold")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/points, "ns/point")
	})
	b.Run("otlp-proto", func(b *testing.B) {
		var m pmetric.ProtoMarshaler
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.MarshalMetrics(md); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/points, "ns/point")
	})
}

// setTime moves every point of md to ts (a later export of the same streams).
func setTime(md pmetric.Metrics, ts uint64) {
	for _, m := range md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().All() {
		switch m.Type() {
		case pmetric.MetricTypeSum:
			for _, dp := range m.Sum().DataPoints().All() {
				dp.SetTimestamp(pcommon.Timestamp(ts))
			}
		case pmetric.MetricTypeGauge:
			for _, dp := range m.Gauge().DataPoints().All() {
				dp.SetTimestamp(pcommon.Timestamp(ts))
			}
		case pmetric.MetricTypeHistogram:
			for _, dp := range m.Histogram().DataPoints().All() {
				dp.SetTimestamp(pcommon.Timestamp(ts))
			}
		}
	}
}
