package send

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/concurrency"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// growLimit grows l's adaptive limit to n (at most max_concurrent_requests)
// as answered requests grow it.
func growLimit(t *testing.T, l *Lane, n int) {
	for l.limit.Current() < n {
		tickets := make([]concurrency.Ticket, l.limit.Current())
		for i := range tickets {
			var ok bool
			tickets[i], ok = l.limit.TryAcquire()
			require.True(t, ok)
		}
		for _, tk := range tickets {
			l.limit.Release(tk, concurrency.VerdictOK)
		}
	}
	require.Equal(t, n, l.limit.Current())
}

// queueJobs puts envelopes in l's queue q without waking a worker.
func queueJobs(l *Lane, q *fifo, out ...encode.Outgoing) {
	for i := range out {
		pushJob(l, q, &job{out: out[i]})
	}
}

// pushJob puts j in l's queue q without waking a worker; the bytes it holds
// are counted.
func pushJob(l *Lane, q *fifo, j *job) {
	l.mem.Add(j.held)
	l.mu.Lock()
	defer l.mu.Unlock()
	q.push(j)
	l.jobs++
}

func idOf(j *job) int {
	id, _ := strconv.Atoi(strings.TrimLeft(j.out.Env.Header.EventID, "0"))
	return id
}

// TestTakeOrder: due retries and new envelopes are taken in turn; while the
// new ones are a backlog (more than twice the limit), its oldest and its
// newest in turn; an envelope whose category became limited while it waited
// is dropped on the way.
func TestTakeOrder(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		due   []int // retries whose time came
		ready []int // new envelopes
		want  []int
	}{
		{"new only, limit 1: a backlog over 2", 1, nil, []int{1, 2, 3, 4}, []int{1, 4, 2, 3}},
		{"new only, limit 2: a backlog over 4", 2, nil, []int{1, 2, 3, 4, 5, 6}, []int{1, 6, 2, 3, 4, 5}},
		{"new only, limit 3: no backlog", 3, nil, []int{1, 2, 3, 4, 5, 6}, []int{1, 2, 3, 4, 5, 6}},
		{"due and new in turn", 1, []int{101, 102}, []int{1, 2}, []int{1, 101, 2, 102}},
		{"due only", 1, []int{101, 102}, nil, []int{101, 102}},
	}
	for _, tt := range tests {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t, 1, func(c *Config) { c.MaxConcurrentRequests = tt.limit }, false)
			l := f.lanes[0]
			growLimit(t, l, tt.limit)
			for _, id := range tt.due {
				queueJobs(l, &l.due, tx(id))
			}
			for _, id := range tt.ready {
				queueJobs(l, &l.ready, tx(id))
			}
			assert.Equal(t, tt.want, takeIDs(l, len(tt.want)))
			assert.Nil(t, l.take(), "all taken")
			f.shutdown()
		})
	}
}

// takeIDs takes n envelopes from l, settling each as delivered: their ids,
// 0 where none was left.
func takeIDs(l *Lane, n int) []int {
	var got []int
	for range n {
		j := l.take()
		if j == nil {
			got = append(got, 0)
			continue
		}
		got = append(got, idOf(j))
		l.settle(j, Result{Delivered: true})
	}
	return got
}

// TestQueuedThenLimited: an envelope whose category became rate limited
// while it waited is dropped on the way (ratelimit_backoff), never sent; the
// next one goes out.
func TestQueuedThenLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, nil, false)
		l := f.lanes[0]
		queueJobs(l, &l.ready, errEvent(1), tx(2))
		limits, _ := ratelimit.Parse("60:error:key", time.Now())
		f.limits[0].Merge(limits)
		l.mu.Lock()
		l.callWorkerLocked()
		l.mu.Unlock()
		synctest.Wait()
		assert.Equal(t, []string{"2"}, f.sentry.ids())
		assert.Equal(t, map[string]int64{"category=error,project=1,reason=ratelimit_backoff": 1}, f.sums("dropped_items"))
		f.shutdown()
	})
}

