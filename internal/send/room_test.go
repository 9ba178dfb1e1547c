package send

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/encode"
)

// holds is what a lane holds before it is asked for room.
type holds struct {
	inFlight int64 // bytes held with nothing to drop
	queued   int   // envelopes of 1 000 bytes waiting
}

func (h holds) fill(l *Lane) {
	l.mem.Add(h.inFlight)
	for i := range h.queued {
		pushJob(l, &l.ready, &job{out: tx(i), held: 1000})
	}
}

// TestMakeRoom: the memory budget's rules when it is full (stage.makeRoom):
// the lane furthest past its share (the asking one counted with what it
// asks) drops its oldest envelope not in flight, as often as needed and no
// more; a lane with nothing left to drop is skipped; a lane within its share
// never gives way; with no lane left to give way, the asking lane takes its
// envelope if it stays within its share, and drops it otherwise, even when
// it holds nothing; an envelope no drop could make room for costs no lane
// an envelope.
//
// The budget is 10 000 bytes for 2 projects, a share of 5 000; A asks.
func TestMakeRoom(t *testing.T) {
	tests := []struct {
		name     string
		a, b     holds
		ask      int64
		ok       bool
		dropsA   int64 // envelopes dropped as queue_overflow
		dropsB   int64
		wantHeld int64 // the budget's total afterwards
	}{
		{name: "room: taken", b: holds{queued: 5}, ask: 5000, ok: true, wantHeld: 10000},
		{name: "B drops one, then it fits exactly", b: holds{queued: 9}, ask: 2000, ok: true, dropsB: 1, wantHeld: 10000},
		{name: "B drops three", b: holds{queued: 9}, ask: 3500, ok: true, dropsB: 3, wantHeld: 9500},
		{name: "A, past its share with what it asks, drops its own oldest", a: holds{queued: 5}, b: holds{queued: 5}, ask: 1000, ok: true, dropsA: 1, wantHeld: 10000},
		{name: "B furthest past its share gives way, not A", a: holds{queued: 3}, b: holds{queued: 7}, ask: 1000, ok: true, dropsB: 1, wantHeld: 10000},
		{
			// B is furthest past its share but has nothing to drop; A drops
			// one, then is within its share with what it asks
			name: "B with nothing to drop is skipped", a: holds{queued: 3}, b: holds{inFlight: 7000}, ask: 3000,
			ok: true, dropsA: 1, wantHeld: 12000,
		},
		{name: "a lane within its share never gives way: refused", a: holds{inFlight: 4500}, b: holds{queued: 5}, ask: 1000, ok: false, wantHeld: 9500},
		{name: "within its share, all else in flight: taken over the budget", a: holds{inFlight: 3000}, b: holds{inFlight: 7000}, ask: 1000, ok: true, wantHeld: 11000},
		{name: "up to exactly its share: taken", a: holds{inFlight: 4000}, b: holds{inFlight: 6000}, ask: 1000, ok: true, wantHeld: 11000},
		{name: "past its share with nothing to drop: refused", a: holds{inFlight: 4500}, b: holds{inFlight: 5500}, ask: 1000, ok: false, wantHeld: 10000},
		{name: "larger than a share, A holding nothing, all else in flight: refused", b: holds{inFlight: 9000}, ask: 6000, ok: false, wantHeld: 9000},
		{name: "larger than the budget, A holding nothing: refused", b: holds{inFlight: 9000}, ask: 20000, ok: false, wantHeld: 9000},
		{name: "larger than a share, A holding nothing, room in the total: taken", b: holds{inFlight: 3000}, ask: 6000, ok: true, wantHeld: 9000},
		{name: "larger than a share, more than B's drops could free: refused, B drops none", b: holds{queued: 9}, ask: 6000, ok: false, wantHeld: 9000},
		{name: "larger than the budget: refused, B drops none", b: holds{queued: 9}, ask: 20000, ok: false, wantHeld: 9000},
		{name: "larger than a share, A holding something: refused", a: holds{inFlight: 1}, b: holds{inFlight: 9000}, ask: 20000, ok: false, wantHeld: 9001},
	}
	for _, tt := range tests {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t, 2, func(c *Config) {
				c.MaxBytes = 10000
				c.MaxProjects = 2
			}, false)
			a, b := f.lanes[0], f.lanes[1]
			tt.a.fill(a)
			tt.b.fill(b)
			assert.Equal(t, tt.ok, f.stage.makeRoom(a, tt.ask))
			drops := f.sums("dropped_items")
			assert.Equal(t, tt.dropsA, drops["category=transaction,project=1,reason=queue_overflow"], "A's drops")
			assert.Equal(t, tt.dropsB, drops["category=transaction,project=2,reason=queue_overflow"], "B's drops")
			assert.Equal(t, tt.wantHeld, f.stage.mem.Held(), "held in all")
			assert.Equal(t, a.Held()+b.Held(), f.stage.mem.Held())
		})
	}
}

// TestRoomForTheRequest: the copies of a body in flight are reserved before
// the attempt: an envelope that fits in the budget but whose request does
// not, with nothing to give way, is dropped (queue_overflow) and never
// sent; with room, it is sent, and everything is given back once answered.
func TestRoomForTheRequest(t *testing.T) {
	for _, tt := range []struct {
		name     string
		maxBytes int64
		sent     bool
	}{
		{"no room for the request", 200 << 10, false},
		{"room", 1 << 20, true},
	} {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t, 1, func(c *Config) { c.MaxBytes, c.MaxProjects = tt.maxBytes, 1 }, false)
			o := tx(1)
			o.Env.Items[0].Payload = []byte(`{"pad":"` + strings.Repeat("x", 100<<10) + `"}`)
			require.Less(t, envelopeSize(&o.Env), tt.maxBytes, "the envelope alone fits")
			f.lanes[0].Offer(t.Context(), []encode.Outgoing{o}, nil)
			synctest.Wait()
			assert.Equal(t, tt.sent, len(f.sentry.got()) == 1, "sent")
			if !tt.sent {
				assert.Equal(t, int64(1), f.sums("dropped_items")["category=transaction,project=1,reason=queue_overflow"])
			}
			assert.Zero(t, f.stage.mem.Held(), "all given back")
			f.shutdown()
		})
	}
}
