package send

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/admit"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// workerLinger is how long a worker whose queue ran empty waits for the next
// envelope before it ends. Envelopes come in bursts, one per push; a new
// goroutine per envelope of each burst grew its stack again through the HTTP
// client and the compressor (8 % of the collector's CPU under make compare's
// load, in runtime.newstack).
const workerLinger = time.Second

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
	post    poster
	acct    *account.Accountant
	reports *account.ClientReports // nil when client reports are disabled
	limits  *ratelimit.State
	limit   *admit.Limit  // adaptive concurrency, within the request budget
	mem     *admit.Holder // what it holds, against the memory budget
	probes  admit.Probes  // one probe per gate when a rate-limit window ends
	health  health

	inFlight atomic.Int64 // bytes its requests in flight hold beyond their envelopes

	// standaloneReports is set when an envelope carrying a client report was
	// refused with a 4xx: until a standalone report gets through, reports stop
	// riding along, so a report Sentry refuses can never take data down with it.
	standaloneReports atomic.Bool
	reporting         atomic.Bool // a periodic client report is being sent

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
	noRetry    bool          // shutdown began: failures are settled, never retried
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
// (network_error).
func (l *Lane) Offer(ctx context.Context, out []encode.Outgoing, release func()) {
	if release != nil {
		defer release()
	}
	now := l.stage.set.Clock.Now()
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
			j := &job{out: *o, held: envelopeSize(&o.Env)}
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
	l.kickLocked()
	return true
}

// workerCap is the most workers worth running now.
func (l *Lane) workerCap() int {
	return min(l.limit.Current(), l.stage.cfg.MaxConcurrentRequests)
}

// kickLocked gets a worker for a newly queued envelope: a parked one, or a
// new one while fewer than the limit run.
func (l *Lane) kickLocked() {
	if l.parked > 0 {
		l.parked--
		l.wake <- struct{}{} // never blocks: at most one token per parked worker
		return
	}
	if l.workers < l.workerCap() {
		l.workers++
		go l.work()
	}
}

func (l *Lane) queuedLocked() int { return l.ready.len() + l.due.len() }

// work sends envelopes until none is left and none came for workerLinger,
// or the lane is closed.
func (l *Lane) work() {
	var linger *time.Timer
	defer func() {
		if linger != nil {
			linger.Stop()
		}
	}()
	for l.awaitWork(&linger) {
		t, ok := l.limit.Acquire(l.stage.run)
		if !ok { // the drain time after shutdown is over
			l.failQueued()
			continue
		}
		j := l.take()
		if j == nil {
			l.limit.Release(t, admit.VerdictIgnore)
			continue
		}
		l.trip(j, t)
		l.mu.Lock()
		// The limit may have grown with this answer: one more worker for
		// what is queued and has none.
		if l.queuedLocked() > 1 && l.parked == 0 && l.workers < l.workerCap() {
			l.workers++
			go l.work()
		}
		l.mu.Unlock()
	}
}

// awaitWork returns true when an envelope is queued for the calling worker,
// false when the worker ends: nothing came for workerLinger, the lane is
// closed and empty, or more workers run than the limit allows now.
func (l *Lane) awaitWork(linger **time.Timer) bool {
	l.mu.Lock()
	for {
		queued := l.queuedLocked()
		if l.workers > l.workerCap() {
			// The limit fell: this worker ends; if it was called back for an
			// envelope, a parked one takes its place.
			l.workers--
			if queued > 0 && l.parked > 0 {
				l.parked--
				l.wake <- struct{}{}
			}
			l.notifyLocked()
			l.mu.Unlock()
			return false
		}
		if queued > 0 {
			l.mu.Unlock()
			return true
		}
		if l.closed {
			l.workers--
			l.notifyLocked()
			l.mu.Unlock()
			return false
		}
		l.parked++
		l.notifyLocked()
		l.mu.Unlock()
		if *linger == nil {
			*linger = time.NewTimer(workerLinger)
		} else {
			(*linger).Reset(workerLinger)
		}
		select {
		case <-l.wake:
			(*linger).Stop()
			l.mu.Lock()
			continue
		case <-(*linger).C:
		case <-l.quit:
			(*linger).Stop()
		}
		l.mu.Lock()
		select {
		case <-l.wake: // called back as the wait ended: an envelope is queued for it
			continue
		default:
		}
		l.parked--
		if l.closed && l.queuedLocked() > 0 {
			continue // closing: the queue is drained before the last worker ends
		}
		l.workers--
		l.notifyLocked()
		l.mu.Unlock()
		return false
	}
}

