package send

import (
	"net/http"
	"sync"
	"time"
)

// HealthState is how a project's Sentry has been answering.
type HealthState uint8

const (
	// HealthOK: the last answer that tells anything was a 2xx, a 429 or
	// another 4xx (Sentry is there), or nothing was sent yet.
	HealthOK HealthState = iota
	// HealthRefused: Sentry's last answer refused the project's key (401 or
	// 403): a revoked key, or a deleted project. It needs a person; it ends
	// with the next answer that is not a 401 or 403.
	HealthRefused
	// HealthUnreachable: no answer, or only 5xx, for longer than the
	// caller's threshold. It ends with the next answer that is not a 5xx.
	HealthUnreachable
)

// Health is a project's state, for the exporter's component status.
type Health struct {
	State  HealthState
	Status int       // HealthRefused: the status Sentry answered
	Since  time.Time // HealthUnreachable: when the failures began (wall clock)
}

// health follows one lane's answers: its state is the last answer's, and a
// run of failures counts from its first.
type health struct {
	mu           sync.Mutex
	refused      int       // the last answer was this 401 or 403; 0: it was not
	failingSince time.Time // first failure (no answer, 5xx) since the last other answer; zero: none
}

// observe takes one attempt's result, at wall time now. Attempts cancelled
// by shutdown tell nothing and are not observed.
func (h *health) observe(res Result, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch s := res.Status; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		h.refused = s
		h.failingSince = time.Time{}
	case s == 0 || s >= 500:
		h.refused = 0
		if h.failingSince.IsZero() {
			h.failingSince = now
		}
	default: // a 2xx, a 429, another 4xx: Sentry is there
		h.refused = 0
		h.failingSince = time.Time{}
	}
}

// Health is the lane's state at wall time now: unreachable once its
// failures have lasted longer than after.
func (l *Lane) Health(now time.Time, after time.Duration) Health {
	h := &l.health
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.refused != 0:
		return Health{State: HealthRefused, Status: h.refused}
	case !h.failingSince.IsZero() && now.Sub(h.failingSince) > after:
		return Health{State: HealthUnreachable, Since: h.failingSince}
	default:
		return Health{State: HealthOK}
	}
}
