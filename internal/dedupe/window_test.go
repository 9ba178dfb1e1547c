package dedupe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/errorshape/errorshapetest"
	"github.com/otel-sentry/sentryexporter/internal/membudget"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// project stands for the caller's project: any comparable key.
type project struct{ int }

func TestDedupe(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p1, p2 := &project{1}, &project{2}
	type step struct {
		at   time.Duration
		p    *project
		ev   func() translate.ErrorEvent
		want Result
	}
	unlinked := func() translate.ErrorEvent { e := errorshapetest.LogEvent(false); e.Linked = false; return e }
	otherExc := func() translate.ErrorEvent { e := errorshapetest.LogEvent(false); e.Fingerprint = 7; return e }
	otherSpan := func() translate.ErrorEvent { e := errorshapetest.LogEvent(false); e.SpanID = [8]byte{3}; return e }
	span := func() translate.ErrorEvent { return errorshapetest.SpanEvent(true) }
	log := func() translate.ErrorEvent { return errorshapetest.LogEvent(false) }
	tests := []struct {
		name        string
		steps       []step
		releaseAt   time.Duration
		wantRelease int // released at releaseAt
		wantLeft    int // still held then (released at shutdown)
	}{
		{"span first, log within the window", []step{{0, p1, span, Held}, {4 * time.Second, p1, log, Merged}}, 10 * time.Second, 0, 0},
		{"log first, span within the window", []step{{0, p1, log, Held}, {4 * time.Second, p1, span, Merged}}, 10 * time.Second, 0, 0},
		{"the window ended: released, the late one held anew", []step{{0, p1, span, Held}}, 5 * time.Second, 1, 0},
		{"not yet due", []step{{0, p1, span, Held}}, 4 * time.Second, 0, 1},
		{"no trace or span id: sent at once", []step{{0, p1, unlinked, Send}}, 0, 0, 0},
		{"another exception of the span is not a duplicate", []step{{0, p1, span, Held}, {time.Second, p1, otherExc, Held}}, 5 * time.Second, 1, 1},
		{"another span is not a duplicate", []step{{0, p1, span, Held}, {time.Second, p1, otherSpan, Held}}, 5500 * time.Millisecond, 1, 1},
		{"another project is not a duplicate", []step{{0, p1, span, Held}, {time.Second, p2, log, Held}}, 0, 0, 2},
		{"the same exception twice from one pipeline: both sent", []step{{0, p1, span, Held}, {time.Second, p1, span, Send}}, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New[*project](5 * time.Second)
			for i, s := range tt.steps {
				ev := s.ev()
				got, what := d.Offer(s.p, &ev, t0.Add(s.at))
				require.Equal(t, s.want, what, "step %d", i)
				if what == Merged {
					doc := errorshapetest.ValidEvent(t, got)
					assert.Equal(t, "GET /cart/{id}", doc["transaction"])
					assert.Equal(t, map[string]any{"formatted": "checkout failed"}, doc["message"])
				}
			}
			assert.Len(t, d.Due(t0.Add(tt.releaseAt), false), tt.wantRelease)
			assert.Len(t, d.Due(t0.Add(tt.releaseAt), true), tt.wantLeft, "shutdown releases the rest")
			assert.Empty(t, d.held)
			assert.Zero(t, d.bytes)
		})
	}
}

// A held event is a copy: the translator's buffer may be reused after the push.
func TestDedupeHoldsCopies(t *testing.T) {
	d := New[*project](time.Second)
	ev := errorshapetest.SpanEvent(false)
	want := string(ev.Payload)
	_, what := d.Offer(&project{}, &ev, time.Time{})
	require.Equal(t, Held, what)
	for i := range ev.Payload {
		ev.Payload[i] = 'x'
	}
	rel := d.Due(time.Time{}, true)
	require.Len(t, rel, 1)
	assert.Equal(t, want, string(rel[0].Ev.Payload))
}

func TestDedupeBound(t *testing.T) {
	d := New[*project](time.Second)
	d.MaxEvents = 2
	p := &project{}
	for i := range 3 {
		ev := errorshapetest.SpanEvent(false)
		ev.Fingerprint = uint64(i)
		_, what := d.Offer(p, &ev, time.Time{})
		if i < 2 {
			assert.Equal(t, Held, what)
		} else {
			assert.Equal(t, Overflow, what, "over the cap: sent at once, not held")
		}
	}
	assert.EqualValues(t, 1, d.TakeOverflow())
	assert.Zero(t, d.TakeOverflow())

	d = New[*project](time.Second)
	ev := errorshapetest.SpanEvent(false)
	d.MaxBytes = len(ev.Payload) - 1
	_, what := d.Offer(p, &ev, time.Time{})
	assert.Equal(t, Overflow, what, "over the byte cap")
}

