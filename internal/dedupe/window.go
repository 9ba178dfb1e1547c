package dedupe

import (
	"container/list"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/errorshape"
	"github.com/otel-sentry/sentryexporter/internal/membudget"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// Bounds of what the dedupe window holds, across all projects, in equal
// shares. An event that would pass either is sent at once, not held (and
// counted in overflow), unless another project holds more than its own
// would with it: then that project gives way.
const (
	maxHeldErrors     = 2_000
	maxHeldErrorBytes = 32 << 20
)

// Window makes one error event of the same exception seen as a span event
// (traces pipeline) and as a log record with exception.* attributes (logs
// pipeline). Those arrive in separate pushes, in either order, possibly
// seconds apart, so each linked error event (one with the input's trace and
// span id) is held for the window, keyed by project (P: whatever the caller routes by), trace id, span id and a
// hash of exception.type and exception.message. When its counterpart from
// the other pipeline arrives in time, the two are merged (errorshape.MergeErrors) and
// sent as one; otherwise the held event is sent when the window ends, or at
// shutdown. Held events are copies: nothing refers to pdata or to a
// translator buffer.
type Window[P comparable] struct {
	Length time.Duration // error_events::dedupe_window
	// MaxEvents, MaxBytes are shared equally by the projects: when full, an
	// event of a project holding less than another makes the project holding
	// most (the one furthest past its share) send its oldest held events
	// early, at the next Due; any other event is sent at once (Overflow). One
	// project's burst of errors never costs another, within its share, the
	// deduplication of its own.
	MaxEvents, MaxBytes int // maxHeldErrors, maxHeldErrorBytes; lowered by tests

	mu        sync.Mutex
	held      map[key[P]]*list.Element // of *heldError
	order     list.List                // oldest first; the window is fixed, so also by due time
	bytes     int
	byProject map[P]*usage
	early     []Released[P] // events that gave way, sent at the next Due
	overflow  int64         // events sent at once because the bounds were reached
	closed    bool          // the final release ran: nothing is held any more, so nothing can be left behind

	// SpanHeld, when set, tells whether a span is still held in trace
	// assembly: a log-derived event of such a span stays past its window
	// (its span's event, which it would merge with, is made only when the
	// span is released), for at most HoldMore more.
	SpanHeld func(p P, trace [16]byte, span [8]byte) bool
	HoldMore time.Duration

	// Mem, when set, is the window's part of the exporter's memory budget:
	// an event is held only once its bytes are reserved there, and sent at
	// once (Overflow) when the budget has no room; each release gives its
	// bytes back.
	Mem *membudget.Holder
}

// usage is what one project holds in the window.
type usage struct{ events, bytes int }

type key[P comparable] struct {
	p           P
	trace       [16]byte
	span        [8]byte
	fingerprint uint64
	fromLog     bool
}

type heldError[P comparable] struct {
	key   key[P]
	ev    translate.ErrorEvent
	due   time.Time
	limit time.Time // the latest it stays while its span is held in assembly
}

// Released is a held event whose window ended, with the project it goes to.
type Released[P comparable] struct {
	P  P
	Ev translate.ErrorEvent
}

// New is a window of length; nothing is held until Offer.
func New[P comparable](length time.Duration) *Window[P] {
	return &Window[P]{Length: length, MaxEvents: maxHeldErrors, MaxBytes: maxHeldErrorBytes, held: map[key[P]]*list.Element{}, byProject: map[P]*usage{}}
}

// Result says what to do with an offered event.
type Result uint8

const (
	Send     Result = iota // send ev now, as it is
	Held                   // held: nothing to send now
	Merged                 // ev is the merge of it and its held counterpart: send it; one event was deduplicated
	Overflow               // the bounds were reached: send ev now
)

// Offer takes one error event of project p at now. For Send,
// Merged and Overflow, the returned event is to be sent at once.
func (d *Window[P]) Offer(p P, ev *translate.ErrorEvent, now time.Time) (translate.ErrorEvent, Result) {
	if !ev.Linked {
		return *ev, Send
	}
	k := key[P]{p: p, trace: ev.TraceIDBytes, span: ev.SpanID, fingerprint: ev.Fingerprint, fromLog: ev.FromLog}
	other := k
	other.fromLog = !k.fromLog

	d.mu.Lock()
	if el, ok := d.held[other]; ok {
		h := d.remove(el)
		d.mu.Unlock()
		if ev.FromLog {
			return errorshape.MergeErrors(&h.ev, ev), Merged
		}
		return errorshape.MergeErrors(ev, &h.ev), Merged
	}
	if _, ok := d.held[k]; ok {
		// The same exception twice from one pipeline: two exceptions, not a duplicate.
		d.mu.Unlock()
		return *ev, Send
	}
	if d.closed {
		d.mu.Unlock()
		return *ev, Send
	}
	if !d.fits(len(ev.Payload)) && !d.giveWay(p, len(ev.Payload)) || !d.reserve(len(ev.Payload)) {
		d.overflow++
		d.mu.Unlock()
		return *ev, Overflow
	}
	h := &heldError[P]{key: k, ev: ownedCopy(ev), due: now.Add(d.Length), limit: now.Add(d.Length + d.HoldMore)}
	d.held[k] = d.order.PushBack(h)
	d.bytes += len(h.ev.Payload)
	u := d.usage(p)
	u.events++
	u.bytes += len(h.ev.Payload)
	d.mu.Unlock()
	return translate.ErrorEvent{}, Held
}

// remove takes a held event out; d.mu is held.
func (d *Window[P]) remove(el *list.Element) *heldError[P] {
	h := d.order.Remove(el).(*heldError[P])
	delete(d.held, h.key)
	d.bytes -= len(h.ev.Payload)
	u := d.usage(h.key.p)
	u.events--
	u.bytes -= len(h.ev.Payload)
	if d.Mem != nil {
		d.Mem.Add(-int64(len(h.ev.Payload)))
	}
	return h
}

// usage is what p holds; d.mu is held.
func (d *Window[P]) usage(p P) *usage {
	u := d.byProject[p]
	if u == nil {
		u = &usage{}
		d.byProject[p] = u
	}
	return u
}

// fits tells whether one more event of n bytes is within the bounds; d.mu
// is held.
func (d *Window[P]) fits(n int) bool {
	return len(d.held) < d.MaxEvents && d.bytes+n <= d.MaxBytes
}

// giveWay makes room for an event of n bytes of p when the bounds are
// full: the project holding most of the full bound (p counted with the
// event) hands its oldest held events to the next Due until the event fits.
// False, and nothing given way, when that project is p itself. d.mu is held.
func (d *Window[P]) giveWay(p P, n int) bool {
	for !d.fits(n) {
		byEvents := len(d.held) >= d.MaxEvents
		holds := func(q P, u *usage) int {
			events, bytes := u.events, u.bytes
			if q == p {
				events, bytes = events+1, bytes+n
			}
			if byEvents {
				return events
			}
			return bytes
		}
		victim, most := p, holds(p, d.usage(p))
		for q, u := range d.byProject {
			if h := holds(q, u); h > most {
				victim, most = q, h
			}
		}
		if victim == p {
			return false
		}
		if !d.sendEarly(victim) {
			return false
		}
	}
	return true
}

// sendEarly hands q's oldest held event to the next Due; false when q holds
// none. d.mu is held.
func (d *Window[P]) sendEarly(q P) bool {
	for el := d.order.Front(); el != nil; el = el.Next() {
		if h := el.Value.(*heldError[P]); h.key.p == q {
			d.early = append(d.early, Released[P]{P: q, Ev: d.remove(el).ev})
			return true
		}
	}
	return false
}

// reserve takes n bytes in the memory budget before an event is held.
func (d *Window[P]) reserve(n int) bool {
	return d.Mem == nil || d.Mem.TryTake(int64(n))
}

// Due removes and returns the events that gave way to another project's
// (Projects) and those whose window ended at now (a log-derived one whose
// span is held in assembly waits on, bounded); all of them when final
// (shutdown).
func (d *Window[P]) Due(now time.Time, final bool) []Released[P] {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = d.closed || final
	out := d.early
	d.early = nil
	for el := d.order.Front(); el != nil; el = d.order.Front() {
		h := el.Value.(*heldError[P])
		if !final && h.due.After(now) {
			break
		}
		if !final && h.key.fromLog && d.SpanHeld != nil && now.Before(h.limit) && d.SpanHeld(h.key.p, h.key.trace, h.key.span) {
			// its span waits for its root: wait on (to the back, due
			// after now, so this loop ends)
			h.due = now.Add(d.Length)
			if h.due.After(h.limit) {
				h.due = h.limit
			}
			d.order.MoveToBack(el)
			continue
		}
		d.remove(el)
		out = append(out, Released[P]{P: h.key.p, Ev: h.ev})
	}
	return out
}

// Holds reports whether p has events held or waiting for the next Due.
func (d *Window[P]) Holds(p P) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if u := d.byProject[p]; u != nil && u.events > 0 {
		return true
	}
	return slices.ContainsFunc(d.early, func(r Released[P]) bool { return r.P == p })
}

// Forget drops p's bookkeeping (a retired project's) when it holds
// nothing; an event of p offered later is held as any other.
func (d *Window[P]) Forget(p P) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if u := d.byProject[p]; u != nil && u.events == 0 {
		delete(d.byProject, p)
	}
}

// TakeOverflow returns and resets the count of events not held for lack of room.
func (d *Window[P]) TakeOverflow() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.overflow
	d.overflow = 0
	return n
}

// ownedCopy copies an event's payload and strings out of the translator's
// buffers, which are reused once the push is over.
func ownedCopy(ev *translate.ErrorEvent) translate.ErrorEvent {
	c := *ev
	c.Payload = append([]byte(nil), ev.Payload...)
	c.EventID = strings.Clone(ev.EventID)
	c.TraceID = strings.Clone(ev.TraceID)
	c.Environment = strings.Clone(ev.Environment)
	c.Release = strings.Clone(ev.Release)
	c.Transaction = strings.Clone(ev.Transaction)
	return c
}
