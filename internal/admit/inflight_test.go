package admit

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrencyLimitAdapts: a project starts with one request in flight;
// each round it sends as many requests as its limit allows, and the round's
// answers adapt the limit: it grows while in use, up to
// max_concurrent_requests, halves on a 5xx and falls back to one probe when a
// request gets no answer. A project that never has more than one request in
// flight stays small.
func TestConcurrencyLimitAdapts(t *testing.T) {
	tests := []struct {
		name   string
		rounds []Verdict // each round: as many requests as the limit allows, all answered so
		serial int       // then this many requests one at a time, answered
		want   int
	}{
		{"new project: one probe", nil, 0, 1},
		{"full rounds grow it", repeat(VerdictOK, 3), 0, 5},
		{"never past max_concurrent_requests", repeat(VerdictOK, 20), 0, 8},
		{"a 5xx halves it, per answer", append(repeat(VerdictOK, 20), VerdictOverload), 0, 1},
		{"no answer: back to one probe", append(repeat(VerdictOK, 20), VerdictNone), 0, 1},
		{"a shutdown cancel tells nothing", append(repeat(VerdictOK, 20), VerdictIgnore), 0, 8},
		{"grows back after the probe is answered", append(append(repeat(VerdictOK, 20), VerdictNone), VerdictOK, VerdictOK), 0, 3},
		{"one request at a time: stays small", nil, 50, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(1000, 1<<30, 1)
			l := b.NewLimit(8)
			for _, v := range tt.rounds {
				n := 0
				for tryAcquire(l, 100) {
					n++
				}
				require.Positive(t, n)
				for range n {
					l.Release(100, v)
				}
			}
			for range tt.serial {
				require.True(t, l.Acquire(context.Background(), 100))
				l.Release(100, VerdictOK)
			}
			assert.Equal(t, tt.want, l.Current())
			r, n := b.Held()
			assert.Zero(t, r)
			assert.Zero(t, n)
		})
	}
}

func repeat(v Verdict, n int) []Verdict {
	out := make([]Verdict, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// grown is a limit already at its maximum (as after a healthy spell).
func grown(b *Budget, maxConcurrent int) *Limit {
	l := b.NewLimit(maxConcurrent)
	l.limit = maxConcurrent
	l.current.Store(int32(maxConcurrent))
	return l
}

// tryAcquire takes a place without waiting: false when it would wait.
func tryAcquire(l *Limit, cost int64) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return l.Acquire(ctx, cost)
}

// TestInflightBudgetShares: a project whose Sentry hangs holds the whole free
// budget at most; the others still get their share at once, and nothing past it.
func TestInflightBudgetShares(t *testing.T) {
	tests := []struct {
		name                  string
		maxRequests, projects int
		maxBytes, cost        int64
		wantHung, wantHealthy int // requests each gets before it would wait
	}{
		{"by requests", 8, 4, 1 << 30, 100, 8, 2},
		{"by bytes", 1000, 4, 4000, 500, 8, 2},
		{"a share is at least one request, however large", 8, 100, 1000, 5000, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.maxRequests, tt.maxBytes, tt.projects)
			hung, healthy := grown(b, 128), grown(b, 128)
			got := 0
			for tryAcquire(hung, tt.cost) {
				got++
			}
			assert.Equal(t, tt.wantHung, got, "the hung project borrows what the budget has free, no more")
			got = 0
			for tryAcquire(healthy, tt.cost) {
				got++
			}
			assert.Equal(t, tt.wantHealthy, got, "the healthy project still gets its share")
			requests, bytes := b.Held()
			assert.LessOrEqual(t, requests, 2*tt.maxRequests)
			assert.Equal(t, int64(requests)*tt.cost, bytes)
		})
	}
}

// TestInflightWaitersServedInOrder: a waiter of a project at its own limit
// does not hold up another project's waiter that fits, and a release admits
// the waiters in the order they came.
func TestInflightWaitersServedInOrder(t *testing.T) {
	b := NewBudget(2, 1<<30, 2) // a share of one request each
	a, c := grown(b, 1), grown(b, 4)
	require.True(t, a.Acquire(context.Background(), 1))
	require.True(t, c.Acquire(context.Background(), 1)) // the budget is full now
	order := make(chan string, 3)
	waitFor := func(l *Limit, name string) {
		go func() {
			if l.Acquire(context.Background(), 1) {
				order <- name
			}
		}()
	}
	waitFor(a, "a") // a is at its own limit (1): it waits for a's release
	waitUntilWaiting(t, b, 1)
	waitFor(c, "c1")
	waitUntilWaiting(t, b, 2)
	c.Release(1, VerdictOK) // room in the budget: c1 goes, a still cannot
	assert.Equal(t, "c1", <-order)
	a.Release(1, VerdictOK)
	assert.Equal(t, "a", <-order)
	requests, _ := b.Held()
	assert.Equal(t, 2, requests)
}

func waitUntilWaiting(t *testing.T, b *Budget, n int) {
	t.Helper()
	for {
		b.mu.Lock()
		got := len(b.waiters)
		b.mu.Unlock()
		if got == n {
			return
		}
		if got > n {
			t.Fatalf("%d waiters, want %d", got, n)
		}
		runtime.Gosched()
	}
}

// TestInflightStalledProjectStopsBorrowing: a project with requests in flight
// and no answer for stallAfter borrows nothing beyond its share; an answer
// ends the stall.
func TestInflightStalledProjectStopsBorrowing(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	b := NewBudget(100, 1<<30, 10) // a share of 10 requests
	b.now = func() time.Time { return now }
	l := grown(b, 128)
	for range 12 { // its share and 2 borrowed
		require.True(t, tryAcquire(l, 100))
	}
	now = now.Add(stallAfter + time.Second)
	assert.False(t, tryAcquire(l, 100), "stalled: no more borrowing though the budget has room")
	other := grown(b, 128)
	for range 12 {
		require.True(t, tryAcquire(other, 100), "another project still borrows")
	}
	l.Release(100, VerdictOK) // an answer: no longer stalled
	assert.True(t, tryAcquire(l, 100))
	l.Release(100, VerdictNone) // no answer: back to a probe, whatever it holds
	assert.False(t, tryAcquire(l, 100))
}
