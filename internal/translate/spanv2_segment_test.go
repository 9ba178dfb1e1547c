package translate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestSpanV2SegmentOnlyForLocalRoots: a span whose parent is absent from the
// batch is a segment only when it is a local root (no parent, a remote
// parent by the span flags, or a SERVER/CONSUMER span where the flags do not
// say). Otherwise it is a fragment: it claims no segment (no is_segment, no
// sentry.segment.*), neither do its children, and Sentry assembles it.
func TestSpanV2SegmentOnlyForLocalRoots(t *testing.T) {
	tests := []struct {
		name      string
		parent    bool
		flags     uint32
		kind      ptrace.SpanKind
		isSegment bool
	}{
		{"no parent", false, 0, ptrace.SpanKindInternal, true},
		{"remote parent by flags", true, 0x300, ptrace.SpanKindInternal, true},
		{"local parent by flags, even a server span", true, 0x100, ptrace.SpanKindServer, false},
		{"no flags: server", true, 0, ptrace.SpanKindServer, true},
		{"no flags: consumer", true, 0, ptrace.SpanKindConsumer, true},
		{"no flags: internal child whose parent is not here", true, 0, ptrace.SpanKindInternal, false},
		{"no flags: client child whose parent is not here", true, 0, ptrace.SpanKindClient, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := ptrace.NewTraces()
			sps := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			top := sps.AppendEmpty()
			top.SetTraceID([16]byte{1})
			top.SetSpanID([8]byte{2})
			if tt.parent {
				top.SetParentSpanID([8]byte{9})
			}
			top.SetFlags(tt.flags)
			top.SetKind(tt.kind)
			top.SetName("SELECT 1")
			child := sps.AppendEmpty()
			child.SetTraceID([16]byte{1})
			child.SetSpanID([8]byte{3})
			child.SetParentSpanID([8]byte{2})
			child.SetName("child")
			r := New(testOptions()).Traces(td, TracesWant{SpanV2: true})
			require.Len(t, r.SpanGroups, 1)
			require.Len(t, r.SpanGroups[0].Items, 2)
			for i, raw := range r.SpanGroups[0].Items {
				assertSegmentClaim(t, raw, i, tt.isSegment)
			}
		})
	}
}

// assertSegmentClaim checks item i of a two-span group whose top span is a
// segment when isSegment: only the top is one, and both claim it (or,
// without a segment, neither claims any).
func assertSegmentClaim(t *testing.T, raw []byte, i int, isSegment bool) {
	t.Helper()
	var it struct {
		IsSegment  bool `json:"is_segment"`
		Attributes map[string]struct{ Value any }
	}
	require.NoError(t, json.Unmarshal(raw, &it))
	assert.Equal(t, isSegment && i == 0, it.IsSegment, "item %d", i)
	if isSegment {
		assert.Equal(t, "0200000000000000", it.Attributes["sentry.segment.id"].Value, "item %d", i)
		assert.Equal(t, "SELECT 1", it.Attributes["sentry.segment.name"].Value, "item %d", i)
		return
	}
	for _, k := range []string{"sentry.segment.id", "sentry.segment.name", "sentry.segment.name.source"} {
		assert.NotContains(t, it.Attributes, k, "item %d", i)
	}
}
