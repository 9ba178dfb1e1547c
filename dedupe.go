package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"container/list"
	"strings"
	"sync"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/errorshape"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// Bounds of what the dedupe window holds, across all projects. An event that
// would pass either is sent at once, not held (and counted in overflow).
const (
	maxHeldErrors     = 2_000
	maxHeldErrorBytes = 32 << 20
)

// dedupe makes one error event of the same exception seen as a span event
// (traces pipeline) and as a log record with exception.* attributes (logs
// pipeline). Those arrive in separate pushes, in either order, possibly
// seconds apart, so each linked error event (one with the input's trace and
// span id) is held for the window, keyed by project, trace id, span id and a
// hash of exception.type and exception.message. When its counterpart from
// the other pipeline arrives in time, the two are merged (errorshape.MergeErrors) and
// sent as one; otherwise the held event is sent when the window ends, or at
// shutdown. Held events are copies: nothing refers to pdata or to a
// translator buffer.
type dedupe struct {
	window              time.Duration
	maxEvents, maxBytes int // maxHeldErrors, maxHeldErrorBytes; lowered by tests

	mu       sync.Mutex
	held     map[dedupeKey]*list.Element // of *heldError
	order    list.List                   // oldest first; the window is fixed, so also by due time
	bytes    int
	overflow int64 // events sent at once because the bounds were reached
	closed   bool  // the final release ran: nothing is held any more, so nothing can be left behind

	// spanHeld, when set, tells whether a span is still held in trace
	// assembly: a log-derived event of such a span stays past its window
	// (its span's event, which it would merge with, is made only when the
	// span is released), for at most holdMore more.
	spanHeld func(trace [16]byte, span [8]byte) bool
	holdMore time.Duration
}

type dedupeKey struct {
	p           *project
	trace       [16]byte
	span        [8]byte
	fingerprint uint64
	fromLog     bool
}

type heldError struct {
	key   dedupeKey
	ev    translate.ErrorEvent
	due   time.Time
	limit time.Time // the latest it stays while its span is held in assembly
}

// released is a held event whose window ended, with the project it goes to.
type released struct {
	p  *project
	ev translate.ErrorEvent
}

func newDedupe(window time.Duration) *dedupe {
	return &dedupe{window: window, maxEvents: maxHeldErrors, maxBytes: maxHeldErrorBytes, held: map[dedupeKey]*list.Element{}}
}

// offerResult says what to do with an offered event.
type offerResult uint8

const (
	offerSend     offerResult = iota // send ev now, as it is
	offerHeld                        // held: nothing to send now
	offerMerged                      // ev is the merge of it and its held counterpart: send it; one event was deduplicated
	offerOverflow                    // the bounds were reached: send ev now
)

// offer takes one error event of project p at now. For offerSend,
// offerMerged and offerOverflow, the returned event is to be sent at once.
func (d *dedupe) offer(p *project, ev *translate.ErrorEvent, now time.Time) (translate.ErrorEvent, offerResult) {
	if !ev.Linked {
		return *ev, offerSend
	}
	key := dedupeKey{p: p, trace: ev.TraceIDBytes, span: ev.SpanID, fingerprint: ev.Fingerprint, fromLog: ev.FromLog}
	other := key
	other.fromLog = !key.fromLog

	d.mu.Lock()
	if el, ok := d.held[other]; ok {
		h := d.remove(el)
		d.mu.Unlock()
		if ev.FromLog {
			return errorshape.MergeErrors(&h.ev, ev), offerMerged
		}
		return errorshape.MergeErrors(ev, &h.ev), offerMerged
	}
	if _, ok := d.held[key]; ok {
		// The same exception twice from one pipeline: two exceptions, not a duplicate.
		d.mu.Unlock()
		return *ev, offerSend
	}
	if d.closed {
		d.mu.Unlock()
		return *ev, offerSend
	}
	if len(d.held) >= d.maxEvents || d.bytes+len(ev.Payload) > d.maxBytes {
		d.overflow++
		d.mu.Unlock()
		return *ev, offerOverflow
	}
	h := &heldError{key: key, ev: ownedCopy(ev), due: now.Add(d.window), limit: now.Add(d.window + d.holdMore)}
	d.held[key] = d.order.PushBack(h)
	d.bytes += len(h.ev.Payload)
	d.mu.Unlock()
	return translate.ErrorEvent{}, offerHeld
}

// remove takes a held event out; d.mu is held.
func (d *dedupe) remove(el *list.Element) *heldError {
	h := d.order.Remove(el).(*heldError)
	delete(d.held, h.key)
	d.bytes -= len(h.ev.Payload)
	return h
}

// due removes and returns the events whose window ended at now (a
// log-derived one whose span is held in assembly waits on, bounded); all of
// them when final (shutdown).
func (d *dedupe) due(now time.Time, final bool) []released {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = d.closed || final
	var out []released
	for el := d.order.Front(); el != nil; el = d.order.Front() {
		h := el.Value.(*heldError)
		if !final && h.due.After(now) {
			break
		}
		if !final && h.key.fromLog && d.spanHeld != nil && now.Before(h.limit) && d.spanHeld(h.key.trace, h.key.span) {
			// its span waits for its root: wait on (to the back, due
			// after now, so this loop ends)
			h.due = now.Add(d.window)
			if h.due.After(h.limit) {
				h.due = h.limit
			}
			d.order.MoveToBack(el)
			continue
		}
		d.remove(el)
		out = append(out, released{p: h.key.p, ev: h.ev})
	}
	return out
}

// takeOverflow returns and resets the count of events not held for lack of room.
func (d *dedupe) takeOverflow() int64 {
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
