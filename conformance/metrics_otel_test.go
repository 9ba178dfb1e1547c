package conformance

import (
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otelMeter records through the OpenTelemetry Go SDK at its defaults: a MeterProvider
// with a periodic reader (cumulative temporality, 60 s interval, default aggregations:
// a histogram with the default explicit bounds) and the otlpmetrichttp exporter. Its
// instruments are the ones the semantic conventions advise for each kind: an Int64Counter
// for a count, a Float64Gauge for a gauge, a Float64Histogram for a distribution.
type otelMeter struct {
	mp     *sdkmetric.MeterProvider
	tp     *sdktrace.TracerProvider
	meter  metric.Meter
	mu     sync.Mutex
	counts map[string]metric.Int64Counter
	gauges map[string]metric.Float64Gauge
	hists  map[string]metric.Float64Histogram
}

// otelUnits are the UCUM units the semantic conventions write.
var otelUnits = map[string]string{"ms": "ms"}

func newOTelMeter(t *testing.T, otlpURL string) *otelMeter {
	t.Helper()
	ctx := t.Context()
	res := sdkResource(t)
	exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(otlpURL+"/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	return &otelMeter{
		mp: mp, tp: sdktrace.NewTracerProvider(sdktrace.WithResource(res)),
		meter:  mp.Meter("shop"),
		counts: map[string]metric.Int64Counter{}, gauges: map[string]metric.Float64Gauge{}, hists: map[string]metric.Float64Histogram{},
	}
}

func otelAttrs(attrs []metricAttr) metric.MeasurementOption {
	kvs := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.value.(type) {
		case string:
			kvs = append(kvs, attribute.String(a.key, v))
		case int64:
			kvs = append(kvs, attribute.Int64(a.key, v))
		case float64:
			kvs = append(kvs, attribute.Float64(a.key, v))
		case bool:
			kvs = append(kvs, attribute.Bool(a.key, v))
		}
	}
	return metric.WithAttributes(kvs...)
}

// instrument returns the instrument of that name, created once as an application does.
func instrument[I any](o *otelMeter, m map[string]I, name string, mk func() (I, error)) I {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i, ok := m[name]; ok {
		return i
	}
	i, err := mk()
	if err != nil {
		panic(err) // a fixed, valid name: cannot happen
	}
	m[name] = i
	return i
}

func (o *otelMeter) count(ctx context.Context, name, unit string, n int64, attrs ...metricAttr) {
	c := instrument(o, o.counts, name, func() (metric.Int64Counter, error) {
		return o.meter.Int64Counter(name, metric.WithUnit(unit))
	})
	c.Add(ctx, n, otelAttrs(attrs))
}

func (o *otelMeter) gauge(ctx context.Context, name, unit string, v float64, attrs ...metricAttr) {
	g := instrument(o, o.gauges, name, func() (metric.Float64Gauge, error) {
		return o.meter.Float64Gauge(name, metric.WithUnit(unit))
	})
	g.Record(ctx, v, otelAttrs(attrs))
}

func (o *otelMeter) distribution(ctx context.Context, name, unit string, v float64, attrs ...metricAttr) {
	h := instrument(o, o.hists, name, func() (metric.Float64Histogram, error) {
		return o.meter.Float64Histogram(name, metric.WithUnit(unit))
	})
	h.Record(ctx, v, otelAttrs(attrs))
}

func (o *otelMeter) inSpan(ctx context.Context, f func(context.Context)) (traceID, spanID string) {
	ctx, span := o.tp.Tracer("shop").Start(ctx, "checkout", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	f(ctx)
	sc := span.SpanContext()
	return sc.TraceID().String(), sc.SpanID().String()
}

// collect exports every stream now, as the periodic reader does each interval.
func (o *otelMeter) collect(t *testing.T) {
	t.Helper()
	if err := o.mp.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func (o *otelMeter) shutdown(t *testing.T) {
	t.Helper()
	if err := o.mp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := o.tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// runOTelMetrics runs the metrics program under the OTel SDK, through the built
// collector (bin/otelcol-sentry) and this exporter, and returns what Sentry got.
func runOTelMetrics(t *testing.T) ([]captured, metricsRun) {
	sink := newCaptureSink(t)
	col := startCollector(t, sink.dsn(), collectorMetricsPipeline)
	o := newOTelMeter(t, col.otlpURL)
	run := runMetricsProgram(t, o, otelUnits)
	o.shutdown(t)
	col.stop(t)
	return sinkEnvelopes(t, sink), run
}
