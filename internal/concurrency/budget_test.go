package concurrency

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grown is a limit already at its maximum (as after a healthy spell).
func grown(b *Budget, maxConcurrent int) *Limit {
	l := b.NewLimit(maxConcurrent)
	l.limit = maxConcurrent
	l.current.Store(int32(maxConcurrent))
	return l
}

func takeAll(l *Limit) int {
	n := 0
	for {
		if _, ok := l.TryAcquire(); !ok {
			return n
		}
		n++
	}
}

// TestBudgetShares: a project whose Sentry hangs borrows what the budget has
// free, no more; the others still get their share at once.
func TestBudgetShares(t *testing.T) {
	tests := []struct {
		name                  string
		maxRequests, projects int
		wantHung, wantHealthy int // requests each gets before it would wait
	}{
		{"a share of 2 each", 8, 4, 8, 2},
		{"a share is at least one request", 8, 100, 8, 1},
		{"one project: the whole budget", 8, 1, 8, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.maxRequests, tt.projects, testMaxProbeGap)
			hung, healthy := grown(b, 128), grown(b, 128)
			assert.Equal(t, tt.wantHung, takeAll(hung), "the hung project borrows what the budget has free")
			got := takeAll(healthy)
			if tt.projects > 1 {
				assert.Equal(t, tt.wantHealthy, got, "the healthy project still gets its share")
			}
			assert.LessOrEqual(t, b.requests, 2*tt.maxRequests)
		})
	}
}

// TestBudgetLimitBinds: a project never has more requests in flight than its
// limit, however much the budget has room for.
func TestBudgetLimitBinds(t *testing.T) {
	b := NewBudget(1000, 1, testMaxProbeGap)
	assert.Equal(t, 4, takeAll(grown(b, 4)))
	assert.Equal(t, 1, takeAll(b.NewLimit(64)), "a new project: one probe")
}

// TestBudgetWaitersServedInOrder: a waiter of a project at its own limit does
// not hold up another project's waiter that fits, and a release admits the
// waiters in the order they came.
func TestBudgetWaitersServedInOrder(t *testing.T) {
	b := NewBudget(2, 2, testMaxProbeGap) // a share of one request each
	a, c := grown(b, 1), grown(b, 4)
	ta, ok := a.Acquire(t.Context())
	require.True(t, ok)
	tc, ok := c.Acquire(t.Context())
	require.True(t, ok) // the budget is full now
	order := make(chan string, 3)
	waitFor := func(l *Limit, name string) {
		go func() {
			if _, ok := l.Acquire(t.Context()); ok {
				order <- name
			}
		}()
	}
	waitFor(a, "a") // a is at its own limit (1): it waits for a's release
	waitUntilWaiting(t, b, 1)
	waitFor(c, "c1")
	waitUntilWaiting(t, b, 2)
	c.Release(tc, VerdictOK) // room in the budget: c1 goes, a still cannot
	assert.Equal(t, "c1", <-order)
	a.Release(ta, VerdictOK)
	assert.Equal(t, "a", <-order)
	assert.Equal(t, 2, b.requests)
}

// TestBudgetAcquireGivesUp: a waiter whose context ends gives up its turn
// and holds nothing.
func TestBudgetAcquireGivesUp(t *testing.T) {
	b := NewBudget(1, 1, testMaxProbeGap)
	l := grown(b, 4)
	_, ok := l.Acquire(t.Context())
	require.True(t, ok)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan bool)
	go func() {
		_, ok := l.Acquire(ctx)
		done <- ok
	}()
	waitUntilWaiting(t, b, 1)
	cancel()
	assert.False(t, <-done)
	assert.Equal(t, 1, b.requests)
	assert.Empty(t, b.waiters)
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

// TestBudgetStalledProjectStopsBorrowing: a project with requests in flight
// and no answer for stallAfter borrows nothing beyond its share; an answer
// ends the stall.
func TestBudgetStalledProjectStopsBorrowing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(100, 10, testMaxProbeGap) // a share of 10 requests
		l := grown(b, 128)
		var tickets []Ticket
		for range 12 { // its share and 2 borrowed
			tk, ok := l.TryAcquire()
			require.True(t, ok)
			tickets = append(tickets, tk)
		}
		time.Sleep(stallAfter)
		tk, ok := l.TryAcquire()
		assert.True(t, ok, "not stalled yet: no answer for exactly stallAfter")
		tickets = append(tickets, tk)
		time.Sleep(time.Nanosecond)
		_, ok = l.TryAcquire()
		assert.False(t, ok, "stalled: no more borrowing though the budget has room")
		other := grown(b, 128)
		for range 12 {
			_, borrowed := other.TryAcquire()
			require.True(t, borrowed, "another project still borrows")
		}
		l.Release(tickets[0], VerdictOK) // an answer: no longer stalled
		tk, ok = l.TryAcquire()
		assert.True(t, ok)
		l.Release(tk, VerdictNone) // no answer: back to a probe, whatever it holds
		_, ok = l.TryAcquire()
		assert.False(t, ok)
	})
}
