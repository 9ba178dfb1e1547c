package concurrency

import (
	"context"
	"sync"
	"time"
)

// stallAfter is how long a project may have requests in flight without any
// answer before it counts as stalled: from then on it borrows nothing beyond
// its share, so a Sentry that stops answering cannot draw more of the budget
// than its project held when it stopped (plus its share) while its requests
// wait for `timeout`. Far above any healthy answer time.
const stallAfter = 5 * time.Second

// Budget bounds the requests in flight over the whole exporter
// (pending::max_requests_in_flight) and shares them fairly between the
// projects. Each project has a [Limit] of its own (its adaptive concurrency);
// within its share (max_requests_in_flight / routing::max_projects requests,
// at least one) a project never waits on what the others hold; beyond its
// share it borrows from the budget only while the total is under it, and
// only while it is not stalled (requests in flight and no answer for
// stallAfter). The total so stays under twice the budget whatever Sentry
// does, and projects that hang cannot take the healthy ones' shares.
//
// The bytes those requests hold are counted by the exporter's memory budget
// (internal/membudget), not here: this budget bounds connections,
// goroutines and the load put on Sentry.
//
// Waiters are served first come first served among those that fit: a project
// at its own limit does not hold up the others.
type Budget struct {
	max, share  int
	maxProbeGap time.Duration // the most a probe waits after the last without an answer (probegap.go)

	mu       sync.Mutex
	requests int
	waiters  []*inflightWaiter
}

// NewBudget is a budget of maxRequests shared by up to maxProjects projects,
// whose probes after no answer wait at most maxProbeGap after the last.
func NewBudget(maxRequests, maxProjects int, maxProbeGap time.Duration) *Budget {
	return &Budget{max: maxRequests, share: max(maxRequests/max(maxProjects, 1), 1), maxProbeGap: maxProbeGap}
}

type inflightWaiter struct {
	lim   *Limit
	ready chan Ticket // receives the ticket once admitted
}

// fitsLocked: within the project's adaptive limit, and within its share or
// within what the budget has left. A project holding nothing may always send
// one request (its probe), once the probe's gap has passed (probegap.go).
func (l *Limit) fitsLocked() bool {
	if l.requests >= l.limit || l.pacedLocked() {
		return false
	}
	if l.requests == 0 || l.requests < l.budget.share {
		return true
	}
	if time.Since(l.progress) > stallAfter {
		return false // stalled: nothing borrowed
	}
	return l.budget.requests < l.budget.max
}

// Acquire waits until a request may start; false when ctx ends first. The
// ticket goes back with Release.
func (l *Limit) Acquire(ctx context.Context) (Ticket, bool) {
	b := l.budget
	b.mu.Lock()
	if len(b.waiters) == 0 && l.fitsLocked() {
		t := l.takeLocked()
		b.mu.Unlock()
		return t, true
	}
	w := &inflightWaiter{lim: l, ready: make(chan Ticket, 1)}
	b.waiters = append(b.waiters, w)
	// Another project's waiter at the head may be the one that cannot go:
	// this one may still fit now.
	b.admitLocked()
	b.mu.Unlock()
	select {
	case t := <-w.ready:
		return t, true
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case t := <-w.ready: // admitted while giving up: give it back
		l.releaseLocked(t, VerdictIgnore)
		b.admitLocked()
		return 0, false
	default:
	}
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	return 0, false
}

// TryAcquire takes a place if one is free now, without waiting.
func (l *Limit) TryAcquire() (Ticket, bool) {
	b := l.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) == 0 && l.fitsLocked() {
		return l.takeLocked(), true
	}
	return 0, false
}

// Release gives back the place of a request and adapts the limit to its
// answer (limit.go).
func (l *Limit) Release(t Ticket, v Verdict) {
	b := l.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	l.releaseLocked(t, v)
	b.admitLocked()
}

// admitLocked admits, in the order they came, every waiter that fits now.
func (b *Budget) admitLocked() {
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if w.lim.fitsLocked() {
			w.ready <- w.lim.takeLocked()
			continue
		}
		kept = append(kept, w)
	}
	clear(b.waiters[len(kept):])
	b.waiters = kept
}
