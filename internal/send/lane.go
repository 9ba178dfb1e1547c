package send

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/concurrency"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/membudget"
	"github.com/otel-sentry/sentryexporter/internal/settle"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Lane is one project's part of the stage: its envelopes between the push
// that built them and their fate, and the workers that send them (at most its
// adaptive limit; started on demand, gone workerLinger after its queues ran
// empty).
//
// An envelope is in exactly one place: ready (new, first come first
// served), waiting (failed with no answer or a 5xx, until its not-before
// time; no worker waits with it), due (its time came), or in flight. Workers
// take due and ready envelopes in turn, so that new data is never starved by
// a backlog of retries, nor retries by new data; and while the ready queue
// holds a backlog (more than twice the limit: Sentry was away), they take its
// oldest and its newest in turn, so that the backlog drains while what
// arrives now goes out now.
type Lane struct {
	stage   *Stage
	http    httpSender
	acct    *account.Accountant
	reports *account.ClientReports // nil when client reports are disabled
	limits  *ratelimit.State
	limit   *concurrency.Limit // adaptive concurrency, within the request budget
	mem     *membudget.Holder  // what it holds, against the memory budget
	probes  gate.Probes        // one probe per gate when a rate-limit window ends
	health  health

	inFlight atomic.Int64 // bytes its requests in flight hold beyond their envelopes

	// standaloneReports is set when an envelope carrying a client report was
	// refused with a 4xx: until a standalone report gets through, reports stop
	// riding along, so a report Sentry refuses can never take data down with it.
	standaloneReports atomic.Bool
	reporting         atomic.Bool // a periodic client report is being sent
	retired           atomic.Bool // its project is no longer in use: it leaves the stage once it holds nothing (retire.go)

	mu         sync.Mutex
	ready      fifo
	due        fifo
	waiting    delayed
	timerStop  func() bool // cancels the timer that brings the next waiting envelope back; nil: none
	timerAt    time.Time
	takeDue    bool // the next take prefers a due envelope
	takeNewest bool // the next take from a backlogged ready queue takes its newest
	jobs       int  // envelopes offered and not yet settled
	workers    int  // started and not ended, parked ones included
	parked     int  // workers waiting for the next envelope
	closed     bool
	idle       chan struct{} // made by waitUntil, closed when a worker parks or ends or a job settles
	wake       chan struct{} // one token per parked worker called back to work
	quit       chan struct{} // closed by close: parked workers end
}

// Offer hands over the envelopes of one push and returns at once: it never
// waits on the network, nor for room. Each envelope taken is detached first
// (a copy of its payloads of its own, exactly what the memory budget
// counts), so release, when set, runs before Offer returns: the push's
// buffers go back to their pools at once, however long its envelopes wait.
// An envelope that cannot be taken is settled at once: rate limited
// (ratelimit_backoff), no room in the memory budget and no project past its
// share with anything left to drop (queue_overflow), or the stage shut down
// (network_error). Each envelope taken is counted in the settle.Group that
// ctx carries, if any, until it settles.
func (l *Lane) Offer(ctx context.Context, out []encode.Outgoing, release func()) {
	if release != nil {
		defer release()
	}
	push := settle.From(ctx)
	now := time.Now()
	limits := l.limits.Load()
	for i := range out {
		o := &out[i]
		var why account.Reason
		switch {
		case l.stage.run.Err() != nil:
			why = account.ReasonNetworkError
		case o.Gate.Limited(limits, now):
			why = account.ReasonRateLimitBackoff
		default:
			j := &job{out: *o, held: envelopeSize(&o.Env), seed: l.stage.jitter.seed(), push: push}
			if !l.stage.makeRoom(l, j.held) {
				why = account.ReasonQueueOverflow
				break
			}
			j.out.Detach()
			if l.enqueue(j) {
				continue
			}
			l.mem.Add(-j.held)
			why = account.ReasonNetworkError // closed
		}
		l.acct.Dropped(ctx, why, o.Counts)
	}
}

// enqueue puts a new job in the ready queue; false when the lane is closed.
func (l *Lane) enqueue(j *job) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.ready.push(j)
	l.jobs++
	j.push.Add(1)
	l.callWorkerLocked()
	return true
}

// Held is what the project holds now against the memory budget: its
// envelopes queued, waiting to retry and in flight, and what its requests
// in flight hold beyond them.
func (l *Lane) Held() int64 { return l.mem.Held() }

// InFlightBytes is what its requests in flight hold beyond their envelopes.
func (l *Lane) InFlightBytes() int64 { return l.inFlight.Load() }

// Limit is the project's adaptive concurrency limit now.
func (l *Lane) Limit() int { return l.limit.Current() }
