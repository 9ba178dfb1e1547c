package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// The metrics otlpgen sends are what an OpenTelemetry SDK at its defaults exports for a
// web service: cumulative temporality, every stream re-exported at each collection with
// its start time unchanged. Each service has six instruments, one of each OTLP kind, and
// each instrument --metric-streams attribute sets (its routes):
//
//	http.server.active_requests     gauge (double)
//	http.server.request.count       monotonic sum (int), with exemplars
//	db.client.connection.count      non-monotonic sum (int)
//	http.server.request.duration    histogram (explicit bounds, s), with exemplars
//	rpc.server.duration             exponential histogram (ms)
//	http.client.request.duration    summary (s), as a Prometheus receiver produces one
//
// One data point is one stream's value at one collection; the totals count data points,
// and the trace metric items the exporter makes of them (docs/mapping.md#metrics--trace-metrics: one per
// gauge or sum point; <name>.count and <name>.sum per cumulative histogram point; those
// and one <name>.quantile per quantile for a summary point).

// metricKinds is the number of instruments per service, one per OTLP kind.
const metricKinds = 6

// summaryQuantiles are the quantiles of the summary points.
var summaryQuantiles = []struct{ q, z float64 }{{0, -2}, {0.5, 0}, {0.9, 1.28}, {0.99, 2.33}, {1, 2.6}}

// itemsPerStream is how many trace metric items one collection of a stream's six points
// becomes: gauge 1, sums 1 each, histograms 2 each, summary 2 + its quantiles.
var itemsPerStream = 1 + 1 + 1 + 2 + 2 + 2 + len(summaryQuantiles)

// durationBounds are the OTel SDK's default explicit bounds for a duration in seconds
// (the semantic conventions' advice for http.server.request.duration).
var durationBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// expScale and expBuckets fix the exponential histogram's resolution (2^(1/8) per
// bucket) and its positive buckets from 1 ms up (index 0) to beyond 60 s.
const (
	expScale   = 3
	expBuckets = 128
)

// stream is the cumulative state of one attribute set across the instruments.
type stream struct {
	requests, connections int64
	buckets               []uint64 // explicit bounds, len(durationBounds)+1
	count                 uint64
	sum, min, max         float64
	expCounts             []uint64 // positive buckets from index 0
	expZero               uint64
	expSum                float64
	clientCount           uint64
	clientSum             float64
}

// meter builds the metrics of one SDK instance (one service.instance.id per service). It
// is not safe for concurrent use.
type meter struct {
	rnd      *rand.Rand
	services []service
	instance int
	start    time.Time
	streams  [][]*stream // by service, by route
}

func newMeter(seed uint64, nServices, streams, instance int, start time.Time) *meter {
	m := &meter{rnd: rand.New(rand.NewPCG(seed, seed^0x51ed27c1)), instance: instance, start: start}
	for i := range max(nServices, 1) {
		m.services = append(m.services, serviceAt(i))
		row := make([]*stream, max(streams, 1))
		for j := range row {
			row[j] = &stream{buckets: make([]uint64, len(durationBounds)+1), expCounts: make([]uint64, expBuckets), min: math.Inf(1)}
		}
		m.streams = append(m.streams, row)
	}
	return m
}

// metricCounts is what one metrics batch holds: data points, in all and by service name,
// and the trace metric items they become.
type metricCounts struct {
	points, items int
	byService     map[string]int // data points
}

// collect advances every stream by the requests served since the last collection and
// returns one export of all of them, as a periodic reader's collection does.
func (m *meter) collect(now time.Time) (pmetric.Metrics, metricCounts) {
	md := pmetric.NewMetrics()
	mc := metricCounts{byService: map[string]int{}}
	for i := range m.services {
		s := &m.services[i]
		rm := md.ResourceMetrics().AppendEmpty()
		setResource(rm.Resource(), s)
		rm.Resource().Attributes().PutStr("service.instance.id", fmt.Sprintf("%s-%d", s.name, m.instance))
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
		sm.Scope().SetVersion("0.72.0")
		kinds := m.instruments(sm.Metrics())
		for j, st := range m.streams[i] {
			m.advance(st)
			m.points(kinds, st, streamOf(s, j), now)
		}
		n := len(m.streams[i]) * metricKinds
		mc.points += n
		mc.items += len(m.streams[i]) * itemsPerStream
		mc.byService[s.name] += n
	}
	return md, mc
}

