package send

import (
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
)

// What the lane lets go of without sending: the oldest envelopes when the
// memory budget needs room, what a new rate limit covers, what shutdown
// ends; and the lane's close.

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
	limits, now := l.limits.Load(), time.Now()
	l.settleAll(l.removeQueued(true, func(j *job) bool { return j.out.Gate.Limited(limits, now) }), func(*job) account.Reason {
		return account.ReasonRateLimitBackoff
	})
}

// stopRetries settles every envelope waiting to retry or due, with its last
// failure: shutdown began, and from then on retry settles every failure.
func (l *Lane) stopRetries() {
	l.settleAll(l.removeQueued(false, anyJob), func(j *job) account.Reason { return j.last })
}

// failQueued settles every queued envelope as network_error: the drain time
// after shutdown is over, nothing more is sent.
func (l *Lane) failQueued() {
	l.settleAll(l.removeQueued(true, anyJob), func(*job) account.Reason { return account.ReasonNetworkError })
}

func anyJob(*job) bool { return true }

// removeQueued takes the jobs that match out of the lane's queues: those
// waiting to retry and due, and the new ones when ready is set.
func (l *Lane) removeQueued(ready bool, match func(*job) bool) []*job {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*job
	out = l.due.remove(match, out)
	if ready {
		out = l.ready.remove(match, out)
	}
	out = l.waiting.remove(match, out)
	l.armLocked() // for the earliest left waiting; none: the timer stops
	return out
}

// settleAll settles each of jobs, none of them sent, with its reason.
func (l *Lane) settleAll(jobs []*job, why func(*job) account.Reason) {
	for _, j := range jobs {
		l.settle(j, Result{Reason: why(j)})
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
