package pending

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pending::max_bytes bounds all projects together: a second project with room
// of its own is refused once the total is reached, unless it holds nothing.
func TestPendingTotalBound(t *testing.T) {
	release := make(chan struct{})
	block := func(context.Context, *encode.Outgoing) { <-release }
	total := &Total{Max: 3000}
	a := New(context.Background(), 1, 1<<20, total, block)
	b := New(context.Background(), 1, 1<<20, total, block)
	env := func(n int) *encode.Outgoing {
		return &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: make([]byte, n)}}}}
	}
	offer := func(q *Queue, n int) bool {
		taken, why := q.Offer(context.Background(), env(n), nil, false)
		if !taken {
			assert.Equal(t, account.ReasonQueueOverflow, why)
		}
		return taken
	}
	require.True(t, offer(a, 1000)) // 1,512 bytes with the overhead
	require.True(t, offer(b, 100))  // b holds nothing: always takes one
	assert.False(t, offer(b, 1000)) // 1,512 + 612 + 1,512 > 3,000
	assert.True(t, offer(b, 200))   // 2,836 <= 3,000
	assert.False(t, offer(a, 1))    // 2,836 + 513 > 3,000
	assert.EqualValues(t, 1512+612+712, total.bytes.Load())
	close(release)
	a.Close()
	b.Close()
	assert.Zero(t, total.bytes.Load(), "every byte is given back once settled")
	taken, why := a.Offer(context.Background(), env(1), nil, false)
	assert.False(t, taken)
	assert.Equal(t, account.ReasonNetworkError, why, "a closed queue takes nothing: the project can no longer send")
}

// Pushes waiting for room are served in the order they came: a large
// envelope is not overtaken by smaller ones that would fit sooner, and an
// offer that does not wait is refused while someone waits.
func TestPendingWaitersFirstComeFirstServed(t *testing.T) {
	release := make(chan struct{})
	var order []int
	var mu sync.Mutex
	q := New(context.Background(), 1, 3000, &Total{Max: 1 << 30}, func(_ context.Context, o *encode.Outgoing) {
		<-release
		mu.Lock()
		order = append(order, len(o.Env.Items[0].Payload))
		mu.Unlock()
	})
	env := func(n int) *encode.Outgoing {
		return &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: make([]byte, n)}}}}
	}
	taken, _ := q.Offer(context.Background(), env(1000), nil, true)
	require.True(t, taken)
	var wg sync.WaitGroup
	wg.Go(func() {
		taken, _ := q.Offer(context.Background(), env(2400), nil, true) // 1,512 + 2,912 > 3,000: waits
		assert.True(t, taken)
	})
	for {
		q.mu.Lock()
		n := len(q.waiters)
		q.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	taken, why := q.Offer(context.Background(), env(10), nil, false) // would fit, but someone waits
	assert.False(t, taken)
	assert.Equal(t, account.ReasonQueueOverflow, why)
	close(release)
	wg.Wait()
	q.Close()
	assert.Equal(t, []int{1000, 2400}, order)
}

// Within its share of the total a project takes envelopes whatever the others
// hold: hanging projects that filled pending::max_bytes do not stall a
// healthy one. Past its share it is bound by the total again.
func TestPendingShareWhenTotalIsFull(t *testing.T) {
	release := make(chan struct{})
	block := func(context.Context, *encode.Outgoing) { <-release }
	total := &Total{Max: 3000, Share: 1100}
	hung := New(context.Background(), 1, 1<<20, total, block)
	healthy := New(context.Background(), 1, 1<<20, total, block)
	env := func(n int) *encode.Outgoing {
		return &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: make([]byte, n)}}}}
	}
	offer := func(q *Queue, n int) bool {
		taken, _ := q.Offer(context.Background(), env(n), nil, false)
		return taken
	}
	require.True(t, offer(hung, 1000))   // 1,512
	require.True(t, offer(hung, 900))    // 2,924: the total is all but full
	require.False(t, offer(hung, 100))   // over the total, beyond its share
	require.True(t, offer(healthy, 0))   // 512: holding nothing, always one
	assert.True(t, offer(healthy, 0))    // 1,024 <= share, though the total is over
	assert.False(t, offer(healthy, 100)) // 1,636 > share and the total is full
	assert.EqualValues(t, 2924+1024, total.bytes.Load(), "the total can pass max by the shares")
	close(release)
	hung.Close()
	healthy.Close()
	assert.Zero(t, total.bytes.Load())
}

// A worker whose queue ran empty waits for the next envelope instead of
// ending, so a burst after a burst reuses it (no new goroutine, no stack to
// grow again); waitIdle does not wait for parked workers, and close ends them.
func TestPendingWorkersParkAndEnd(t *testing.T) {
	var sent atomic.Int32
	q := New(context.Background(), 4, 1<<20, &Total{Max: 1 << 30}, func(context.Context, *encode.Outgoing) { sent.Add(1) })
	env := &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: []byte("{}")}}}}
	workers := func() (all, parked int) {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.workers, q.parked
	}
	for range 3 {
		taken, _ := q.Offer(context.Background(), env, nil, false)
		require.True(t, taken)
		q.WaitIdle()
		all, parked := workers()
		assert.Equal(t, 1, all, "the parked worker took the next envelope")
		assert.Equal(t, 1, parked)
	}
	q.Close()
	all, parked := workers()
	assert.Zero(t, all, "close ends parked workers")
	assert.Zero(t, parked)
	assert.EqualValues(t, 3, sent.Load())
}

// A parked worker ends once nothing came for its linger time; envelopes that
// arrive just as a worker gives up are still sent, by it or by a new worker.
func TestPendingWorkersLingerEnds(t *testing.T) {
	var sent atomic.Int32
	q := New(context.Background(), 3, 1<<30, &Total{Max: 1 << 30}, func(context.Context, *encode.Outgoing) { sent.Add(1) })
	q.linger = time.Microsecond // workers end and are called back all the time
	env := &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: []byte("{}")}}}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 500 {
				taken, _ := q.Offer(context.Background(), env, nil, true)
				assert.True(t, taken)
				if i%50 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	q.WaitIdle()
	assert.EqualValues(t, 2000, sent.Load(), "every envelope taken was sent")
	q.waitUntil(func() bool { return q.workers == 0 }) // they end by themselves
	q.Close()
}
