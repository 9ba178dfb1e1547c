package encode

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/gate"
)

// metricItems are n trace metrics as internal/tracemetric writes them,
// each at least size bytes.
func metricItems(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		m := fmt.Sprintf(`{"timestamp":1796292000.5,"trace_id":%q,"type":"counter","name":"requests","value":%d,"attributes":{"pad":{"type":"string","value":"`, testTraceID, i)
		m += strings.Repeat("x", max(size-len(m)-4, 0)) + `"}}}`
		out[i] = []byte(m)
	}
	return out
}

// TestAppendTraceMetrics: one trace_metric container per envelope, at most
// 1,000 metrics, no trace header; a metric over max_trace_metric_size is
// counted invalid; a container splits in valid halves after a 413.
func TestAppendTraceMetrics(t *testing.T) {
	f := newFixture(t)
	items := append(metricItems(1500, 200), metricItems(1, maxTraceMetricBytes+1)...)
	out := f.enc.AppendTraceMetrics(t.Context(), nil, items, &Arena{})
	require.Len(t, out, 2)
	total, bytes := 0, int64(0)
	for _, o := range out {
		p := writeAndParse(t, &o.Env)
		require.Len(t, p.Items, 1)
		assert.Equal(t, envelope.ItemTypeTraceMetric, p.Items[0].Type)
		assert.Equal(t, envelope.ContentTypeTraceMetricContainer, p.Items[0].ContentType)
		assert.Nil(t, p.Header.Trace)
		assert.Equal(t, gate.GateTraceMetric, o.Gate)
		assert.Equal(t, int64(p.Items[0].ItemCount), o.Counts[account.CatTraceMetric])
		total += p.Items[0].ItemCount
		bytes += o.Counts[account.CatTraceMetricByte]
	}
	assert.Equal(t, 1500, total)
	assert.Equal(t, int64(1500*len(items[0])), bytes, "trace_metric_byte: each metric's JSON")
	assert.Equal(t, 1000, out[0].Env.Items[0].ItemCount)
	assert.Equal(t, map[string]int64{"trace_metric/invalid": 1, "trace_metric_byte/invalid": int64(len(items[1500]))}, f.dropped(t))

	halves := out[1].Halves()
	var n, nb int64
	for i := range halves {
		writeAndParse(t, &halves[i].Env)
		assert.Equal(t, gate.GateTraceMetric, halves[i].Gate)
		n += halves[i].Counts[account.CatTraceMetric]
		nb += halves[i].Counts[account.CatTraceMetricByte]
	}
	assert.Equal(t, int64(500), n)
	assert.Equal(t, out[1].Counts[account.CatTraceMetricByte], nb, "the halves' bytes are the container's")
}