// instruments appends the six metrics of one service, empty, in the order points fills them.
func (*meter) instruments(ms pmetric.MetricSlice) []pmetric.Metric {
	add := func(name, unit, desc string) pmetric.Metric {
		x := ms.AppendEmpty()
		x.SetName(name)
		x.SetUnit(unit)
		x.SetDescription(desc)
		return x
	}
	gauge := add("http.server.active_requests", "{request}", "Number of active HTTP server requests.")
	gauge.SetEmptyGauge()
	count := add("http.server.request.count", "{request}", "Requests served.")
	count.SetEmptySum().SetIsMonotonic(true)
	count.Sum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	conns := add("db.client.connection.count", "{connection}", "Connections open in the pool.")
	conns.SetEmptySum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	hist := add("http.server.request.duration", "s", "Duration of HTTP server requests.")
	hist.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	exp := add("rpc.server.duration", "ms", "Duration of inbound RPCs.")
	exp.SetEmptyExponentialHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	summary := add("http.client.request.duration", "s", "Duration of HTTP client requests.")
	summary.SetEmptySummary()
	return []pmetric.Metric{gauge, count, conns, hist, exp, summary}
}

// streamID is what tells a service's streams apart: a route, and a status code and a port,
// so that no two of --metric-streams share their attributes (one stream, one point per export).
type streamID struct {
	route
	status, port int64
}

var statusCodes = []int64{200, 201, 204, 400, 404, 500}

func streamOf(s *service, j int) streamID {
	n := len(s.routes)
	return streamID{
		route:  s.routes[j%n],
		status: statusCodes[j/n%len(statusCodes)],
		port:   8080 + int64(j/(n*len(statusCodes))),
	}
}

// put adds the stream's status code and port to a point's attributes.
func (id streamID) put(a pcommon.Map) {
	a.PutInt("http.response.status_code", id.status)
	a.PutInt("server.port", id.port)
}

// advance serves 1 to 20 requests on the stream.
func (m *meter) advance(st *stream) {
	n := 1 + m.rnd.IntN(20)
	st.requests += int64(n)
	st.connections = max(0, st.connections+int64(m.rnd.IntN(5))-2)
	for range n {
		d := math.Exp(m.rnd.NormFloat64()*0.9 - 3.5) // seconds, a median of 30 ms
		st.count++
		st.sum += d
		st.min, st.max = math.Min(st.min, d), math.Max(st.max, d)
		st.buckets[bucketOf(d)]++
		if ms := d * 1000; ms <= 1 {
			st.expZero++
		} else {
			st.expCounts[min(expBuckets-1, expIndex(ms))]++
		}
		st.expSum += d * 1000
		c := math.Exp(m.rnd.NormFloat64()*0.5 - 2.5)
		st.clientCount++
		st.clientSum += c
	}
}

// bucketOf is the explicit bucket of d: bucket i holds (bounds[i-1], bounds[i]].
func bucketOf(d float64) int {
	i, _ := slices.BinarySearch(durationBounds, d)
	return i
}

// expIndex is the exponential bucket of v >= 1 at expScale: (base^i, base^(i+1)].
func expIndex(v float64) int {
	return max(0, int(math.Ceil(math.Log2(v)*(1<<expScale)))-1)
}

// points appends the stream's six data points, one per instrument.
func (m *meter) points(kinds []pmetric.Metric, st *stream, r streamID, now time.Time) {
	start, ts := pcommon.NewTimestampFromTime(m.start), pcommon.NewTimestampFromTime(now)
	attrs := func(a pcommon.Map) {
		a.PutStr("http.request.method", r.method)
		a.PutStr("http.route", r.route.route)
		a.PutStr("url.scheme", "http")
		r.put(a)
	}
	g := kinds[0].Gauge().DataPoints().AppendEmpty()
	attrs(g.Attributes())
	g.SetTimestamp(ts)
	g.SetDoubleValue(float64(m.rnd.IntN(8)))

	c := kinds[1].Sum().DataPoints().AppendEmpty()
	attrs(c.Attributes())
	c.SetStartTimestamp(start)
	c.SetTimestamp(ts)
	c.SetIntValue(st.requests)
	m.exemplar(c.Exemplars(), now, func(e pmetric.Exemplar) { e.SetIntValue(1) })

	p := kinds[2].Sum().DataPoints().AppendEmpty()
	p.Attributes().PutStr("db.client.connection.pool.name", r.route.route)
	p.Attributes().PutStr("db.client.connection.state", "used")
	r.put(p.Attributes())
	p.SetStartTimestamp(start)
	p.SetTimestamp(ts)
	p.SetIntValue(st.connections)

	h := kinds[3].Histogram().DataPoints().AppendEmpty()
	attrs(h.Attributes())
	h.SetStartTimestamp(start)
	h.SetTimestamp(ts)
	h.SetCount(st.count)
	h.SetSum(st.sum)
	h.SetMin(st.min)
	h.SetMax(st.max)
	h.ExplicitBounds().FromRaw(durationBounds)
	h.BucketCounts().FromRaw(st.buckets)
	m.exemplar(h.Exemplars(), now, func(e pmetric.Exemplar) { e.SetDoubleValue(st.max) })

	m.expPoint(kinds[4].ExponentialHistogram().DataPoints().AppendEmpty(), st, r, start, ts)
	m.summaryPoint(kinds[5].Summary().DataPoints().AppendEmpty(), st, r, start, ts)
}

