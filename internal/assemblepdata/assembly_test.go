package assemblepdata

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/assemble"
)

// owner is a project as the assembly sees it.
type owner struct {
	held  int64
	frags map[assemble.Reason]int64
}

func (o *owner) HoldAssembled(n int64) { o.held += n }

func (o *owner) CountFragments(_ context.Context, why assemble.Reason, n int64) {
	if o.frags == nil {
		o.frags = map[assemble.Reason]int64{}
	}
	o.frags[why] += n
}

// batch is one resource (service) and scope of spans of trace 1: each id
// with its parent (0: none), a local parent when it has one.
func batch(service string, spans ...[2]byte) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("io.opentelemetry.http")
	for _, s := range spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID([16]byte{1})
		sp.SetSpanID([8]byte{s[0]})
		sp.SetName("GET /checkout")
		if s[1] != 0 {
			sp.SetParentSpanID([8]byte{s[1]})
			sp.SetFlags(0x100) // HAS_IS_REMOTE, not remote: a local parent
		}
	}
	return td
}

func TestAdmit(t *testing.T) {
	ctx, now := t.Context(), time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	a := New[*owner](Config{Wait: time.Minute, MaxBytes: 1 << 20})
	front, back := &owner{}, &owner{}

	complete := batch("front", [2]byte{1, 0}, [2]byte{2, 1})
	out, some, others := a.Admit(ctx, now, front, complete)
	assert.True(t, some)
	assert.Equal(t, complete, out, "a complete batch goes on as it is, not copied")
	assert.Nil(t, others)

	// back's child of span 10, which has not come: held, and charged to back.
	_, some, others = a.Admit(ctx, now, back, batch("back", [2]byte{11, 10}))
	assert.False(t, some, "nothing of back's batch goes now")
	assert.Nil(t, others)
	assert.Positive(t, back.held)
	assert.True(t, a.Held(back, [16]byte{1}, [8]byte{11}))

	// Span 10 comes in front's batch (routed elsewhere): another owner's
	// trace, whatever its ids; back's child stays held.
	_, some, others = a.Admit(ctx, now, front, batch("front", [2]byte{10, 0}))
	require.True(t, some)
	assert.Nil(t, others, "front's root releases nothing of back's")
	assert.True(t, a.Held(back, [16]byte{1}, [8]byte{11}))

	// back's own root: the child comes out in back's batch, with its
	// resource and scope.
	out, some, others = a.Admit(ctx, now, back, batch("back", [2]byte{10, 0}))
	require.True(t, some)
	assert.Nil(t, others)
	require.Equal(t, 2, out.SpanCount())
	for i := range out.ResourceSpans().Len() {
		rs := out.ResourceSpans().At(i)
		name, _ := rs.Resource().Attributes().Get("service.name")
		assert.Equal(t, "back", name.Str())
		assert.Equal(t, "io.opentelemetry.http", rs.ScopeSpans().At(0).Scope().Name())
	}
	assert.Zero(t, back.held, "nothing of back's is held any more")
	assert.Empty(t, back.frags, "released with its root: no fragment")

	// A child whose root never comes goes out at shutdown, a fragment.
	_, _, _ = a.Admit(ctx, now, front, batch("front", [2]byte{21, 20}))
	flushed := a.Flush(ctx)
	require.Contains(t, flushed, front)
	assert.Equal(t, 1, flushed[front].SpanCount())
	assert.Equal(t, map[assemble.Reason]int64{assemble.Shutdown: 1}, front.frags)
	assert.Zero(t, front.held)
}

func TestAdmitLateChildGoesOnUncopied(t *testing.T) {
	ctx, now := t.Context(), time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	a := New[*owner](Config{Wait: time.Minute, MaxBytes: 1 << 20})
	front := &owner{}
	_, _, _ = a.Admit(ctx, now, front, batch("front", [2]byte{1, 0}))

	late := batch("front", [2]byte{2, 1})
	out, some, others := a.Admit(ctx, now, front, late)
	assert.True(t, some)
	out.ResourceSpans().At(0).Resource().Attributes().PutStr("k", "v")
	_, same := late.ResourceSpans().At(0).Resource().Attributes().Get("k")
	assert.True(t, same, "a late child goes on with its batch, not copied")
	assert.Nil(t, others)
	assert.Equal(t, map[assemble.Reason]int64{assemble.AfterRoot: 1}, front.frags)
}

// TestAdmitPushesOutAnotherOwners: two owners share room for two and a half
// held spans. back holds two; front's child then pushes out back's oldest
// (back is furthest past its share), which comes out in back's batch among
// the others.
func TestAdmitPushesOutAnotherOwners(t *testing.T) {
	ctx, now := t.Context(), time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	front, back := &owner{}, &owner{}
	probe := New[*owner](Config{Wait: time.Minute, MaxBytes: 1 << 20})
	probe.Admit(ctx, now, back, batch("back", [2]byte{11, 10}))
	size := back.held
	back.held = 0

	a := New[*owner](Config{Wait: time.Minute, MaxBytes: size * 5 / 2})
	_, some, _ := a.Admit(ctx, now, back, batch("back", [2]byte{11, 10}))
	require.False(t, some)
	_, some, _ = a.Admit(ctx, now, back, batch("back", [2]byte{12, 10}))
	require.False(t, some)
	_, some, others := a.Admit(ctx, now, front, batch("front", [2]byte{21, 20}))
	assert.False(t, some, "front's child is held")
	require.Contains(t, others, back, "back's oldest pushed out, to go through back's pipeline")
	require.Equal(t, 1, others[back].SpanCount())
	assert.Equal(t, [8]byte{11}, [8]byte(others[back].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SpanID()))
	assert.Equal(t, map[assemble.Reason]int64{assemble.MemoryBound: 1}, back.frags)
	assert.True(t, a.Held(front, [16]byte{1}, [8]byte{21}))
	assert.True(t, a.Held(back, [16]byte{1}, [8]byte{12}))
}
