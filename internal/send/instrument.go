package send

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"
)

// confighttp's ToClient wraps every client's transport in otelhttp's, which
// per request clones the request, builds its trace and metric attributes,
// wraps both bodies and tracks the request body's end: 19 of the 117
// allocations of one envelope's way and about a sixth of its CPU
// (BenchmarkOneEnvelope, docs/performance.md). It records nothing
// in a collector at its defaults: the collector's TracerProvider is a no-op
// without trace processors, and below `service::telemetry::metrics::level:
// detailed` a view drops otelhttp's metrics. One envelope is one request, so
// the stage pays it per envelope, where otlphttp pays it per batch; it keeps
// the instrumentation only where it records something.

// clientInstrumented reports whether otelhttp's client instrumentation would
// record anything with tel: a span (or a span context to propagate) from its
// tracer, or a measurement from its meter.
func clientInstrumented(tel component.TelemetrySettings) bool {
	if tel.TracerProvider == nil || tel.MeterProvider == nil {
		return false // ToClient does not wrap then either
	}
	return clientTraced(tel.TracerProvider) || clientMetered(tel)
}

// clientTraced starts a span from otelhttp's tracer under a remote parent
// that is not sampled. A tracer that records spans, or one that makes span
// contexts of its own (the SDK's, whatever its sampler), gives a span that
// records or a new span id; a no-op tracer gives an invalid span context, or
// the parent's. Under the parent-based samplers (the SDK's default) the
// probe does not record, so ending it exports nothing; a sampler that
// ignores the parent exports this one span per HTTP client built.
func clientTraced(tp trace.TracerProvider) bool {
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0: 1}, SpanID: trace.SpanID{0: 1}, Remote: true,
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	_, span := tp.Tracer(otelhttp.ScopeName).Start(ctx, "sentryexporter.probe")
	defer span.End()
	sc := span.SpanContext()
	return span.IsRecording() || sc.IsValid() && sc.SpanID() != parent.SpanID()
}

// clientMetered asks otelhttp's meter whether the instrument it records on
// every request is enabled: false for a no-op meter provider and for one
// whose view drops otelhttp's metrics. The instrument is made as otelhttp
// makes it, so the meter sees one registration, not two that differ.
func clientMetered(tel component.TelemetrySettings) bool {
	meter := tel.MeterProvider.Meter(otelhttp.ScopeName, metric.WithInstrumentationVersion(otelhttp.Version))
	h, err := httpconv.NewClientRequestBodySize(meter)
	return err == nil && h.Inst().Enabled(context.Background())
}
