package send

import (
	"context"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/concurrency"
	"github.com/otel-sentry/sentryexporter/internal/gate"
)

// One envelope's trip: an attempt, and what comes next (settled, split, or
// waiting to retry in the delay queue, brought back by its timer).

// trip makes one attempt for j, holding the place t, and decides what comes
// next: settled (delivered, or dropped and counted), split (a container
// Sentry found too large), or waiting to retry (no answer, or a 5xx).
func (l *Lane) trip(j *job, t concurrency.Ticket) {
	res, attempted := l.gatedAttempt(l.stage.run, j.out.Gate, t, func() (Result, bool) { return l.attemptJob(j) })
	switch {
	case !attempted:
		l.settle(j, res)
	case res.TooLarge && !j.isHalf && j.out.Splittable():
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

// gatedAttempt is every attempt's sequence, an envelope's or a standalone
// client report's, holding the place t: the rate-limit gate behind g (the
// probe, when a window just ended), then attempt, then the place given back
// with what the answer tells the concurrency limit, the probe settled and
// the project's health observed. False when no attempt was made: limited
// (ratelimit_backoff), or attempt declined with the reason in its Result.
//
// Its gate check is the one that decides: every envelope passes it just
// before its request, and only it knows the probe. The other checks only
// save work on what it would drop anyway: the root's before translation
// (a limited category is never translated), Offer's (nothing queued or
// reserved for it: held error events and spans are offered long after their
// translation), and dropLimited when an answer brings a new limit (the
// queued envelopes free their memory at once).
func (l *Lane) gatedAttempt(ctx context.Context, g gate.Gate, t concurrency.Ticket, attempt func() (Result, bool)) (Result, bool) {
	adm, ended := l.probes.Admit(g, l.limits.Load(), time.Now())
	if adm == gate.Limited {
		l.limit.Release(t, concurrency.VerdictIgnore)
		return Result{Reason: account.ReasonRateLimitBackoff}, false
	}
	res, attempted := attempt()
	verdict := concurrency.VerdictIgnore
	if attempted {
		verdict = verdictOf(ctx, res)
	}
	l.limit.Release(t, verdict)
	if adm == gate.Probe {
		l.probes.Settle(g, ended, res.Status)
	}
	if verdict != concurrency.VerdictIgnore {
		l.health.observe(res, time.Now())
	}
	return res, attempted
}

// attemptJob makes j's POST, its client report riding along; false, with
// the reason, when it is not made: the drain time after shutdown is over
// (network_error), or the budget has no room for the request's copies of
// the body (queue_overflow, as an envelope that did not fit at Offer).
func (l *Lane) attemptJob(j *job) (Result, bool) {
	ctx := l.stage.run
	if ctx.Err() != nil {
		return Result{Reason: account.ReasonNetworkError}, false
	}
	// Every copy of the body the request makes is reserved before it is made.
	extra := l.stage.inFlightExtra(j.held)
	if !l.stage.makeRoom(l, extra) {
		return Result{Reason: account.ReasonQueueOverflow}, false
	}
	if j.first.IsZero() { // its first attempt
		j.first = time.Now()
	}
	l.inFlight.Add(extra)
	items := len(j.out.Env.Items)
	report := l.attachReport(&j.out.Env)
	res := l.http.attempt(ctx, j.out.Gate, &j.out.Env)
	clear(j.out.Env.Items[items:]) // the report rides along once
	j.out.Env.Items = j.out.Env.Items[:items]
	l.settleReport(report, res)
	l.mem.Add(-extra)
	l.inFlight.Add(-extra)
	return res, true
}

// splitHeadroom is what a container's two halves may hold beyond it: a
// second container header (a log container's or a span container's head
// with the trace's DSC) and the second half's envelopeOverhead.
const splitHeadroom = 1<<10 + envelopeOverhead

// split replaces a container Sentry answered 413 with its two halves, sent
// next, once each. The halves are reserved before they are built, as large
// as the container and splitHeadroom; with no room for them the container
// is dropped (queue_overflow).
func (l *Lane) split(j *job) {
	reserved := j.held + splitHeadroom
	if !l.stage.makeRoom(l, reserved) {
		l.settle(j, Result{Reason: account.ReasonQueueOverflow})
		return
	}
	halves := j.out.Halves()
	jobs := [2]*job{}
	for i := range halves {
		jobs[i] = &job{out: halves[i], held: envelopeSize(&halves[i].Env), isHalf: true, seed: j.seed + uint64(i) + 1, push: j.push}
	}
	// What the halves hold is within the reservation; the container's
	// bytes go with it.
	l.mem.Add(jobs[0].held + jobs[1].held - reserved - j.held)
	l.mu.Lock()
	l.ready.pushFront(jobs[1])
	l.ready.pushFront(jobs[0])
	l.jobs++
	j.push.Add(1) // two halves in the container's place
	l.callWorkerLocked()
	l.mu.Unlock()
}

// retry puts j in the delay queue until its backoff has passed, or settles
// it when retries are off, would pass max_elapsed_time, or shutdown began.
// The worker goes on with the next envelope at once.
func (l *Lane) retry(j *job, res Result) {
	j.last = res.Reason
	now := time.Now()
	d, ok := retryDelay(l.stage.cfg.Retry, j, res.RetryAfter, now, j.draw)
	if !ok {
		l.settle(j, res)
		return
	}
	j.notBefore = now.Add(d)
	l.mu.Lock()
	// Checked under l.mu: stopRetries takes what waits under it, after
	// shutdown began, so no retry can be left waiting.
	if l.stage.isStopping() {
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
	l.timerStop = time.AfterFunc(max(time.Until(next), 0), func() { l.fire(next) }).Stop
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
	now := time.Now()
	if at.After(now) {
		now = at
	}
	for j := l.waiting.popDue(now); j != nil; j = l.waiting.popDue(now) {
		l.due.push(j)
		l.callWorkerLocked()
	}
	l.armLocked()
}

// settle records j's fate with the accountant and lets go of it.
func (l *Lane) settle(j *job, res Result) {
	l.acct.Outcome(l.stage.run, res.Delivered, res.Reason, j.out.Counts)
	l.release(j)
}

// release lets go of a settled job's bytes, and tells its push.
func (l *Lane) release(j *job) {
	l.mem.Add(-j.held)
	l.mu.Lock()
	l.jobs--
	l.notifyLocked()
	l.mu.Unlock()
	j.push.Done()
}
