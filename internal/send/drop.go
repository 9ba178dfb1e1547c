package send

import (
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
