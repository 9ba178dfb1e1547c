package concurrency

import (
	"sync/atomic"
	"time"
)

// Limit is one project's adaptive concurrency limit: how many of its
// requests may be in flight at once, from 1 (a probe) to
// max_concurrent_requests. It reacts to Sentry's answers once per round
// trip, as TCP cuts its window once per window and not once per lost packet:
//
//   - each answered request (2xx, 429 or another 4xx: Sentry is there) grows
//     it by one while at least half of it is in use, so a busy project
//     doubles it every round trip and a quiet one keeps it small;
//   - a 5xx halves it, and no answer at all (a timeout, a connect that never
//     completes) drops it to one probe, but only for a request that started
//     after the last cut: the other requests of the same round trip were
//     already in flight when Sentry faltered, and their failures tell nothing
//     new.
//
// So a brownout where a fifth of the answers are 5xx costs one halving per
// round trip, which the other four fifths grow back: the limit falls only
// while more than about half of a round trip's answers are 5xx. A Sentry that
// answers nothing is probed by one request at a time, never by none; the
// probe's answer opens the way again, doubling per round trip.
//
// A probe that fails fast (a refused connect, a connection ended before its
// answer: a receiver that cannot speak to us) would otherwise be followed by
// the next at once, a new connection each, as fast as they fail: the n-th
// probe in a row without an answer waits probeGap(n) after the last: 50 ms
// doubling to retry_on_failure's initial_interval, 5 s by default
// (probegap.go).
// docs/memory.md says why this differs from Vector's adaptive request
// concurrency and Envoy's retry budgets.
type Limit struct {
	budget *Budget
	max    int // max_concurrent_requests

	// Guarded by budget.mu.
	limit    int // 1..max
	requests int
	// progress is when the project last got an answer, or went from nothing
	// in flight to one request: with requests in flight and progress older
	// than stallAfter, the project is stalled.
	progress time.Time
	issued   Ticket // tickets handed out so far
	// recover is the last ticket issued when the limit was last cut: a
	// failure of a request with a ticket up to it cuts no more.
	recover Ticket
	// unanswered counts the probes in a row that got no answer; probeAt is
	// when the next may start (zero: at once), and wake lets the waiters in
	// then.
	unanswered int
	probeAt    time.Time
	wake       *time.Timer

	// current mirrors limit for Current, read by the project's workers on
	// every envelope: no lock shared by all projects on that path.
	current atomic.Int32
}

// Ticket numbers a request in the order its project started it; the limit
// tells from it whether the request was in flight at the last cut.
type Ticket uint64

// Verdict is what a request's outcome tells the limit.
type Verdict int

const (
	VerdictOK       Verdict = iota // Sentry answered (2xx, 429, another 4xx)
	VerdictOverload                // a 5xx
	VerdictNone                    // no answer: a timeout, a refused or hung connect
	VerdictIgnore                  // not sent, or cancelled by shutdown: tells nothing
)

// NewLimit is a project's limit, at most maxConcurrent. A new project starts
// with one request in flight: a Sentry that never answers costs one request,
// and a healthy one doubles its limit every round trip.
func (b *Budget) NewLimit(maxConcurrent int) *Limit {
	l := &Limit{budget: b, max: maxConcurrent, limit: 1}
	l.current.Store(1)
	return l
}

// Current is the project's limit now: the most workers worth running.
func (l *Limit) Current() int { return int(l.current.Load()) }

func (l *Limit) takeLocked() Ticket {
	if l.requests == 0 {
		l.progress = time.Now()
	}
	l.requests++
	l.budget.requests++
	l.issued++
	return l.issued
}

func (l *Limit) releaseLocked(t Ticket, v Verdict) {
	switch v {
	case VerdictOK:
		l.progress = time.Now()
		l.answeredLocked()
		// Grow only a limit in use (at least half of it in flight, this
		// request included).
		if l.limit < l.max && 2*l.requests >= l.limit {
			l.limit++
		}
	case VerdictOverload:
		l.progress = time.Now()
		l.answeredLocked()
		if t > l.recover {
			l.limit = max(l.limit/2, 1)
			l.recover = l.issued
		}
	case VerdictNone:
		if t > l.recover {
			l.limit = 1
			l.recover = l.issued
			l.unansweredLocked()
		}
	}
	l.current.Store(int32(l.limit))
	l.requests--
	l.budget.requests--
}
