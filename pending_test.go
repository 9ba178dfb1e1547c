package sentryexporter

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/encode"
)

// holdFirst makes f hold its answer to the first envelope until release is
// closed; arrived is closed when that envelope is in.
func holdFirst(f *fakeSentry) (arrived <-chan struct{}, release chan struct{}) {
	in := newSignal()
	release = make(chan struct{})
	var n atomic.Int32
	f.setRespond(func(*envelope.Envelope) answer {
		if n.Add(1) == 1 {
			in.fire()
			<-release
		}
		return answer{status: http.StatusOK}
	})
	return in.C(), release
}

// With routing, a project whose Sentry does not answer takes what fits in
// its bound and drops the rest at once as queue_overflow; the other project
// is untouched, and once the slow one answers again its client report
// carries the overflow.
func TestQueueOverflowWithRouting(t *testing.T) {
	sick := newFakeSentry(t, newFakeClock())
	arrived, release := holdFirst(sick)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the server closes, even on failure
	h := newFaultHarness(t, sick.dsnFor(sickProject), nil, nil)
	// Project 2 holds one envelope at a time (a project holding nothing always
	// takes one); project 1 keeps the default bound.
	h.project("sick").queue.maxBytes = 1
	h.push("sick", sickProject) // 2 transactions, 2 errors, 1 log container: the first is taken, the rest overflow
	<-arrived
	for range 3 {
		h.push("healthy", healthyProject)
	}
	h.project("healthy").queue.waitIdle()
	h.requireHealthyGotAll()

	overflow := func(cat account.Category) int64 {
		return h.count("otelcol_exporter_sentry_dropped_items", sickProject, cat, "reason", "queue_overflow")
	}
	assert.EqualValues(t, 1, overflow(account.CatTransaction))
	assert.EqualValues(t, 3, overflow(account.CatSpan))
	assert.EqualValues(t, 2, overflow(account.CatError))
	assert.EqualValues(t, 4, overflow(account.CatLogItem))

	once.Do(func() { close(release) })
	h.project("sick").queue.waitIdle()
	h.project("sick").flushReport(context.Background(), false)
	d := sick.discards()
	assert.EqualValues(t, 1, d["queue_overflow/transaction"])
	assert.EqualValues(t, 3, d["queue_overflow/span"])
	assert.EqualValues(t, 2, d["queue_overflow/error"])
	assert.EqualValues(t, 4, d["queue_overflow/log_item"])
	h.shutdown()
	h.requireInvariant()
	assert.EqualValues(t, 1, h.count("otelcol_exporter_sentry_sent_items", sickProject, account.CatTransaction))
	sick.requireNoInvalid()
	h.sentry.requireNoInvalid()
}

// newSingleProject is an exporter with only `dsn` (no routing) against f.
func newSingleProject(t *testing.T, f *fakeSentry, configure func(*Config)) (*harness, settlingTraces) {
	h := newHarnessWith(t, f, newFakeClock().clocks(), func(c *Config) {
		c.MaxConcurrentRequests = 1
		c.Pending.MaxBytesPerProject = 1
		noDedupe(c)
		if configure != nil {
			configure(c)
		}
	})
	return h, h.traces.(settlingTraces)
}

// Without routing there is no other project to protect: a push waits for
// room (back-pressure, so exporterhelper's queue fills and receivers answer
// 503) instead of dropping. Here the push of 4 envelopes can only return
// after Sentry answered the first one, and nothing is dropped.
func TestSingleProjectWaitsForRoom(t *testing.T) {
	f := newFakeSentry(t, newFakeClock())
	arrived, release := holdFirst(f)
	h, raw := newSingleProject(t, f, nil)
	var released atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		require.NoError(t, raw.Traces.ConsumeTraces(context.Background(), makeTraces(0, 2, true)))
		assert.True(t, released.Load(), "the push returned before Sentry answered the envelope that held the room")
	})
	<-arrived
	released.Store(true)
	close(release)
	wg.Wait()
	h.exp.settle()
	assert.EqualValues(t, 2, h.sent("transaction"))
	assert.EqualValues(t, 2, h.sent("error"))
	assert.Zero(t, h.droppedAll("transaction")+h.droppedAll("error")+h.droppedAll("span"))
	h.shutdown()
}

// A push waiting for room is released by shutdown once pending::drain_timeout
// is over: the request in flight is cancelled, and it and everything the push
// had not handed over yet are counted network_error.
func TestSingleProjectWaitEndsAtShutdown(t *testing.T) {
	addr, met := blackhole(t)
	f := newFakeSentry(t, newFakeClock()) // only for the harness; the DSN points at the black hole
	h, raw := newSingleProject(t, f, func(c *Config) {
		c.DSN = configopaque.String(strings.Replace(f.dsn(), strings.TrimPrefix(f.srv.URL, "http://"), addr, 1))
		c.ClientConfig.Timeout = 0
		c.Pending.DrainTimeout = 50_000_000 // 50 ms
	})
	h.exp.finalReport = 50_000_000
	var wg sync.WaitGroup
	wg.Go(func() {
		require.NoError(t, raw.Traces.ConsumeTraces(context.Background(), makeTraces(0, 2, true)))
	})
	<-met
	require.NoError(t, h.traces.Shutdown(context.Background()))
	wg.Wait()
	require.NoError(t, h.logs.Shutdown(context.Background()))
	assert.EqualValues(t, 2, h.dropped("transaction", "network_error"), "one in flight (cancelled), one waiting for room")
	assert.EqualValues(t, 6, h.dropped("span", "network_error"))
	assert.EqualValues(t, 2, h.dropped("error", "network_error"))
	assert.Zero(t, h.sent("span")+h.sent("error")+h.sent("transaction"))
}