// TestDedupeReservesBeforeItHolds: an event is held only once its bytes are
// reserved in the memory budget; with no room it is sent at once, and a
// release (merge or window's end) gives its bytes back.
func TestDedupeReservesBeforeItHolds(t *testing.T) {
	ev := errorshapetest.SpanEvent(false)
	n := int64(len(ev.Payload))
	mem := membudget.NewMemory(n+n/2, 1)
	d := New[*project](time.Second)
	d.Mem = mem.NewHolder()
	p := &project{}
	_, what := d.Offer(p, &ev, time.Time{})
	require.Equal(t, Held, what)
	assert.Equal(t, n, mem.Held())
	second := errorshapetest.SpanEvent(false)
	second.Fingerprint++
	_, what = d.Offer(p, &second, time.Time{})
	assert.Equal(t, Overflow, what, "no room in the budget: sent at once")
	assert.Equal(t, n, mem.Held())
	assert.Len(t, d.Due(time.Time{}.Add(time.Hour), false), 1)
	assert.Zero(t, mem.Held(), "released: its bytes given back")
}

// TestDueWaitsForHeldSpan: a log-derived event whose span is still held in
// trace assembly stays past its window (its span's event is made only when
// the span is released), in steps of the window, until Length + HoldMore
// after it was offered; nothing else waits, and shutdown waits for nothing.
// The window is 5 s and HoldMore 10 s: the event's limit is at 15 s.
func TestDueWaitsForHeldSpan(t *testing.T) {
	for _, tt := range heldSpanCases {
		t.Run(tt.name, func(t *testing.T) { runHeldSpanCase(t, tt) })
	}
}

// heldSpanLog is an error from a log on a span that the cases hold,
// heldSpanOther one from a log on another span, and heldSpanEvent one
// derived from a span; their event ids start with b, c and a.
var (
	heldSpanLog   = errorshapetest.LogEvent(false)
	heldSpanEvent = errorshapetest.SpanEvent(false)
	heldSpanOther = logOnOtherSpan()
)

// logOnOtherSpan is an error from a log on a span no case holds.
func logOnOtherSpan() translate.ErrorEvent {
	ev := errorshapetest.LogEvent(false)
	ev.SpanID = [8]byte{9}
	ev.EventID = "c" + ev.EventID[1:]
	return ev
}

// spanAlwaysHeld and spanNeverHeld answer SpanHeld the same at any time.
func spanAlwaysHeld(time.Duration, [8]byte) bool { return true }
func spanNeverHeld(time.Duration, [8]byte) bool  { return false }

// heldSpanDue is one Due call, at a time after the offers, and the event
// ids it must release, in order.
type heldSpanDue struct {
	at    time.Duration
	final bool
	want  []string
}

type heldSpanCase struct {
	name  string
	offer []translate.ErrorEvent // all at once, in this order
	// held tells whether span is held in assembly at the time of the
	// Due call (nil: no assembly, SpanHeld is nil).
	held func(at time.Duration, span [8]byte) bool
	dues []heldSpanDue
}

var heldSpanCases = []heldSpanCase{
	{
		"span held: waits in steps of the window, up to its limit",
		[]translate.ErrorEvent{heldSpanLog},
		spanAlwaysHeld,
		[]heldSpanDue{{5 * time.Second, false, nil}, {10 * time.Second, false, nil}, {14 * time.Second, false, nil}, {15 * time.Second, false, []string{heldSpanLog.EventID}}},
	},
	{
		"the step that would pass the limit stops at it",
		[]translate.ErrorEvent{heldSpanLog},
		spanAlwaysHeld,
		[]heldSpanDue{{7 * time.Second, false, nil}, {12 * time.Second, false, nil}, {15 * time.Second, false, []string{heldSpanLog.EventID}}},
	},
	{
		"span released meanwhile: the event goes at its next due time",
		[]translate.ErrorEvent{heldSpanLog},
		func(at time.Duration, _ [8]byte) bool { return at < 8*time.Second },
		[]heldSpanDue{{5 * time.Second, false, nil}, {9 * time.Second, false, nil}, {10 * time.Second, false, []string{heldSpanLog.EventID}}},
	},
	{
		"span not held: released when the window ends",
		[]translate.ErrorEvent{heldSpanLog},
		spanNeverHeld,
		[]heldSpanDue{{4 * time.Second, false, nil}, {5 * time.Second, false, []string{heldSpanLog.EventID}}},
	},
	{
		"no assembly (SpanHeld nil): released when the window ends",
		[]translate.ErrorEvent{heldSpanLog},
		nil,
		[]heldSpanDue{{5 * time.Second, false, []string{heldSpanLog.EventID}}},
	},
	{
		"a span-derived event never waits for its span",
		[]translate.ErrorEvent{heldSpanEvent},
		spanAlwaysHeld,
		[]heldSpanDue{{5 * time.Second, false, []string{heldSpanEvent.EventID}}},
	},
	{
		"shutdown waits for no held span",
		[]translate.ErrorEvent{heldSpanLog},
		spanAlwaysHeld,
		[]heldSpanDue{{5 * time.Second, false, nil}, {6 * time.Second, true, []string{heldSpanLog.EventID}}},
	},
	{
		"a waiting event does not hold back one behind it",
		[]translate.ErrorEvent{heldSpanLog, heldSpanOther},
		func(_ time.Duration, span [8]byte) bool { return span == heldSpanLog.SpanID },
		[]heldSpanDue{{5 * time.Second, false, []string{heldSpanOther.EventID}}, {15 * time.Second, false, []string{heldSpanLog.EventID}}},
	},
}

