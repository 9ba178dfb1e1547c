package concurrency

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// saturated is a project with more envelopes than its limit lets go: each
// answer frees a place, which the next envelope takes at once, so the limit
// is always in use. Answers come back oldest request first.
type saturated struct {
	t        *testing.T
	l        *Limit
	inFlight []Ticket
}

func newSaturated(t *testing.T, l *Limit) *saturated {
	s := &saturated{t: t, l: l}
	s.fill()
	return s
}

func (s *saturated) fill() {
	for {
		tk, ok := s.l.TryAcquire()
		if !ok {
			break
		}
		s.inFlight = append(s.inFlight, tk)
	}
	if len(s.inFlight) == 0 { // a probe after no answer waits for its gap
		tk, ok := s.l.Acquire(s.t.Context())
		require.True(s.t, ok, "a limit always lets one request go")
		s.inFlight = append(s.inFlight, tk)
	}
}

// answer answers n requests, the i-th with verdict(i).
func (s *saturated) answer(n int, verdict func(i int) Verdict) {
	for i := range n {
		tk := s.inFlight[0]
		s.inFlight = s.inFlight[1:]
		s.l.Release(tk, verdict(i))
		s.fill()
	}
}

// roundTrips answers n round trips' worth of requests: each round trip as
// many answers as the limit was at its start.
func (s *saturated) roundTrips(n int, verdict func(i int) Verdict) {
	k := 0
	for range n {
		m := s.l.Current()
		s.answer(m, func(int) Verdict { k++; return verdict(k - 1) })
	}
}

func (s *saturated) drain() {
	for _, tk := range s.inFlight {
		s.l.Release(tk, VerdictIgnore)
	}
	s.inFlight = nil
}

func all(v Verdict) func(int) Verdict { return func(int) Verdict { return v } }

// every nth answer is bad, the others good.
func every(n int, bad Verdict) func(int) Verdict {
	return func(i int) Verdict {
		if i%n == n-1 {
			return bad
		}
		return VerdictOK
	}
}

// TestLimitAdapts: the limit grows by one per answer while in use (doubling
// per round trip), halves at most once per round trip on 5xx, falls to one
// probe when a request gets no answer, and grows back from the probe.
func TestLimitAdapts(t *testing.T) {
	type step struct {
		roundTrips int
		verdict    func(int) Verdict
	}
	tests := []struct {
		name  string
		steps []step
		want  int // the limit at the end
	}{
		{"new project: one probe", nil, 1},
		{"round trips double it", []step{{3, all(VerdictOK)}}, 8},
		{"never past max_concurrent_requests", []step{{20, all(VerdictOK)}}, 64},
		{"a round trip of 5xx halves it once, not once per answer", []step{{20, all(VerdictOK)}, {1, all(VerdictOverload)}}, 32},
		{"round trips of 5xx halve it each round trip", []step{{20, all(VerdictOK)}, {3, all(VerdictOverload)}}, 8},
		{"a Sentry answering only 5xx is still probed", []step{{20, all(VerdictOK)}, {20, all(VerdictOverload)}}, 1},
		{"no answer: one probe", []step{{20, all(VerdictOK)}, {1, all(VerdictNone)}}, 1},
		{"a shutdown cancel tells nothing", []step{{20, all(VerdictOK)}, {1, all(VerdictIgnore)}}, 64},
		{"the probe's answer opens the way, doubling per round trip", []step{{20, all(VerdictOK)}, {1, all(VerdictNone)}, {4, all(VerdictOK)}}, 16},
		{"a brownout of 1 in 5 keeps it near its ceiling", []step{{20, all(VerdictOK)}, {50, every(5, VerdictOverload)}}, 64},
		{"a brownout of 1 in 5 from a new project: it still grows", []step{{50, every(5, VerdictOverload)}}, 64},
		{"3 answers in 4 are 5xx: it falls to a request or two", []step{{20, all(VerdictOK)}, {50, func(i int) Verdict {
			if i%4 == 0 {
				return VerdictOK
			}
			return VerdictOverload
		}}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := NewBudget(1000, 1, testMaxProbeGap)
				l := b.NewLimit(64)
				s := newSaturated(t, l)
				for _, st := range tt.steps {
					s.roundTrips(st.roundTrips, st.verdict)
				}
				got := l.Current()
				s.drain()
				assert.LessOrEqual(t, got, 64, "never past max_concurrent_requests")
				if tt.want >= 32 {
					assert.GreaterOrEqual(t, got, tt.want*3/4, "within a quarter of %d", tt.want)
				} else {
					assert.Equal(t, tt.want, got)
				}
				assert.Zero(t, b.requests, "every place given back")
			})
		})
	}
}

