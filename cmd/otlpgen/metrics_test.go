package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/otel-sentry/sentryexporter/internal/tracemetric"
)

// The meter's export is what an SDK at its defaults sends: every OTLP kind, cumulative
// streams whose start time holds and whose counts never fall, consistent histograms,
// exemplars on some points.
func TestMeterCollectsCumulativeStreams(t *testing.T) {
	start := time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC)
	m := newMeter(5, 3, 2, 1, start)
	first, c1 := m.collect(start.Add(time.Minute))
	second, c2 := m.collect(start.Add(2 * time.Minute))
	if c1.points != 3*2*metricKinds || c2.points != c1.points || first.DataPointCount() != c1.points {
		t.Fatalf("points %d and %d, pdata counts %d; want %d", c1.points, c2.points, first.DataPointCount(), 3*2*metricKinds)
	}
	if len(c1.byService) != 3 || c1.byService["checkout"] != 2*metricKinds {
		t.Fatalf("by service %v", c1.byService)
	}
	kinds := map[pmetric.MetricType]int{}
	exemplars := 0
	eachMetric(second, func(x pmetric.Metric) {
		kinds[x.Type()]++
		if x.Type() == pmetric.MetricTypeSum && x.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
			t.Errorf("%s is not cumulative", x.Name())
		}
		exemplars += countExemplars(x)
	})
	for _, k := range []pmetric.MetricType{pmetric.MetricTypeGauge, pmetric.MetricTypeHistogram, pmetric.MetricTypeExponentialHistogram, pmetric.MetricTypeSummary} {
		if kinds[k] != 3 {
			t.Errorf("%v: %d metrics, want one per service", k, kinds[k])
		}
	}
	if kinds[pmetric.MetricTypeSum] != 6 || exemplars == 0 {
		t.Errorf("sums %d (want a monotonic and a non-monotonic one per service), exemplars %d", kinds[pmetric.MetricTypeSum], exemplars)
	}
	a := first.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	b := second.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	c0, c1p := a.At(1).Sum().DataPoints().At(0), b.At(1).Sum().DataPoints().At(0)
	if !b.At(1).Sum().IsMonotonic() || b.At(2).Sum().IsMonotonic() || c1p.IntValue() <= c0.IntValue() || c1p.StartTimestamp() != c0.StartTimestamp() {
		t.Errorf("counter %d then %d, start %v then %v", c0.IntValue(), c1p.IntValue(), c0.StartTimestamp(), c1p.StartTimestamp())
	}
	h := b.At(3).Histogram().DataPoints().At(0)
	if sumOf(h.BucketCounts().AsRaw()) != h.Count() || h.BucketCounts().Len() != h.ExplicitBounds().Len()+1 {
		t.Errorf("histogram count %d, buckets %v", h.Count(), h.BucketCounts().AsRaw())
	}
	e := b.At(4).ExponentialHistogram().DataPoints().At(0)
	if sumOf(e.Positive().BucketCounts().AsRaw())+e.ZeroCount() != e.Count() {
		t.Errorf("exponential histogram count %d, zero %d, buckets %v", e.Count(), e.ZeroCount(), e.Positive().BucketCounts().AsRaw())
	}
}

func eachMetric(md pmetric.Metrics, f func(pmetric.Metric)) {
	for i := range md.ResourceMetrics().Len() {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				f(ms.At(k))
			}
		}
	}
}

func countExemplars(x pmetric.Metric) int {
	n := 0
	switch x.Type() {
	case pmetric.MetricTypeSum:
		for i := range x.Sum().DataPoints().Len() {
			n += x.Sum().DataPoints().At(i).Exemplars().Len()
		}
	case pmetric.MetricTypeHistogram:
		for i := range x.Histogram().DataPoints().Len() {
			n += x.Histogram().DataPoints().At(i).Exemplars().Len()
		}
	}
	return n
}

func sumOf(xs []uint64) uint64 {
	var n uint64
	for _, x := range xs {
		n += x
	}
	return n
}

// --signals metrics sends metrics alone and counts their data points, in all and by service.
func TestMetricsOnly(t *testing.T) {
	var points, other atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/metrics" {
			other.Add(1)
			return
		}
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Error(err)
		}
		points.Add(int64(req.Metrics().DataPointCount()))
	}))
	defer srv.Close()
	s := &sender{opts: options{signals: "metrics"}, client: srv.Client(), metricsURL: srv.URL + "/v1/metrics"}
	m := newMeter(9, 2, 3, 0, time.Now())
	for range 3 {
		md, mc := m.collect(time.Now())
		s.sendMetrics(t.Context(), md, mc)
	}
	tot := s.totals(time.Second)
	if tot.MetricPoints != points.Load() || tot.MetricPoints != 3*2*3*metricKinds || other.Load() != 0 || tot.Spans != 0 {
		t.Fatalf("totals %+v, server saw %d points and %d other requests", tot, points.Load(), other.Load())
	}
	if tot.TraceMetricItems != tot.MetricPoints/metricKinds*int64(itemsPerStream) || tot.ByService["checkout"].TraceMetricItems != tot.TraceMetricItems/2 {
		t.Fatalf("trace metric items %d of %d points, by service %+v", tot.TraceMetricItems, tot.MetricPoints, tot.ByService)
	}
	if tot.ByService["checkout"].MetricPoints+tot.ByService["inventory"].MetricPoints != tot.MetricPoints {
		t.Fatalf("by service %+v", tot.ByService)
	}
}

// The items otlpgen expects in Sentry are what the exporter's accounting unit says its
// points become (tracemetric.PerPoint), so that the checks of the scripts add up.
func TestTraceMetricItemsAreTheExportersUnit(t *testing.T) {
	md, mc := newMeter(4, 3, 2, 0, time.Now()).collect(time.Now())
	var want int64
	eachMetric(md, func(x pmetric.Metric) {
		for i := range pointsOf(x) {
			want += tracemetric.PerPoint(x, i)
		}
	})
	if int64(mc.items) != want {
		t.Fatalf("otlpgen counts %d trace metric items, the exporter %d", mc.items, want)
	}
}

func pointsOf(x pmetric.Metric) int {
	switch x.Type() {
	case pmetric.MetricTypeGauge:
		return x.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return x.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return x.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return x.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return x.Summary().DataPoints().Len()
	}
	return 0
}

// Every stream is a stream of its own: the exporter, given three collections, turns each
// point after a stream's first into its items, none counted without a baseline (two
// streams with the same attributes would take each other's points for resets).
func TestStreamsAreDistinct(t *testing.T) {
	start := time.Now()
	m := newMeter(4, 3, 30, 0, start)
	tr := tracemetric.New(tracemetric.Options{})
	st := tracemetric.NewStreams(8<<20, uint64(start.Add(-time.Second).UnixNano()))
	for i := range 3 {
		md, mc := m.collect(start.Add(time.Duration(i+1) * time.Second))
		r := tr.Metrics(md, st, uint64(start.UnixNano()), tracemetric.Want{Items: true})
		if int64(len(r.Items)) != int64(mc.items) || r.NoBaseline != 0 || r.Invalid != 0 {
			t.Fatalf("collection %d: %d items of %d, %d without a baseline, %d invalid", i, len(r.Items), mc.items, r.NoBaseline, r.Invalid)
		}
	}
}
