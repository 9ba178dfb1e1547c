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
func New(t testing.TB) *Telemetry {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.WithoutCancel(t.Context()))) }) // t.Context is done once cleanup runs
	tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	require.NoError(t, err)
	t.Cleanup(tb.Shutdown)
	return &Telemetry{Telemetry: tel, Builder: tb}
}

// Sums returns the points of the int64 sum metric name, keyed by their
// attributes as "key=value" pairs joined by commas, sorted by key (e.g.
// "category=span,project=7,reason=invalid"); empty when never recorded.
func (tel *Telemetry) Sums(t testing.TB, name string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	m, err := tel.GetMetric(name)
	if err != nil {
		return out
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is %T", name, m.Data)
	for _, dp := range sum.DataPoints {
		out[dp.Attributes.Encoded(attribute.DefaultEncoder())] += dp.Value
	}
	return out
}
