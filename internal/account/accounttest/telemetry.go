// Package accounttest is the collector telemetry that tests hold an
// Accountant against: the builder it records with, and a reader of what it
// recorded. Tests only; it records nothing of its own.
package accounttest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otel-sentry/sentryexporter/internal/metadata"
)

// Telemetry is a fresh componenttest telemetry and the exporter's telemetry
// builder on it, both shut down when the test ends.
type Telemetry struct {
	*componenttest.Telemetry
	Builder *metadata.TelemetryBuilder
}

// New is a Telemetry for t.
func New(tb testing.TB) *Telemetry {
	tb.Helper()
	tel := componenttest.NewTelemetry()
	tb.Cleanup(func() { require.NoError(tb, tel.Shutdown(context.WithoutCancel(tb.Context()))) }) // tb.Context is done once cleanup runs
	builder, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	require.NoError(tb, err)
	tb.Cleanup(builder.Shutdown)
	return &Telemetry{Telemetry: tel, Builder: builder}
}

// Sums returns the points of the int64 sum metric name, keyed by their
// attributes as "key=value" pairs joined by commas, sorted by key (e.g.
// "category=span,project=7,reason=invalid"); empty when never recorded.
func (tel *Telemetry) Sums(tb testing.TB, name string) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	m, err := tel.GetMetric(name)
	if err != nil {
		return out
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(tb, ok, "%s is %T", name, m.Data)
	for _, dp := range sum.DataPoints {
		out[dp.Attributes.Encoded(attribute.DefaultEncoder())] += dp.Value
	}
	return out
}