// TestLimitOnePerRoundTrip: of the requests in flight when Sentry faltered,
// only the first failure cuts; a request sent after the cut cuts again.
func TestLimitOnePerRoundTrip(t *testing.T) {
	b := NewBudget(1000, 1, testMaxProbeGap)
	l := grown(b, 16)
	var inFlight []Ticket
	for range 16 {
		tk, ok := l.TryAcquire()
		require.True(t, ok)
		inFlight = append(inFlight, tk)
	}
	l.Release(inFlight[0], VerdictOverload)
	assert.Equal(t, 8, l.Current(), "the first 5xx halves it")
	for _, tk := range inFlight[1:8] {
		l.Release(tk, VerdictOverload)
	}
	assert.Equal(t, 8, l.Current(), "the other 5xx of the same round trip tell nothing new")
	for _, tk := range inFlight[8:] {
		l.Release(tk, VerdictNone)
	}
	assert.Equal(t, 8, l.Current(), "nor do its timeouts")
	tk, ok := l.TryAcquire()
	require.True(t, ok)
	l.Release(tk, VerdictNone)
	assert.Equal(t, 1, l.Current(), "a request sent after the cut that gets no answer: one probe")
}

// TestLimitQuietProjectStaysSmall: one request at a time never grows the
// limit past what it uses.
func TestLimitQuietProjectStaysSmall(t *testing.T) {
	b := NewBudget(1000, 1, testMaxProbeGap)
	l := b.NewLimit(64)
	for range 50 {
		tk, ok := l.Acquire(t.Context())
		require.True(t, ok)
		l.Release(tk, VerdictOK)
	}
	assert.Equal(t, 3, l.Current(), "one in flight at a time: it grows while half of it is in use (1 of 1, 1 of 2), then stays")
}

// TestLimitStall: progress is an answer; a limit whose requests get none
// for stallAfter stops borrowing (budget_test.go), and any answer ends it.
func TestLimitStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10, 10, testMaxProbeGap)
		l := grown(b, 8)
		tk, ok := l.TryAcquire()
		require.True(t, ok)
		time.Sleep(stallAfter + time.Second)
		l.Release(tk, VerdictOverload) // a 5xx is an answer
		assert.Equal(t, time.Now(), l.progress)
	})
}

// TestProbeGap: 50 ms after the first probe without an answer, doubled by
// each further one, at most the budget's (retry_on_failure's
// initial_interval, 5 s by default).
func TestProbeGap(t *testing.T) {
	tests := []struct {
		n    int
		want time.Duration
	}{
		{0, 0},
		{1, 50 * time.Millisecond},
		{2, 100 * time.Millisecond},
		{3, 200 * time.Millisecond},
		{7, 3200 * time.Millisecond},
		{8, 5 * time.Second},
		{1000, 5 * time.Second},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, probeGap(tt.n, testMaxProbeGap), "probe %d", tt.n)
	}
	assert.Equal(t, 20*time.Millisecond, probeGap(3, 20*time.Millisecond), "at most the budget's")
	assert.Zero(t, probeGap(3, 0), "none without a retry interval")
}

// TestLimitPacesProbesWithoutAnswer: a probe that got no answer holds the
// next for its gap, growing with each one in a row; an answer (a 5xx too)
// lets the next go at once. A request of the round trip before the cut
// holds nothing back.
func TestLimitPacesProbesWithoutAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(1000, 1, testMaxProbeGap)
		l := b.NewLimit(64)
		for n := 1; n <= 9; n++ {
			tk, ok := l.Acquire(t.Context())
			require.True(t, ok)
			l.Release(tk, VerdictNone)
			start := time.Now()
			_, ok = l.TryAcquire()
			require.False(t, ok, "probe %d: the next waits", n)
			tk, ok = l.Acquire(t.Context())
			require.True(t, ok)
			assert.Equal(t, probeGap(n, testMaxProbeGap), time.Since(start), "probe %d's gap", n)
			l.Release(tk, VerdictIgnore)
		}
		tk, ok := l.Acquire(t.Context())
		require.True(t, ok)
		l.Release(tk, VerdictOverload)
		tk, ok = l.TryAcquire()
		require.True(t, ok, "an answer, a 5xx too, ends the gaps")
		l.Release(tk, VerdictNone)
		start := time.Now()
		tk, ok = l.Acquire(t.Context())
		require.True(t, ok)
		assert.Equal(t, firstProbeGap, time.Since(start), "the run starts again")
		l.Release(tk, VerdictOK)
	})
}

// TestLimitPacedProjectHoldsNoOneUp: a project whose probe waits for its gap
// does not hold up the waiters of the others.
func TestLimitPacedProjectHoldsNoOneUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(2, 2, testMaxProbeGap)
		quiet, busy := b.NewLimit(4), b.NewLimit(4)
		tk, ok := quiet.Acquire(t.Context())
		require.True(t, ok)
		quiet.Release(tk, VerdictNone)
		waited := make(chan time.Duration)
		go func() {
			start := time.Now()
			probe, admitted := quiet.Acquire(t.Context())
			assert.True(t, admitted)
			quiet.Release(probe, VerdictOK)
			waited <- time.Since(start)
		}()
		synctest.Wait()
		start := time.Now()
		tk, ok = busy.Acquire(t.Context())
		require.True(t, ok)
		assert.Zero(t, time.Since(start), "the other project goes at once")
		busy.Release(tk, VerdictOK)
		assert.Equal(t, firstProbeGap, <-waited, "the quiet one after its gap")
	})
}

// testMaxProbeGap is retry_on_failure's default initial_interval.
const testMaxProbeGap = 5 * time.Second
