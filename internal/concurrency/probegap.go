package concurrency

import "time"

// firstProbeGap is how long the probe after a request that got no
// answer waits: a single connection reset costs a healthy project next
// to nothing.
const firstProbeGap = 50 * time.Millisecond

// probeGap is how long the probe after the n-th probe in a row without an
// answer waits (n ≥ 1): firstProbeGap, doubled by each further one, at most
// most (the budget's, retry_on_failure's initial_interval: what an envelope
// that got no answer waits anyway; a Sentry that comes back is found within
// it). Against a receiver that ends every connection before it
// answers (a proxy that cannot speak HTTP/2 to us, a Sentry that refuses
// connects) the probes would otherwise follow each other as fast as they
// fail, each on a new connection (a TLS handshake, and Go's HTTP/2 client
// keeps a connection that failed unused for 5 s): over 100 projects, 460
// connections a second and 935 MiB (docs/memory.md).
func probeGap(n int, most time.Duration) time.Duration {
	if n < 1 || most <= 0 {
		return 0
	}
	gap := firstProbeGap
	for i := 1; i < n && gap < most; i++ {
		gap *= 2
	}
	return min(gap, most)
}

// unansweredLocked counts one more probe in a row without an answer and
// holds the next until its gap has passed; the budget's waiters are let in
// then.
func (l *Limit) unansweredLocked() {
	l.unanswered++
	gap := probeGap(l.unanswered, l.budget.maxProbeGap)
	l.probeAt = time.Now().Add(gap)
	if l.wake == nil {
		b := l.budget
		l.wake = time.AfterFunc(gap, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.admitLocked()
		})
		return
	}
	l.wake.Reset(gap)
}

// answeredLocked ends a run of probes without an answer: the next request
// may start at once.
func (l *Limit) answeredLocked() {
	if l.unanswered == 0 {
		return
	}
	l.unanswered = 0
	l.probeAt = time.Time{}
	l.wake.Stop()
}

// pacedLocked: a probe may not start yet. Once its time has come, probeAt
// is cleared, so a limit that is not paced reads no clock here.
func (l *Limit) pacedLocked() bool {
	if l.probeAt.IsZero() {
		return false
	}
	if time.Now().Before(l.probeAt) {
		return true
	}
	l.probeAt = time.Time{}
	return false
}