// take is the next envelope to send: due and ready ones in turn. Envelopes
// whose category became rate limited while they were queued are dropped on
// the way (ratelimit_backoff), unless a probe may go.
func (l *Lane) take() *job {
	for {
		l.mu.Lock()
		var j *job
		switch {
		case l.due.len() > 0 && (l.takeDue || l.ready.len() == 0):
			j = l.due.pop()
			l.takeDue = false
		case l.takeNewest && l.ready.len() > 2*l.workerCap():
			j = l.ready.popNewest()
			l.takeDue, l.takeNewest = true, false
		default:
			j = l.ready.pop()
			l.takeDue, l.takeNewest = true, true
		}
		l.mu.Unlock()
		if j == nil {
			return nil
		}
		if !j.out.Gate.Limited(l.limits.Load(), l.stage.set.Clock.Now()) {
			return j
		}
		l.settle(j, Result{Reason: account.ReasonRateLimitBackoff})
	}
}

// trip makes one attempt for j, holding the place t, and decides what comes
// next: settled (delivered, or dropped and counted), split (a container
// Sentry found too large), or waiting to retry (no answer, or a 5xx).
func (l *Lane) trip(j *job, t admit.Ticket) {
	ctx := l.stage.run
	clock := l.stage.set.Clock
	adm, ended := l.probes.Admit(j.out.Gate, l.limits.Load(), clock.Now())
	if adm == admit.Limited {
		l.limit.Release(t, admit.VerdictIgnore)
		l.settle(j, Result{Reason: account.ReasonRateLimitBackoff})
		return
	}
	if ctx.Err() != nil { // the drain time after shutdown is over: no new request
		l.limit.Release(t, admit.VerdictIgnore)
		if adm == admit.Probe {
			l.probes.Settle(j.out.Gate, ended, 0)
		}
		l.settle(j, Result{Reason: account.ReasonNetworkError})
		return
	}
	if j.attempts == 0 {
		j.first = clock.Wall()
	}
	j.attempts++
	extra := inFlightExtra(j.held)
	l.mem.Add(extra)
	l.inFlight.Add(extra)
	items := len(j.out.Env.Items)
	report := l.attachReport(&j.out.Env)
	res := l.post.attempt(ctx, &j.out.Env)
	clear(j.out.Env.Items[items:]) // the report rides along once
	j.out.Env.Items = j.out.Env.Items[:items]
	l.settleReport(report, res)
	l.mem.Add(-extra)
	l.inFlight.Add(-extra)
	verdict := verdictOf(ctx, res)
	l.limit.Release(t, verdict)
	if adm == admit.Probe {
		l.probes.Settle(j.out.Gate, ended, res.Status)
	}
	if verdict != admit.VerdictIgnore {
		l.health.observe(res, clock.Wall())
	}
	switch {
	case res.TooLarge && !j.split && j.out.Splittable():
		l.split(j)
	case res.retryable():
		l.retry(j, res)
	default:
		l.settle(j, res)
	}
	if res.NewLimits {
		l.dropLimited()
	}
}

// split replaces a container Sentry answered 413 with its two halves, sent
// next, once each.
func (l *Lane) split(j *job) {
	halves := j.out.Halves()
	jobs := [2]*job{}
	for i := range halves {
		jobs[i] = &job{out: halves[i], held: envelopeSize(&halves[i].Env), split: true}
	}
	l.mem.Add(jobs[0].held + jobs[1].held - j.held)
	l.mu.Lock()
	l.ready.pushFront(jobs[1])
	l.ready.pushFront(jobs[0])
	l.jobs++
	l.kickLocked()
	l.mu.Unlock()
}

// retry puts j in the delay queue until its backoff has passed, or settles
// it when retries are off, would pass max_elapsed_time, or shutdown began.
// The worker goes on with the next envelope at once.
func (l *Lane) retry(j *job, res Result) {
	j.last = res.Reason
	now := l.stage.set.Clock.Wall()
	d, ok := retryDelay(l.stage.cfg.Retry, j, res.RetryAfter, now)
	if !ok || l.stage.isStopping() {
		l.settle(j, res)
		return
	}
	j.notBefore = now.Add(d)
	l.mu.Lock()
	if l.noRetry {
		l.mu.Unlock()
		l.settle(j, res)
		return
	}
	l.waiting.add(j)
	l.armLocked()
	l.mu.Unlock()
}

// armLocked sets the timer for the earliest waiting envelope.
func (l *Lane) armLocked() {
	next, ok := l.waiting.next()
	if !ok {
		l.stopTimerLocked()
		return
	}
	if l.timerStop != nil && !l.timerAt.After(next) {
		return // it fires in time
	}
	l.stopTimerLocked()
	l.timerAt = next
	l.timerStop = l.stage.set.Clock.AfterFunc(max(next.Sub(l.stage.set.Clock.Wall()), 0), func() { l.fire(next) })
}

func (l *Lane) stopTimerLocked() {
	if l.timerStop != nil {
		l.timerStop()
		l.timerStop = nil
		l.timerAt = time.Time{}
	}
}

// fire moves the waiting envelopes whose time came to the due queue: those
// due at the time the timer was set for, or at the wall clock's now if later.
func (l *Lane) fire(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.timerAt.Equal(at) {
		return // a timer stopped too late: another one is set
	}
	l.timerStop, l.timerAt = nil, time.Time{}
	now := l.stage.set.Clock.Wall()
	if at.After(now) {
		now = at
	}
	for j := l.waiting.popDue(now); j != nil; j = l.waiting.popDue(now) {
		l.due.push(j)
		l.kickLocked()
	}
	l.armLocked()
}

