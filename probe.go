package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// admission is what the rate limits allow for one envelope now.
type admission uint8

const (
	admitFree    admission = iota // no limit, or the last one was already probed
	admitProbe                    // a limit just ended: this envelope is the one probe
	admitLimited                  // limited, or another envelope is probing
)

// probes makes sure that when a rate-limit window ends, exactly one envelope
// per gate goes out first, as an SDK's single worker would do. Without it,
// every envelope in flight at the end of the window (up to
// max_concurrent_requests) would hit the still-exhausted quota at once.
// Envelopes that arrive while the probe is out are dropped as
// ratelimit_backoff: the quota was exhausted a moment ago, and nothing waits.
type probes struct {
	probing   [account.NumGates]atomic.Bool
	confirmed [account.NumGates]atomic.Int64 // the ended deadline (unix ns) a probe got a non-429 answer for
}

// admit decides for one envelope behind g at now. On admitProbe the caller
// must call settle with the returned deadline after its attempt.
func (p *probes) admit(g account.Gate, l ratelimit.Limits, now time.Time) (admission, time.Time) {
	d := g.Deadline(l)
	switch {
	case d.After(now):
		return admitLimited, d
	case d.IsZero() || p.confirmed[g].Load() >= d.UnixNano():
		return admitFree, d
	case p.probing[g].CompareAndSwap(false, true):
		return admitProbe, d
	default:
		return admitLimited, d
	}
}

// settle ends a probe: any answer but a 429 confirms that the window ended
// (a 429 has merged a new window already); no answer at all lets the next
// envelope probe.
func (p *probes) settle(g account.Gate, ended time.Time, status int) {
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
