package sentryexporter

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
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
	h.project("sick").queue.MaxBytes = 1
	h.push("sick", sickProject) // 2 transactions, 2 errors, 1 log container: the first is taken, the rest overflow
	<-arrived
	for range 3 {
		h.push("healthy", healthyProject)
	}
	h.project("healthy").queue.WaitIdle()
	h.requireHealthyGotAll()

	overflow := func(cat account.Category) int64 {
		return h.count("otelcol_exporter_sentry_dropped_items", sickProject, cat, "reason", "queue_overflow")
	}
	assert.EqualValues(t, 1, overflow(account.CatTransaction))
	assert.EqualValues(t, 3, overflow(account.CatSpan))
	assert.EqualValues(t, 2, overflow(account.CatError))
	assert.EqualValues(t, 4, overflow(account.CatLogItem))

	once.Do(func() { close(release) })
	h.project("sick").queue.WaitIdle()
	h.project("sick").flushReport(t.Context(), false)
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
		require.NoError(t, raw.Traces.ConsumeTraces(t.Context(), makeTraces(0, 2, true)))
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
		require.NoError(t, raw.Traces.ConsumeTraces(t.Context(), makeTraces(0, 2, true)))
	})
	<-met
	require.NoError(t, h.traces.Shutdown(t.Context()))
	wg.Wait()
	require.NoError(t, h.logs.Shutdown(t.Context()))
	assert.EqualValues(t, 2, h.dropped("transaction", "network_error"), "one in flight (cancelled), one waiting for room")
	assert.EqualValues(t, 6, h.dropped("span", "network_error"))
	assert.EqualValues(t, 2, h.dropped("error", "network_error"))
	assert.Zero(t, h.sent("span")+h.sent("error")+h.sent("transaction"))
}