// pending::max_bytes bounds all projects together: a second project with room
// of its own is refused once the total is reached, unless it holds nothing.
func TestPendingTotalBound(t *testing.T) {
	release := make(chan struct{})
	block := func(context.Context, *encode.Outgoing) { <-release }
	total := &pendingTotal{max: 3000}
	a := newPendingQueue(context.Background(), 1, 1<<20, total, block)
	b := newPendingQueue(context.Background(), 1, 1<<20, total, block)
	env := func(n int) *encode.Outgoing {
		return &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: make([]byte, n)}}}}
	}
	offer := func(q *pendingQueue, n int) bool {
		taken, why := q.offer(context.Background(), env(n), nil, false)
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
	a.close()
	b.close()
	assert.Zero(t, total.bytes.Load(), "every byte is given back once settled")
	taken, why := a.offer(context.Background(), env(1), nil, false)
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
	q := newPendingQueue(context.Background(), 1, 3000, &pendingTotal{max: 1 << 30}, func(_ context.Context, o *encode.Outgoing) {
		<-release
		mu.Lock()
		order = append(order, len(o.Env.Items[0].Payload))
		mu.Unlock()
	})
	env := func(n int) *encode.Outgoing {
		return &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: make([]byte, n)}}}}
	}
	taken, _ := q.offer(context.Background(), env(1000), nil, true)
	require.True(t, taken)
	var wg sync.WaitGroup
	wg.Go(func() {
		taken, _ := q.offer(context.Background(), env(2400), nil, true) // 1,512 + 2,912 > 3,000: waits
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
	taken, why := q.offer(context.Background(), env(10), nil, false) // would fit, but someone waits
	assert.False(t, taken)
	assert.Equal(t, account.ReasonQueueOverflow, why)
	close(release)
	wg.Wait()
	q.close()
	assert.Equal(t, []int{1000, 2400}, order)
}

// Within its share of the total a project takes envelopes whatever the others
// hold: hanging projects that filled pending::max_bytes do not stall a
// healthy one. Past its share it is bound by the total again.
func TestPendingShareWhenTotalIsFull(t *testing.T) {
	release := make(chan struct{})
	block := func(context.Context, *encode.Outgoing) { <-release }
	total := &pendingTotal{max: 3000, share: 1100}
	hung := newPendingQueue(context.Background(), 1, 1<<20, total, block)
	healthy := newPendingQueue(context.Background(), 1, 1<<20, total, block)
	env := func(n int) *encode.Outgoing {
		return &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: make([]byte, n)}}}}
	}
	offer := func(q *pendingQueue, n int) bool {
		taken, _ := q.offer(context.Background(), env(n), nil, false)
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
	hung.close()
	healthy.close()
	assert.Zero(t, total.bytes.Load())
}

// A worker whose queue ran empty waits for the next envelope instead of
// ending, so a burst after a burst reuses it (no new goroutine, no stack to
// grow again); waitIdle does not wait for parked workers, and close ends them.
func TestPendingWorkersParkAndEnd(t *testing.T) {
	var sent atomic.Int32
	q := newPendingQueue(context.Background(), 4, 1<<20, &pendingTotal{max: 1 << 30}, func(context.Context, *encode.Outgoing) { sent.Add(1) })
	env := &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: []byte("{}")}}}}
	workers := func() (all, parked int) {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.workers, q.parked
	}
	for range 3 {
		taken, _ := q.offer(context.Background(), env, nil, false)
		require.True(t, taken)
		q.waitIdle()
		all, parked := workers()
		assert.Equal(t, 1, all, "the parked worker took the next envelope")
		assert.Equal(t, 1, parked)
	}
	q.close()
	all, parked := workers()
	assert.Zero(t, all, "close ends parked workers")
	assert.Zero(t, parked)
	assert.EqualValues(t, 3, sent.Load())
}

// A parked worker ends once nothing came for its linger time; envelopes that
// arrive just as a worker gives up are still sent, by it or by a new worker.
func TestPendingWorkersLingerEnds(t *testing.T) {
	var sent atomic.Int32
	q := newPendingQueue(context.Background(), 3, 1<<30, &pendingTotal{max: 1 << 30}, func(context.Context, *encode.Outgoing) { sent.Add(1) })
	q.linger = time.Microsecond // workers end and are called back all the time
	env := &encode.Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Payload: []byte("{}")}}}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 500 {
				taken, _ := q.offer(context.Background(), env, nil, true)
				assert.True(t, taken)
				if i%50 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	q.waitIdle()
	assert.EqualValues(t, 2000, sent.Load(), "every envelope taken was sent")
	q.waitUntil(func() bool { return q.workers == 0 }) // they end by themselves
	q.close()
}
