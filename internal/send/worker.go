package send

import (
	"time"

	"github.com/otel-sentry/sentryexporter/internal/concurrency"
)

// The lane's workers: started on demand, at most its adaptive limit, parked
// for a while once its queues are empty; each takes the next envelope and
// makes its trip (trip.go).

// workerLinger is how long a worker whose queue ran empty waits for the next
// envelope before it ends. Envelopes come in bursts, one per push; a new
// goroutine per envelope of each burst grew its stack again through the HTTP
// client and the compressor (8 % of the collector's CPU under make compare's
// load, in runtime.newstack).
const workerLinger = time.Second

// workerCap is the most workers worth running now: the adaptive limit,
// which never passes max_concurrent_requests.
func (l *Lane) workerCap() int { return l.limit.Current() }

// callWorkerLocked gets a worker for a newly queued envelope: a parked one, or a
// new one while fewer than the limit run.
func (l *Lane) callWorkerLocked() {
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
	linger := time.NewTimer(workerLinger)
	linger.Stop()
	defer linger.Stop()
	for l.awaitWork(linger) {
		t, ok := l.limit.Acquire(l.stage.run)
		if !ok { // the drain time after shutdown is over
			l.failQueued()
			continue
		}
		j := l.take()
		if j == nil {
			l.limit.Release(t, concurrency.VerdictIgnore)
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
// false when the worker ends: more workers run than the limit allows now,
// the lane is closed and empty, or nothing came for workerLinger.
func (l *Lane) awaitWork(linger *time.Timer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		queued := l.queuedLocked()
		switch {
		case l.workers > l.workerCap():
			// The limit fell: this worker ends; if it was called back for an
			// envelope, a parked one takes its place.
			if queued > 0 && l.parked > 0 {
				l.parked--
				l.wake <- struct{}{}
			}
			l.endWorkerLocked()
			return false
		case queued > 0:
			return true
		case l.closed:
			l.endWorkerLocked()
			return false
		case !l.parkLocked(linger):
			l.endWorkerLocked()
			return false
		}
	}
}

// parkLocked waits, with l.mu released, to be called back for an envelope
// (true), for workerLinger, or for the lane's close. It is true as well when
// called back just as the wait ended, and when the lane is closing with
// envelopes left: the queue is drained before the last worker ends.
func (l *Lane) parkLocked(linger *time.Timer) bool {
	l.parked++
	l.notifyLocked()
	l.mu.Unlock()
	linger.Reset(workerLinger)
	select {
	case <-l.wake: // whoever called it back counted it unparked
		linger.Stop()
		l.mu.Lock()
		return true
	case <-linger.C:
	case <-l.quit:
		linger.Stop()
	}
	l.mu.Lock()
	select {
	case <-l.wake:
		return true
	default:
	}
	l.parked--
	return l.closed && l.queuedLocked() > 0
}

// endWorkerLocked counts the calling worker gone.
func (l *Lane) endWorkerLocked() {
	l.workers--
	l.notifyLocked()
}

// take is the next envelope to send: due and ready ones in turn. Whether
// its category is rate limited is the attempt's to check (gatedAttempt).
func (l *Lane) take() *job {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.due.len() > 0 && (l.takeDue || l.ready.len() == 0):
		l.takeDue = false
		return l.due.pop()
	case l.takeNewest && l.ready.len() > 2*l.workerCap():
		l.takeDue, l.takeNewest = true, false
		return l.ready.popNewest()
	default:
		l.takeDue, l.takeNewest = true, true
		return l.ready.pop()
	}
}