// settle records j's fate with the accountant and lets go of it.
func (l *Lane) settle(j *job, res Result) {
	l.acct.Outcome(l.stage.run, res.Delivered, res.Reason, j.out.Counts)
	l.release(j)
}

// release lets go of a settled job's bytes.
func (l *Lane) release(j *job) {
	l.mem.Add(-j.held)
	l.mu.Lock()
	l.jobs--
	l.notifyLocked()
	l.mu.Unlock()
}

// evictOldest drops the envelope that has waited longest and is not in
// flight (queue_overflow): a due retry first, then the oldest new one, then
// the waiting retry first tried the longest ago. False when none is left.
// Called by the stage with its roomMu held.
func (l *Lane) evictOldest() bool {
	l.mu.Lock()
	j := l.due.pop()
	if j == nil {
		j = l.ready.pop()
	}
	if j == nil {
		if j = l.waiting.removeOldest(); j != nil {
			l.armLocked()
		}
	}
	l.mu.Unlock()
	if j == nil {
		return false
	}
	l.acct.Dropped(l.stage.run, account.ReasonQueueOverflow, j.out.Counts)
	l.release(j)
	return true
}

// dropLimited drops every queued envelope whose category is rate limited
// now (ratelimit_backoff), so that a limit frees their memory at once
// instead of when a worker reaches them.
func (l *Lane) dropLimited() {
	limits, now := l.limits.Load(), l.stage.set.Clock.Now()
	var dropped []*job
	keep := func(q *fifo) {
		kept := q.jobs[:q.head]
		for _, j := range q.jobs[q.head:] {
			if j.out.Gate.Limited(limits, now) {
				dropped = append(dropped, j)
				continue
			}
			kept = append(kept, j)
		}
		clear(q.jobs[len(kept):])
		q.jobs = kept
	}
	l.mu.Lock()
	keep(&l.ready)
	keep(&l.due)
	var waiting delayed
	for _, j := range l.waiting.takeAll() {
		if j.out.Gate.Limited(limits, now) {
			dropped = append(dropped, j)
			continue
		}
		waiting.add(j)
	}
	l.waiting = waiting
	l.armLocked()
	l.mu.Unlock()
	for _, j := range dropped {
		l.settle(j, Result{Reason: account.ReasonRateLimitBackoff})
	}
}

// stopRetries settles every envelope waiting to retry or due, with its last
// failure, and makes every later failure final: shutdown began.
func (l *Lane) stopRetries() {
	l.mu.Lock()
	l.noRetry = true
	l.stopTimerLocked()
	settled := l.waiting.takeAll()
	for j := l.due.pop(); j != nil; j = l.due.pop() {
		settled = append(settled, j)
	}
	l.mu.Unlock()
	for _, j := range settled {
		l.settle(j, Result{Reason: j.last})
	}
}

// failQueued settles every queued envelope as network_error: the drain time
// after shutdown is over, nothing more is sent.
func (l *Lane) failQueued() {
	l.mu.Lock()
	var all []*job
	for _, q := range []*fifo{&l.due, &l.ready} {
		for j := q.pop(); j != nil; j = q.pop() {
			all = append(all, j)
		}
	}
	all = append(all, l.waiting.takeAll()...)
	l.stopTimerLocked()
	l.mu.Unlock()
	for _, j := range all {
		l.settle(j, Result{Reason: account.ReasonNetworkError})
	}
}

// close refuses new envelopes and waits until every offered one is settled
// (sent, or failed fast once the drain time is over) and every worker ended.
func (l *Lane) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.quit)
	}
	l.mu.Unlock()
	l.waitUntil(func() bool { return l.workers == 0 && l.jobs == 0 })
}

// notifyLocked wakes waitUntil to look again.
func (l *Lane) notifyLocked() {
	if l.idle != nil {
		close(l.idle)
		l.idle = nil
	}
}

// waitUntil returns once done holds; done is called with l.mu held.
func (l *Lane) waitUntil(done func() bool) {
	for {
		l.mu.Lock()
		if done() {
			l.mu.Unlock()
			return
		}
		if l.idle == nil {
			l.idle = make(chan struct{})
		}
		idle := l.idle
		l.mu.Unlock()
		<-idle
	}
}

// Held is what the project holds now against the memory budget: its
// envelopes queued, waiting to retry and in flight, and what its requests
// in flight hold beyond them.
func (l *Lane) Held() int64 { return l.mem.Held() }

// InFlightBytes is what its requests in flight hold beyond their envelopes.
func (l *Lane) InFlightBytes() int64 { return l.inFlight.Load() }

// Limit is the project's adaptive concurrency limit now.
func (l *Lane) Limit() int { return l.limit.Current() }