// TestLimitFallWakesTheNextParked: when the limit fell while workers were
// parked, a parked worker called back for an envelope ends (too many run)
// and hands the envelope on to the next parked one, until one that may run
// takes it: it goes out at once, not when a later push comes.
func TestLimitFallWakesTheNextParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.Retry.Enabled = false }, false)
		l := f.lanes[0]
		f.sentry.respond = func(_ string, _ int, env *envelope.Envelope) answer {
			time.Sleep(10 * time.Millisecond)
			if env.Header.EventID == tx(1000).Env.Header.EventID {
				return answer{status: http.StatusServiceUnavailable}
			}
			return answer{status: 200}
		}
		l.Offer(t.Context(), txs(1, 200), nil) // a healthy spell: the limit grows, 8 workers
		time.Sleep(500 * time.Millisecond)
		l.mu.Lock()
		workers, parked := l.workers, l.parked
		l.mu.Unlock()
		require.Equal(t, 8, l.Limit())
		require.Equal(t, 8, workers)
		require.Equal(t, 8, parked, "all parked, lingering")

		l.Offer(t.Context(), txs(1000, 1), nil) // a 503: the limit halves, its worker ends
		time.Sleep(100 * time.Millisecond)
		require.Equal(t, 4, l.Limit())
		l.mu.Lock()
		workers, parked = l.workers, l.parked
		l.mu.Unlock()
		require.Equal(t, 7, workers, "more than the limit, parked")
		require.Equal(t, 7, parked)

		offered := time.Now()
		l.Offer(t.Context(), txs(2000, 1), nil)
		synctest.Wait()
		got := f.sentry.got()
		last := got[len(got)-1]
		assert.Equal(t, "2000", strings.TrimLeft(last.env.Header.EventID, "0"))
		assert.Equal(t, offered, last.at, "sent at once")
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, int64(201), f.sums("sent_items")["category=transaction,project=1"])
		f.shutdown()
	})
}

// TestDrainEndsWhileWaitingForAPlace: a worker waiting for a place in the
// request budget when shutdown's drain time ends sends nothing more: what
// its project has queued is counted network_error at once, while the
// requests in flight still hold their places.
func TestDrainEndsWhileWaitingForAPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 2, func(c *Config) {
			c.MaxRequestsInFlight = 2 // a share of 1 request each
			c.MaxProjects = 2
			c.DrainTimeout = 5 * time.Second
			c.Client.Timeout = 0
		}, false)
		first, second := f.lanes[0], f.lanes[1]
		f.sentry.respond = func(_ string, n int, _ *envelope.Envelope) answer {
			if n == 0 {
				return answer{status: 200} // grows project 1's limit to 2
			}
			return answer{hold: true} // until released, whatever the drain
		}
		first.Offer(t.Context(), txs(1, 1), nil)
		synctest.Wait()
		require.Equal(t, 2, first.Limit())
		second.Offer(t.Context(), txs(100, 1), nil) // holds project 2's share
		synctest.Wait()
		first.Offer(t.Context(), txs(2, 3), nil) // one in flight, one worker waiting for a place, one more queued
		synctest.Wait()
		require.Len(t, f.sentry.got(), 3)
		start := time.Now()
		f.stage.BeginShutdown()
		time.Sleep(f.stage.cfg.DrainTimeout)
		synctest.Wait()
		assert.Equal(t, 5*time.Second, time.Since(start))
		assert.Equal(t, map[string]int64{
			"category=span,project=1,reason=network_error":        6,
			"category=transaction,project=1,reason=network_error": 2,
		}, f.sums("dropped_items"), "the two queued, counted when the drain ended")
		assert.Len(t, f.sentry.got(), 3, "nothing more sent")
		f.sentry.releaseAll()
		f.stage.Shutdown(t.Context())
		assert.Equal(t, int64(3), f.sums("sent_items")["category=transaction,project=1"]+f.sums("sent_items")["category=transaction,project=2"],
			"the two held ones, and the first")
	})
}

// TestOfferWhileClosing: an envelope offered while shutdown closes the lanes
// (before the drain time is over) is counted network_error, and nothing of
// it stays held.
func TestOfferWhileClosing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.Client.Timeout = 0 }, false)
		l := f.lanes[0]
		f.sentry.respond = func(string, int, *envelope.Envelope) answer { return answer{hang: true} }
		l.Offer(t.Context(), txs(1, 1), nil)
		synctest.Wait()
		held := l.Held()
		require.Positive(t, held)
		var wg sync.WaitGroup
		wg.Go(func() { f.stage.Shutdown(t.Context()) })
		synctest.Wait() // closed, waiting for the request in flight
		l.Offer(t.Context(), txs(2, 1), nil)
		assert.Equal(t, held, l.Held(), "nothing more held")
		assert.Equal(t, held, f.stage.mem.Held())
		assert.Equal(t, int64(1), f.sums("dropped_items")["category=transaction,project=1,reason=network_error"])
		wg.Wait() // the drain time ends the request in flight
		assert.Zero(t, l.Held())
		assert.Zero(t, f.stage.mem.Held())
	})
}