// runHeldSpanCase offers tt's events to a 5 s window with HoldMore 10 s,
// makes its Due calls and checks what each releases, and that nothing is
// left held at the end.
func runHeldSpanCase(t *testing.T, tt heldSpanCase) {
	t.Helper()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	d := New[*project](5 * time.Second)
	d.HoldMore = 10 * time.Second
	var at time.Duration
	p := &project{}
	if tt.held != nil {
		d.SpanHeld = func(held *project, trace [16]byte, span [8]byte) bool {
			assert.Same(t, p, held, "asked of the event's project")
			assert.Equal(t, heldSpanLog.TraceIDBytes, trace)
			return tt.held(at, span)
		}
	}
	for i := range tt.offer {
		ev := tt.offer[i]
		_, what := d.Offer(p, &ev, t0)
		require.Equal(t, Held, what)
	}
	for _, s := range tt.dues {
		at = s.at
		var got []string
		for _, r := range d.Due(t0.Add(s.at), s.final) {
			got = append(got, r.Ev.EventID)
		}
		assert.Equal(t, s.want, got, "at %v (final %v)", s.at, s.final)
	}
	assert.Empty(t, d.held, "everything released")
}

// TestBurstCostsOnlyItsOwnShare: two projects share a window of 10 events.
// A bursting project fills it; the quiet one's events are still held (and
// merge with their counterparts), the burster's oldest going out early at
// the next Due; the burster's further events, past its share, are sent at
// once. Nothing is dropped.
func TestBurstCostsOnlyItsOwnShare(t *testing.T) {
	d := New[*project](time.Minute)
	d.MaxEvents = 10
	burst, quiet := &project{1}, &project{2}
	offer := func(p *project, fp uint64, fromLog bool) Result {
		ev := errorshapetest.SpanEvent(false)
		if fromLog {
			ev = errorshapetest.LogEvent(false)
		}
		ev.Fingerprint = fp
		_, what := d.Offer(p, &ev, time.Time{})
		return what
	}
	for i := range 10 {
		require.Equal(t, Held, offer(burst, uint64(i), false))
	}
	for i := range 5 {
		assert.Equal(t, Held, offer(quiet, uint64(100+i), false), "quiet's event %d held within its share", i)
	}
	assert.Equal(t, Overflow, offer(burst, 10, false), "past its share, the burster's next is sent at once")
	assert.Equal(t, Overflow, offer(quiet, 105, false), "quiet's sixth is past its share too")
	for i := range 5 {
		assert.Equal(t, Merged, offer(quiet, uint64(100+i), true), "quiet's event %d finds its counterpart", i)
	}
	early := d.Due(time.Time{}, false)
	require.Len(t, early, 5, "the burster's five oldest went out early")
	for i, r := range early {
		assert.Same(t, burst, r.P)
		assert.Equal(t, uint64(i), r.Ev.Fingerprint, "oldest first")
	}
	assert.Len(t, d.Due(time.Time{}, true), 5, "the burster's other five at the end")
	assert.EqualValues(t, 2, d.TakeOverflow())
}

// TestHoldsAndForget: a project holds its held events and those that gave
// way until a Due releases them; Forget drops the bookkeeping only of a
// project that holds nothing.
func TestHoldsAndForget(t *testing.T) {
	d := New[*project](time.Second)
	d.MaxEvents = 2
	p, q := &project{1}, &project{2}
	assert.False(t, d.Holds(p))
	for i := range 2 {
		ev := errorshapetest.SpanEvent(false)
		ev.Fingerprint = uint64(i + 10)
		_, what := d.Offer(p, &ev, time.Time{})
		require.Equal(t, Held, what)
	}
	assert.True(t, d.Holds(p))
	d.Forget(p)
	assert.Contains(t, d.byProject, p, "a project holding events keeps its bookkeeping")

	other := errorshapetest.SpanEvent(false)
	other.Fingerprint++
	_, what := d.Offer(q, &other, time.Time{})
	require.Equal(t, Held, what, "p gave way to q")
	assert.True(t, d.Holds(p), "what gave way waits for the next Due")
	rel := d.Due(time.Time{}, false)
	require.Len(t, rel, 1, "p's event that gave way; the other and q's wait for their window")
	assert.True(t, d.Holds(p))
	rel = d.Due(time.Time{}.Add(time.Minute), false)
	require.Len(t, rel, 2)
	assert.False(t, d.Holds(p))
	d.Forget(p)
	assert.NotContains(t, d.byProject, p)
}
