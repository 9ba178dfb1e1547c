package sentryexporter

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// With routing, a project whose Sentry does not answer holds what fits in the
// memory budget and, once it is full, drops its own oldest envelopes
// (queue_overflow), never the healthy project's: the healthy project stores
// everything, the hung one counts what it dropped, and once it answers again
// its client report carries exactly that overflow.
func TestQueueOverflowWithRouting(t *testing.T) {
	synctest.Test(t, testQueueOverflowWithRouting)
}

func testQueueOverflowWithRouting(t *testing.T) {
	net := newMemNet()
	sick := newMemSentryOn(t, net, memSickHost)
	arrived, release := holdFirst(sick)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the server closes, even on failure
	h := newFaultHarnessWith(t, newMemSentryOn(t, net, memSentryHost), sick.dsnFor(sickProject), nil, func(c *Config) {
		c.Memory.MaxBytes = minMemoryBytes // a share of 10 KiB per project
		c.Assembly.MaxBytes = minMemoryBytes / 2
	})
	h.push("sick", sickProject) // the first envelope hangs; the rest queue
	<-arrived
	for range 200 { // far more than the budget holds
		h.push("sick", sickProject)
	}
	for range 3 {
		h.push("healthy", healthyProject)
	}
	waitIdleInBubble(h.project("healthy").lane)
	h.requireHealthyGotAll()
	for _, cat := range []account.Category{account.CatError, account.CatTransaction, account.CatSpan, account.CatLogItem} {
		assert.Zero(t, h.count("otelcol_exporter_sentry_dropped_items", healthyProject, cat), "the healthy project drops nothing (%s)", cat.Wire())
	}
	assert.LessOrEqual(t, h.exp.stage.Memory().Held(), int64(minMemoryBytes)+64<<10,
		"the budget holds, within the hung request's own cost")

	overflow := map[account.Category]int64{}
	for _, cat := range []account.Category{account.CatError, account.CatTransaction, account.CatSpan, account.CatLogItem} {
		overflow[cat] = h.count("otelcol_exporter_sentry_dropped_items", sickProject, cat, "reason", "queue_overflow")
		assert.Positive(t, overflow[cat], "%s: the hung project dropped its oldest", cat.Wire())
	}

	once.Do(func() { close(release) })
	waitIdleInBubble(h.project("sick").lane)
	h.shutdown()
	d := sick.discards()
	for _, cat := range []account.Category{account.CatError, account.CatTransaction, account.CatSpan, account.CatLogItem} {
		assert.EqualValues(t, overflow[cat], d["queue_overflow/"+string(cat.Wire())], "the client report carries the %s overflow", cat.Wire())
	}
	h.requireInvariant()
	sick.requireNoInvalid()
	h.sentry.requireNoInvalid()
}

// Without routing the push never waits either: a single project whose Sentry
// never answers takes its envelopes and returns at once; at shutdown, once
// pending::drain_timeout is over, the request in flight is cancelled, and it
// and everything queued behind it are counted network_error.
func TestSingleProjectNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newMemSentry(t)
		met := newSignal()
		f.setRespond(func(*envelope.Envelope) answer {
			met.fire()
			return answer{hang: true}
		})
		h := newHarnessWith(t, f, func(c *Config) {
			c.ClientConfig.Timeout = 0
			c.MaxConcurrentRequests = 1
			c.Pending.DrainTimeout = 50 * time.Millisecond
			noDedupe(c)
		})
		raw := h.traces.(settlingTraces)
		require.NoError(t, raw.Traces.ConsumeTraces(t.Context(), makeTraces(0, 2, true)))
		<-met.C()
		require.NoError(t, raw.Traces.ConsumeTraces(t.Context(), makeTraces(2, 2, true)))
		h.shutdown()
		assert.EqualValues(t, 4, h.dropped("transaction", "network_error"), "one in flight (cancelled), the rest queued")
		assert.EqualValues(t, 12, h.dropped("span", "network_error"))
		assert.EqualValues(t, 4, h.dropped("error", "network_error"))
		assert.Zero(t, h.sent("span")+h.sent("error")+h.sent("transaction"))
	})
}
