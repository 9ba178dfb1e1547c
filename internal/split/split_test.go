package split

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func byService(r pcommon.Resource) string {
	v, _ := r.Attributes().Get("service.name")
	return v.AsString()
}

func TestBySplitsEachSignalByTarget(t *testing.T) {
	services := []string{"checkout", "cart", "checkout", ""}

	td := ptrace.NewTraces()
	ld := plog.NewLogs()
	md := pmetric.NewMetrics()
	for i, s := range services {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", s)
		rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName(s)
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", s)
		rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(s)
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", s)
		rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(i))
	}

	tp := By(Traces(), td, byService)
	require.Len(t, tp, 3)
	assert.Equal(t, []string{"checkout", "cart", ""}, []string{tp[0].To, tp[1].To, tp[2].To})
	assert.Equal(t, 2, tp[0].Batch.SpanCount())
	assert.Equal(t, 1, tp[1].Batch.SpanCount())

	lp := By(Logs(), ld, byService)
	require.Len(t, lp, 3)
	assert.Equal(t, 2, lp[0].Batch.LogRecordCount())

	mp := By(Metrics(), md, byService)
	require.Len(t, mp, 3)
	assert.Equal(t, 2, mp[0].Batch.DataPointCount())
	assert.Equal(t, int64(2), mp[0].Batch.ResourceMetrics().At(1).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().At(0).IntValue(),
		"resources keep their order within a part")
}

func TestByHandsOnABatchOfOneTargetUncopied(t *testing.T) {
	ld := plog.NewLogs()
	for range 3 {
		ld.ResourceLogs().AppendEmpty().Resource().Attributes().PutStr("service.name", "cart")
	}
	parts := By(Logs(), ld, byService)
	require.Len(t, parts, 1)
	assert.Equal(t, "cart", parts[0].To)
	// the same batch, not a copy: a change through one shows through the other
	parts[0].Batch.ResourceLogs().At(0).Resource().Attributes().PutStr("k", "v")
	_, ok := ld.ResourceLogs().At(0).Resource().Attributes().Get("k")
	assert.True(t, ok)
}

func TestByEmptyBatchHasNoPart(t *testing.T) {
	assert.Empty(t, By(Metrics(), pmetric.NewMetrics(), byService))
}
