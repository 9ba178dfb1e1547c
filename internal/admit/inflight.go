package admit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// RequestOverhead is what one request in flight holds beyond its two bodies
// (the encoded envelope and its compressed copy, both counted): the
// connection's bufio reader and writer (4 KiB each), the transport's read and
// write goroutines and the worker's own stack (8 KiB or more each), the
// request, response and header structures. Counted against
// pending::max_bytes_in_flight with the bodies.
const RequestOverhead = 32 << 10

// stallAfter is how long a project may have requests in flight without any
// answer before it counts as stalled: from then on it borrows nothing beyond
// its share, so a Sentry that stops answering cannot draw more of the budget
// than its project held when it stopped (plus its share) while its requests
// wait for `timeout`. Far above any healthy answer time.
const stallAfter = 5 * time.Second

// Budget bounds the requests in flight over the whole exporter, in
// number (pending::max_requests_in_flight) and in bytes
// (pending::max_bytes_in_flight: both bodies of each request plus
// RequestOverhead), and shares them fairly between the projects:
//
//   - each project has a concurrency limit of its own (Limit,
//     AIMD): it grows by one per answered request while at least half of it
//     is in use, up to max_concurrent_requests, falls to one request in flight (a probe) when a
//     request gets no answer (a timeout, a connect that never completes) and
//     halves on a 5xx;
//   - within its share (max_requests_in_flight / routing::max_projects
//     requests, max_bytes_in_flight / routing::max_projects bytes, at least
//     one request however large) a project never waits on what the others
//     hold; beyond its share it borrows from the budget only while the total
//     is under it, and only while it is not stalled (requests in flight and
//     no answer for stallAfter). The totals so stay under twice the budget whatever Sentry
//     does, and projects that hang cannot take the healthy ones' shares.
//
// Waiters are served first come first served among those that fit: a project
// at its own limit does not hold up the others.
type Budget struct {
	maxRequests, shareRequests int
	maxBytes, shareBytes       int64
	now                        func() time.Time // time.Now; tests replace it

	mu       sync.Mutex
	requests int
	bytes    int64
	waiters  []*inflightWaiter
}

func NewBudget(maxRequests int, maxBytes int64, maxProjects int) *Budget {
	n := max(maxProjects, 1)
	return &Budget{
		maxRequests: maxRequests, shareRequests: max(maxRequests/n, 1),
		maxBytes: maxBytes, shareBytes: maxBytes / int64(n),
		now: time.Now,
	}
}

// Limit is one project's adaptive limit and what it holds now.
// Guarded by its budget's mu.
type Limit struct {
	budget *Budget
	max    int // max_concurrent_requests
	limit  int // 1..max
	// current mirrors limit for Current, which the project's queue reads on
	// every hand-over: no lock shared by all projects on that path.
	current  atomic.Int32
	requests int
	bytes    int64
	// progress is when the project last got an answer, or went from nothing
	// in flight to one request: with requests in flight and progress older
	// than stallAfter, the project is stalled.
	progress time.Time
}

func (b *Budget) NewLimit(maxConcurrent int) *Limit {
	// A new project starts with one request in flight: a Sentry that never
	// answers costs one request, and a healthy one doubles its limit every
	// round trip (one more per answer) up to max_concurrent_requests.
	l := &Limit{budget: b, max: maxConcurrent, limit: 1}
	l.current.Store(1)
	return l
}

type inflightWaiter struct {
	lim   *Limit
	cost  int64
	ready chan struct{} // closed once admitted
}

// fitsLocked: within the project's adaptive limit, and within its share or
// within what the budget has left. A project holding nothing may always send
// one request (its probe), however large.
func (l *Limit) fitsLocked(cost int64) bool {
	if l.requests >= l.limit {
		return false
	}
	if l.requests == 0 {
		return true
	}
	b := l.budget
	if l.requests < b.shareRequests && l.bytes+cost <= b.shareBytes {
		return true
	}
	if b.now().Sub(l.progress) > stallAfter {
		return false // stalled: nothing borrowed
	}
	return b.requests < b.maxRequests && b.bytes+cost <= b.maxBytes
}

func (l *Limit) takeLocked(cost int64) {
	if l.requests == 0 {
		l.progress = l.budget.now()
	}
	l.requests++
	l.bytes += cost
	l.budget.requests++
	l.budget.bytes += cost
}

// Acquire waits until a request of cost bytes may start; false when ctx ends first.
func (l *Limit) Acquire(ctx context.Context, cost int64) bool {
	b := l.budget
	b.mu.Lock()
	if len(b.waiters) == 0 && l.fitsLocked(cost) {
		l.takeLocked(cost)
		b.mu.Unlock()
		return true
	}
	w := &inflightWaiter{lim: l, cost: cost, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	// Another project's waiter at the head may be the one that cannot go:
	// this one may still fit now.
	b.admitLocked()
	b.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // admitted while giving up: give it back
		l.releaseLocked(cost)
		b.admitLocked()
		return false
	default:
	}
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	return false
}

// Verdict is what a request's outcome tells the limit.
type Verdict int

const (
	VerdictOK       Verdict = iota // Sentry answered (2xx, 429, another 4xx)
	VerdictOverload                // a 5xx
	VerdictNone                    // no answer: a timeout, a refused or hung connect
	VerdictIgnore                  // cancelled by shutdown: tells nothing
)

// Release gives back a request of cost bytes and adapts the limit to its answer.
func (l *Limit) Release(cost int64, a Verdict) {
	b := l.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if a == VerdictOK || a == VerdictOverload {
		l.progress = b.now()
	}
	switch a {
	case VerdictOK:
		// Grow only a limit in use (at least half of it in flight, this
		// request included): a quiet project keeps a small limit, and so few
		// workers and connections.
		if l.limit < l.max && 2*l.requests >= l.limit {
			l.limit++
		}
	case VerdictOverload:
		l.limit = max(l.limit/2, 1)
	case VerdictNone:
		l.limit = 1
	}
	l.current.Store(int32(l.limit))
	l.releaseLocked(cost)
	b.admitLocked()
}

func (l *Limit) releaseLocked(cost int64) {
	l.requests--
	l.bytes -= cost
	l.budget.requests--
	l.budget.bytes -= cost
}

// admitLocked admits, in the order they came, every waiter that fits now.
func (b *Budget) admitLocked() {
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if w.lim.fitsLocked(w.cost) {
			w.lim.takeLocked(w.cost)
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(b.waiters[len(kept):])
	b.waiters = kept
}

// Current is the project's limit now (the most workers worth running).
func (l *Limit) Current() int { return int(l.current.Load()) }

// Held is what the budget holds now: requests and bytes in flight.
func (b *Budget) Held() (requests int, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests, b.bytes
}

// HeldBytes is what the project's requests in flight hold now.
func (l *Limit) HeldBytes() int64 {
	l.budget.mu.Lock()
	defer l.budget.mu.Unlock()
	return l.bytes
}
