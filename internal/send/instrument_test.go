package send

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
)

// TestClientInstrumented: the clients keep otelhttp's instrumentation only
// where it records something.
func TestClientInstrumented(t *testing.T) {
	// What the collector's service builds below metrics level detailed: a
	// view that drops every metric of otelhttp's scope.
	dropOtelhttp := sdkmetric.NewView(sdkmetric.Instrument{Scope: instrumentation.Scope{Name: otelhttp.ScopeName}},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationDrop{}})
	meterWith := func(opts ...sdkmetric.Option) *sdkmetric.MeterProvider {
		mp := sdkmetric.NewMeterProvider(append(opts, sdkmetric.WithReader(sdkmetric.NewManualReader()))...)
		t.Cleanup(func() { _ = mp.Shutdown(context.WithoutCancel(t.Context())) })
		return mp
	}
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	sampledOut := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))

	for _, tc := range []struct {
		name string
		tel  component.TelemetrySettings
		want bool
	}{
		{"no-op providers", componenttest.NewNopTelemetrySettings(), false},
		{"otelhttp's metrics dropped by a view, no-op tracer", settings(tracenoop.NewTracerProvider(), meterWith(sdkmetric.WithView(dropOtelhttp))), false},
		{"metrics level detailed (no view)", settings(tracenoop.NewTracerProvider(), meterWith()), true},
		{"a tracer that records", settings(tracer, metricnoop.NewMeterProvider()), true},
		{"a tracer that samples everything out: it still propagates", settings(sampledOut, metricnoop.NewMeterProvider()), true},
		{"no tracer provider", component.TelemetrySettings{MeterProvider: meterWith()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, clientInstrumented(tc.tel))
		})
	}
	assert.Empty(t, spans.Ended(), "the probe span, under a parent not sampled, is not exported")
}

// TestClientTransport: without instrumentation to record, a project's client
// posts through net/http's own transport, unwrapped; with it, through
// otelhttp's.
func TestClientTransport(t *testing.T) {
	for _, instrumented := range []bool{false, true} {
		tel := componenttest.NewNopTelemetrySettings()
		if instrumented {
			tel.TracerProvider = sdktrace.NewTracerProvider()
		}
		s := New(testConfig(), Settings{Telemetry: tel, Logger: zap.NewNop()})
		client, err := s.newClient(t.Context(), componenttest.NewNopHost())
		require.NoError(t, err)
		_, wrapped := client.Transport.(*otelhttp.Transport)
		assert.Equal(t, !instrumented, transportKind(client.Transport) == "nethttp", "net/http's, unwrapped")
		assert.Equal(t, instrumented, wrapped, "otelhttp's transport")
	}
}

func settings(tp trace.TracerProvider, mp metric.MeterProvider) component.TelemetrySettings {
	tel := componenttest.NewNopTelemetrySettings()
	tel.TracerProvider, tel.MeterProvider = tp, mp
	return tel
}
