package gate

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Admission is what the rate limits allow for one envelope now.
type Admission uint8

const (
	Free    Admission = iota // no limit, or the last one was already probed
	Probe                    // a limit just ended: this envelope is the one probe
	Limited                  // limited, or another envelope is probing
)

// Probes makes sure that when a rate-limit window ends, exactly one envelope
// per gate goes out first, as an SDK's single worker would do. Without it,
// every envelope in flight at the end of the window (up to
// max_concurrent_requests) would hit the still-exhausted quota at once.
// Envelopes that arrive while the probe is out are dropped as
// ratelimit_backoff: the quota was exhausted a moment ago, and nothing waits.
type Probes struct {
	probing   [NumGates]atomic.Bool
	confirmed [NumGates]atomic.Int64 // the ended deadline (unix ns) a probe got a non-429 answer for
}

// Admit decides for one envelope behind g at now. On Probe the caller
// must call Settle with the returned deadline after its attempt.
func (p *Probes) Admit(g Gate, l ratelimit.Limits, now time.Time) (Admission, time.Time) {
	d := g.Deadline(l)
	switch {
	case d.After(now):
		return Limited, d
	case d.IsZero() || p.confirmed[g].Load() >= d.UnixNano():
		return Free, d
	case p.probing[g].CompareAndSwap(false, true):
		return Probe, d
	default:
		return Limited, d
	}
}

// Settle ends a probe: any answer but a 429 confirms that the window ended
// (a 429 has merged a new window already); no answer at all lets the next
// envelope probe.
func (p *Probes) Settle(g Gate, ended time.Time, status int) {
	if status != 0 && status != http.StatusTooManyRequests {
		for n := ended.UnixNano(); ; {
			old := p.confirmed[g].Load()
			if old >= n || p.confirmed[g].CompareAndSwap(old, n) {
				break
			}
		}
	}
	p.probing[g].Store(false)
}
