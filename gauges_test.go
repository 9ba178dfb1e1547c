package sentryexporter

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The memory budget's gauges: the limit is memory::max_bytes, and what is
// held is what the budget holds: here the children whose root has not come,
// held in assembly, and nothing once they went out with it.
func TestMemoryGauges(t *testing.T) { synctest.Test(t, testMemoryGauges) }

func testMemoryGauges(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Memory.MaxBytes = 32 << 20 })
	defer h.shutdown()
	children, roots := splitTraces(requests(0, 10, 2, false))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	assert.EqualValues(t, 32<<20, h.budgetGauge("otelcol_exporter_sentry_memory_limit_bytes"))
	held := h.budgetGauge("otelcol_exporter_sentry_memory_held_bytes")
	assert.Positive(t, held, "the held children are in the budget")
	assert.Equal(t, h.exp.assemblyHeldBytes(), held, "and nothing else is")
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), roots))
	assert.Zero(t, h.budgetGauge("otelcol_exporter_sentry_memory_held_bytes"), "all went out with their roots")
}

// budgetGauge reads an exporter-wide int64 gauge (-1: no data point).
func (h *harness) budgetGauge(name string) int64 {
	m, err := h.tel.GetMetric(name)
	if err != nil {
		return -1
	}
	dps := m.Data.(metricdata.Gauge[int64]).DataPoints
	if len(dps) != 1 {
		return -1
	}
	return dps[0].Value
}
