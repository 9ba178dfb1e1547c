package translate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestSpanV2ConventionNames checks the attribute names of @sentry/conventions
// 0.33 on span v2 items: the segment name source only on the segment span,
// sentry.kind and sentry.status.message, and each span's own name kept.
func TestSpanV2ConventionNames(t *testing.T) {
	td := serverTrace(ptrace.SpanKindServer, map[string]any{"http.request.method": "GET", "http.route": "/a/{id}"})
	child0 := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	child0.SetKind(ptrace.SpanKindInternal)
	child0.Status().SetMessage("slow")
	r := New(testOptions()).Traces(td, TracesWant{SpanV2: true})
	require.Len(t, r.SpanGroups, 1)
	require.Len(t, r.SpanGroups[0].Items, 2)
	type item struct {
		Name       string
		IsSegment  bool `json:"is_segment"`
		Attributes map[string]struct{ Value any }
	}
	var seg, child item
	require.NoError(t, json.Unmarshal(r.SpanGroups[0].Items[0], &seg))
	require.NoError(t, json.Unmarshal(r.SpanGroups[0].Items[1], &child))
	require.True(t, seg.IsSegment)
	assert.Equal(t, "GET /a/{id}", seg.Name)
	assert.Equal(t, "work", child.Name, "a child keeps its own name")
	for _, it := range []item{seg, child} {
		assert.Equal(t, "GET /a/{id}", it.Attributes["sentry.segment.name"].Value)
		assert.Equal(t, "0101010101010101", it.Attributes["sentry.segment.id"].Value)
		for _, old := range []string{"sentry.span.source", "sentry.source", "otel.kind", "otel.status_message"} {
			assert.NotContains(t, it.Attributes, old)
		}
	}
	assert.Equal(t, "route", seg.Attributes["sentry.segment.name.source"].Value)
	assert.NotContains(t, child.Attributes, "sentry.segment.name.source", "only on segment spans")
	assert.Equal(t, "server", seg.Attributes["sentry.kind"].Value)
	assert.Equal(t, "internal", child.Attributes["sentry.kind"].Value)
	assert.Equal(t, "slow", child.Attributes["sentry.status.message"].Value)
}
