package main

import (
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// schedule says when the sink is down: it hangs for one window (--hang-at,
// --hang-for) or alternates up and down (--flap). Times count from the
// origin, the first request the sink receives, so that a fault starts at the
// same point of the traffic however long the collector took to start.
//
// A request that arrives while the sink is down is read and checked, then held
// unanswered until the window ends (or the client gives up, or the sink
// stops); after that it is handled as if it had just arrived: stored and
// answered, or failed as the other flags say. So a partition that heals
// delivers what was held through it, as a TCP connection whose packets were
// only delayed does.
type schedule struct {
	hangAt, hangFor time.Duration
	flap            time.Duration

	mu     sync.Mutex
	origin time.Time
}

func (s *schedule) active() bool { return s != nil && (s.hangFor > 0 || s.flap > 0) }

// start sets the origin on the first call and returns it.
func (s *schedule) start(now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.origin.IsZero() {
		s.origin = now
	}
	return s.origin
}

// downUntil returns the end of the down window that now falls in, or the zero
// time when the sink is up at now.
func (s *schedule) downUntil(now time.Time) time.Time {
	if !s.active() {
		return time.Time{}
	}
	origin := s.start(now)
	at := now.Sub(origin)
	if s.hangFor > 0 && at >= s.hangAt && at < s.hangAt+s.hangFor {
		return origin.Add(s.hangAt + s.hangFor)
	}
	if s.flap > 0 {
		// up during even periods, down during odd ones
		n := at / s.flap
		if n%2 == 1 {
			return origin.Add((n + 1) * s.flap)
		}
	}
	return time.Time{}
}

// answerer draws the answers of --fail-ratio and --chaos from one seeded
// generator (--seed), so a run can be repeated draw for draw (the order of
// concurrent requests still varies).
type answerer struct {
	failRatio  float64
	failStatus int
	chaos      bool

	mu  sync.Mutex
	rng *rand.Rand
}

func newAnswerer(seed uint64, failRatio float64, failStatus int, chaos bool) *answerer {
	if failRatio <= 0 && !chaos {
		return nil
	}
	return &answerer{
		failRatio:  failRatio,
		failStatus: failStatus,
		chaos:      chaos,
		rng:        rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

// chaosLimits are the X-Sentry-Rate-Limits values a chaos 429 carries, those of
// TestInvariantUnderChaos (exporter_test.go): categories one at a time, all
// categories, a value that does not parse, none.
var chaosLimits = []string{"1:error:key", "2:transaction", "1:log_item;log_byte:org", "1::organization", "garbage", "1:span", ""}

// fault is what the answerer decided for one request.
type fault struct {
	// reset: close the connection with a TCP reset instead of answering.
	reset bool
	// status, when not 0, is answered instead of storing the envelope.
	status int
	// limits is the X-Sentry-Rate-Limits of a 429 ("" for none).
	limits string
}

// draw decides one request's answer. --chaos plays TestInvariantUnderChaos's
// odds: 10 % connection reset, 10 % 503, 20 % 429 with a random
// X-Sentry-Rate-Limits (and Retry-After: 1, so whatever the header says the
// limit refills within the run), 60 % stored. --fail-ratio answers that share
// of the requests --fail-status.
func (a *answerer) draw() fault {
	if a == nil {
		return fault{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.chaos {
		roll := a.rng.IntN(10)
		limits := chaosLimits[a.rng.IntN(len(chaosLimits))]
		switch {
		case roll == 0:
			return fault{reset: true}
		case roll < 2:
			return fault{status: http.StatusServiceUnavailable}
		case roll < 4:
			return fault{status: http.StatusTooManyRequests, limits: limits}
		}
		return fault{}
	}
	if a.rng.Float64() < a.failRatio {
		return fault{status: a.failStatus}
	}
	return fault{}
}

// statusReset is the status recorded for a request answered by a reset
// (requests_by_status["reset"]).
const statusReset = 0

// statusAborted is the status recorded for a request held until its client
// left or the sink stopped (requests_by_status["499"]): its connection ends
// without an answer.
const statusAborted = 499

// resetConn ends the request's connection with a TCP reset (SO_LINGER 0), so
// the client sees "connection reset by peer" and no answer. It reports false
// when the connection cannot be taken over.
func resetConn(w http.ResponseWriter) bool {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return false
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
	return true
}

func statusKey(status int) string {
	if status == statusReset {
		return "reset"
	}
	return strconv.Itoa(status)
}