// TestProbeAfterWindow: when a category's limit ends, one envelope probes;
// once it is answered (not 429), the others go as usual.
func TestProbeAfterWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.MaxConcurrentRequests = 1 }, false)
		l := f.lanes[0]
		f.sentry.respond = inTurn([]answer{{status: 429, headers: map[string]string{"X-Sentry-Rate-Limits": "10:transaction:key"}}})
		l.Offer(t.Context(), txs(1, 1), nil)
		synctest.Wait()
		time.Sleep(10 * time.Second)
		l.Offer(t.Context(), txs(2, 2), nil) // 2 probes, 3 follows
		synctest.Wait()
		assert.Equal(t, []string{"1", "2", "3"}, f.sentry.ids())
		assert.Equal(t, int64(2), f.sums("sent_items")["category=transaction,project=1"])
		assert.Equal(t, map[string]int64{
			"category=span,project=1,reason=rate_limited":        3,
			"category=transaction,project=1,reason=rate_limited": 1,
		}, f.sums("dropped_items"))
		f.shutdown()
	})
}

// TestHealthFromAnswers: the lane's health follows the answers its envelopes
// get.
func TestHealthFromAnswers(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   HealthState
	}{
		{200, HealthOK},
		{401, HealthRefused},
		{403, HealthRefused},
		{503, HealthUnreachable},
	} {
		runInBubble(t, strconv.Itoa(tt.status), func(t *testing.T) {
			f := newFixture(t, 1, func(c *Config) { c.Retry.Enabled = false }, false)
			f.sentry.respond = func(string, int, *envelope.Envelope) answer { return answer{status: tt.status} }
			f.lanes[0].Offer(t.Context(), txs(1, 1), nil)
			synctest.Wait()
			assert.Equal(t, tt.want, f.lanes[0].Health(time.Now().Add(time.Second), 0).State)
			f.shutdown()
		})
	}
}

// TestLaneAddedAfterStart: a project added after Start gets its client at
// once and sends.
func TestLaneAddedAfterStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, nil, false)
		l, err := f.stage.NewLane(LaneOptions{
			URL: "http://sentry.test/api/2/envelope/", Auth: "Sentry sentry_key=public",
			Limits: &ratelimit.State{}, Acct: account.NewAccountant(f.tel.Builder, "2", nil),
		})
		require.NoError(t, err)
		require.NotNil(t, l)
		assert.Len(t, f.stage.Lanes(), 2)
		l.Offer(t.Context(), txs(1, 1), nil)
		synctest.Wait()
		assert.Equal(t, []int{1}, f.idsOf("2"))
		f.shutdown()
	})
}

// TestWorkersNeverPastTheLimit: a lane runs at most as many workers as its
// limit allows, whether they start for newly offered envelopes or after an
// answer grew the limit; the others wait in the queue, not in a goroutine.
func TestWorkersNeverPastTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.Client.Timeout = 0 }, false)
		l := f.lanes[0]
		var holding atomic.Bool
		f.sentry.respond = func(string, int, *envelope.Envelope) answer {
			if holding.Load() {
				return answer{hold: true}
			}
			return answer{status: 200} // grows the limit, one answer at a time
		}
		workers := func() int {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.workers
		}
		for i := range 3 { // one at a time: each answered, the limit grows after each
			l.Offer(t.Context(), txs(i+1, 1), nil)
			synctest.Wait()
		}
		limit := l.Limit()
		require.Greater(t, limit, 1)
		holding.Store(true)
		l.Offer(t.Context(), txs(10, 20), nil) // all held: the limit is reached
		synctest.Wait()
		assert.Equal(t, limit, workers(), "one worker per place, none waiting for a place")
		assert.Len(t, f.sentry.got(), 3+limit)
		holding.Store(false)
		f.sentry.releaseAll()
		synctest.Wait()
		assert.LessOrEqual(t, workers(), l.workerCap())
		f.stage.Shutdown(t.Context())
	})
}