// exemplar adds, to half of the points, one exemplar of a sampled request's trace.
func (m *meter) exemplar(es pmetric.ExemplarSlice, now time.Time, value func(pmetric.Exemplar)) {
	if m.rnd.IntN(2) == 0 {
		return
	}
	e := es.AppendEmpty()
	e.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(-m.msDuration(1, 900))))
	var tid pcommon.TraceID
	binary.BigEndian.PutUint64(tid[:8], m.rnd.Uint64()|1)
	binary.BigEndian.PutUint64(tid[8:], m.rnd.Uint64())
	var sid pcommon.SpanID
	binary.BigEndian.PutUint64(sid[:], m.rnd.Uint64()|1)
	e.SetTraceID(tid)
	e.SetSpanID(sid)
	value(e)
}

func (m *meter) msDuration(lo, hi int) time.Duration {
	return time.Duration(lo+m.rnd.IntN(hi-lo+1)) * time.Millisecond
}

func (*meter) expPoint(e pmetric.ExponentialHistogramDataPoint, st *stream, r streamID, start, ts pcommon.Timestamp) {
	e.Attributes().PutStr("rpc.system", "grpc")
	e.Attributes().PutStr("rpc.method", r.route.route)
	r.put(e.Attributes())
	e.SetStartTimestamp(start)
	e.SetTimestamp(ts)
	e.SetScale(expScale)
	e.SetCount(st.count)
	e.SetSum(st.expSum)
	e.SetZeroCount(st.expZero)
	e.SetZeroThreshold(1) // durations up to 1 ms count as zero
	e.SetMin(st.min * 1000)
	e.SetMax(st.max * 1000)
	last := 0
	for i, n := range st.expCounts {
		if n > 0 {
			last = i
		}
	}
	e.Positive().SetOffset(0)
	e.Positive().BucketCounts().FromRaw(st.expCounts[:last+1])
}

// summaryPoint is a cumulative count and sum with quantiles near a log-normal's.
func (*meter) summaryPoint(s pmetric.SummaryDataPoint, st *stream, r streamID, start, ts pcommon.Timestamp) {
	s.Attributes().PutStr("http.request.method", r.method)
	s.Attributes().PutStr("url.template", r.route.route)
	s.Attributes().PutStr("server.address", "api.internal")
	r.put(s.Attributes())
	s.SetStartTimestamp(start)
	s.SetTimestamp(ts)
	s.SetCount(st.clientCount)
	s.SetSum(st.clientSum)
	median := math.Exp(-2.5)
	for _, q := range summaryQuantiles {
		v := s.QuantileValues().AppendEmpty()
		v.SetQuantile(q.q)
		v.SetValue(median * math.Exp(0.5*q.z))
	}
}

// metricTotals are the sender's metric counters.
type metricTotals struct {
	metricPoints, failedMetricPoints, rejectedMetricPoints, traceMetricItems atomic.Int64
}

// sendMetrics POSTs one metrics export and counts its data points.
func (s *sender) sendMetrics(ctx context.Context, md pmetric.Metrics, mc metricCounts) {
	b, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		s.fail("metrics marshal error")
		return
	}
	rb, ok := s.post(ctx, "metrics", s.metricsURL, b)
	if !ok {
		s.failedMetricPoints.Add(int64(mc.points))
		return
	}
	s.metricPoints.Add(int64(mc.points))
	s.traceMetricItems.Add(int64(mc.items))
	resp := pmetricotlp.NewExportResponse()
	if resp.UnmarshalProto(rb) == nil {
		s.rejectedMetricPoints.Add(resp.PartialSuccess().RejectedDataPoints())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byService == nil {
		s.byService = map[string]ServiceTotals{}
	}
	for name, n := range mc.byService {
		t := s.byService[name]
		t.MetricPoints += int64(n)
		t.TraceMetricItems += int64(n / metricKinds * itemsPerStream)
		s.byService[name] = t
	}
}

// runMetricsEvery exports every stream of one meter each interval until ctx ends, then
// once more, as an SDK's periodic reader does and its shutdown does.
func (s *sender) runMetricsEvery(ctx context.Context, m *meter, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			md, mc := m.collect(time.Now())
			s.sendMetrics(context.WithoutCancel(ctx), md, mc)
			return
		case now := <-t.C:
			md, mc := m.collect(now)
			s.sendMetrics(ctx, md, mc)
		}
	}
}

// metricsAtRate exports the meter's streams as fast as --rate data points per second
// allow (--signals metrics): each export is one collection of every stream.
func (s *sender) metricsAtRate(ctx context.Context, lim *limiter, m *meter) {
	for ctx.Err() == nil {
		md, mc := m.collect(time.Now())
		if !lim.wait(ctx, mc.points) {
			return
		}
		s.sendMetrics(ctx, md, mc)
	}
}
