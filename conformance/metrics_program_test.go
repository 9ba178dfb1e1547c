package conformance

import (
	"context"
	"testing"
)

// The metrics program: the same counters, gauges and distributions, recorded in two
// collections, through sentry-go's metrics API and through the OpenTelemetry metrics
// API. A collection is what the OTel SDK's periodic reader exports at once (the test
// forces it instead of waiting its 60 s); sentry-go sends as it batches.

// metricAttr is one attribute of a measurement, of one of OTLP's scalar types.
type metricAttr struct {
	key   string
	value any // string, int64, float64 or bool
}

// meterInstrumentation records measurements the way one SDK does.
type meterInstrumentation interface {
	count(ctx context.Context, name, unit string, n int64, attrs ...metricAttr)
	gauge(ctx context.Context, name, unit string, v float64, attrs ...metricAttr)
	distribution(ctx context.Context, name, unit string, v float64, attrs ...metricAttr)
	// inSpan runs f inside a sampled span and returns its trace and span ids.
	inSpan(ctx context.Context, f func(context.Context)) (traceID, spanID string)
	// collect ends one collection (the OTel reader exports every stream).
	collect(t *testing.T)
}

// The measurements: names as the semantic conventions write them, units as each SDK
// spells them (sentry-go: Sentry's unit names; OTel: UCUM).
const (
	ordersName   = "shop.orders"
	queueName    = "shop.queue.depth"
	durationName = "shop.checkout.duration"
)

var shopAttrs = []metricAttr{
	{"shop.region", "eu-west"},
	{"shop.express", true},
	{"shop.items", int64(3)},
	{"shop.discount", 0.15},
}

// metricsRun is what the program did that the checks need: the ids of the span it
// recorded one distribution in.
type metricsRun struct {
	traceID, spanID string
}

// runMetricsProgram records two collections: counters 3 then 2, gauges 12.5 then 7,
// distributions of 120 and 80 ms then 200 ms (the 200 ms inside a span).
func runMetricsProgram(t *testing.T, in meterInstrumentation, units map[string]string) metricsRun {
	t.Helper()
	ctx := t.Context()
	in.count(ctx, ordersName, "", 3, shopAttrs...)
	in.gauge(ctx, queueName, "", 12.5, shopAttrs[:1]...)
	in.distribution(ctx, durationName, units["ms"], 120, shopAttrs[:1]...)
	in.distribution(ctx, durationName, units["ms"], 80, shopAttrs[:1]...)
	in.collect(t)
	in.count(ctx, ordersName, "", 2, shopAttrs...)
	in.gauge(ctx, queueName, "", 7, shopAttrs[:1]...)
	var run metricsRun
	run.traceID, run.spanID = in.inSpan(ctx, func(ctx context.Context) {
		in.distribution(ctx, durationName, units["ms"], 200, shopAttrs[:1]...)
	})
	in.collect(t)
	return run
}
