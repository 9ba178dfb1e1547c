package send

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	fnvhash "hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/account/accounttest"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// The stage's tests run in a synctest bubble: time is virtual and moves only
// when every goroutine waits, so backoffs and timeouts are exact and no test
// sleeps for real. Sentry is a RoundTripper in the bubble (no network).

// answer is what the fake Sentry does with one request.
type answer struct {
	status  int
	headers map[string]string
	hang    bool          // until the request's context ends (no answer)
	reset   bool          // no answer at once: a connection ended before its answer
	hold    bool          // until the test releases it, whatever the request's context says
	body    string        // the answer's body ("{}" when empty)
	stream  io.ReadCloser // the answer's body, when set (an answer that dribbles or never ends)
}

// arrival is one request the fake Sentry got.
type arrival struct {
	project  string
	at       time.Time
	env      *envelope.Envelope
	encoding string // its Content-Encoding
}

// fakeSentry answers each request as respond says (200 by default).
type fakeSentry struct {
	mu       sync.Mutex
	respond  func(project string, n int, env *envelope.Envelope) answer
	arrivals []arrival
	release  chan struct{} // closed to end every hang
}

func (f *fakeSentry) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		return nil, errors.New("a request without a body")
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	encoding := req.Header.Get("Content-Encoding")
	if body, err = decode(encoding, body); err != nil {
		return nil, fmt.Errorf("bad %s body: %w", encoding, err)
	}
	env, err := envelope.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("bad envelope: %w", err)
	}
	project := strings.Split(req.URL.Path, "/")[2]
	f.mu.Lock()
	n := len(f.arrivals)
	f.arrivals = append(f.arrivals, arrival{project, time.Now(), env, encoding})
	respond := f.respond
	release := f.release
	f.mu.Unlock()
	a := answer{status: http.StatusOK}
	if respond != nil {
		a = respond(project, n, env)
	}
	switch {
	case a.reset:
		return nil, errors.New("connection reset by peer")
	case a.hang:
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-release:
			a.status = http.StatusOK
		}
	case a.hold:
		<-release
		a.status = http.StatusOK
	}
	h := http.Header{}
	for k, v := range a.headers {
		h.Set(k, v)
	}
	resp := &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader("{}")), Request: req}
	switch {
	case a.stream != nil:
		resp.Body = a.stream
	case a.body != "":
		resp.Body = io.NopCloser(strings.NewReader(a.body))
	}
	return resp, nil
}

// decode undoes a request body's Content-Encoding.
func decode(encoding string, body []byte) ([]byte, error) {
	switch encoding {
	case "":
		return body, nil
	case "zstd":
		dec, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		return dec.DecodeAll(body, nil)
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	default:
		return nil, fmt.Errorf("unknown encoding %q", encoding)
	}
}

// encodings are the Content-Encodings of the requests that arrived, in order ("none" for none).
func (f *fakeSentry) encodings() []string {
	var out []string
	for _, a := range f.got() {
		out = append(out, cmp.Or(a.encoding, "none"))
	}
	return out
}

// releaseAll ends the hangs and holds of the requests in flight; later ones hang again.
func (f *fakeSentry) releaseAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.release)
	f.release = make(chan struct{})
}

func (f *fakeSentry) got() []arrival {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]arrival(nil), f.arrivals...)
}

// ids are the event ids that arrived, in order (client reports: "report").
func (f *fakeSentry) ids() []string {
	var out []string
	for _, a := range f.got() {
		id := a.env.Header.EventID
		if id == "" {
			id = "report"
		}
		out = append(out, strings.TrimLeft(id, "0"))
	}
	return out
}

// fixture is a started stage with one lane per project ("1", "2", ...).
type fixture struct {
	t      *testing.T
	tel    *accounttest.Telemetry
	logs   *observer.ObservedLogs // the stage's log, warnings and up
	stage  *Stage
	lanes  []*Lane
	sentry *fakeSentry
	limits []*ratelimit.State
}

func testConfig() Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 30 * time.Second
	return Config{
		Client: client,
		Retry: configretry.BackOffConfig{
			Enabled: true, InitialInterval: time.Second, MaxInterval: 30 * time.Second,
			Multiplier: 2, MaxElapsedTime: 5 * time.Minute,
		},
		MaxConcurrentRequests: 8,
		MaxRequestsInFlight:   64,
		MaxBytes:              64 << 20,
		MaxProjects:           10,
		DrainTimeout:          5 * time.Second,
	}
}

// newFixture must run inside the test's bubble.
func newFixture(t *testing.T, projects int, configure func(*Config), reports bool) *fixture {
	cfg := testConfig()
	if configure != nil {
		configure(&cfg)
	}
	f := &fixture{t: t, tel: accounttest.New(t), sentry: &fakeSentry{release: make(chan struct{})}}
	core, logs := observer.New(zap.WarnLevel)
	f.logs = logs
	sendtest.Use(&cfg.Client) // every request goes to f.sentry
	f.stage = New(cfg, Settings{
		Telemetry: componenttest.NewNopTelemetrySettings(), Logger: zap.New(core), UserAgent: "test",
		Jitter: rand.New(rand.NewPCG(1, 2)), // the same backoffs every run (TestBrownout)
	})
	for i := range projects {
		limits := &ratelimit.State{}
		var r *account.ClientReports
		if reports {
			r = &account.ClientReports{}
		}
		id := strconv.Itoa(i + 1)
		l, err := f.stage.NewLane(LaneOptions{
			URL: "http://sentry.test/api/" + id + "/envelope/", Auth: "Sentry sentry_key=public",
			Limits: limits, Acct: account.NewAccountant(f.tel.Builder, id, r), Reports: r,
		})
		require.NoError(t, err)
		f.lanes = append(f.lanes, l)
		f.limits = append(f.limits, limits)
	}
	require.NoError(t, f.stage.Start(t.Context(), sendtest.Host(sendtest.Transport(f.sentry))))
	return f
}

func (f *fixture) shutdown() {
	close(f.sentry.release)
	f.stage.Shutdown(context.Background())
}

// sums reads a counter by "category=…,project=…[,reason=…]".
func (f *fixture) sums(name string) map[string]int64 {
	return f.tel.Sums(f.t, "otelcol_exporter_sentry_"+name)
}

func tx(id int) encode.Outgoing {
	return encode.Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{EventID: fmt.Sprintf("%032d", id)},
			Items:  []envelope.Item{{Type: envelope.ItemTypeTransaction, Payload: []byte(`{"type":"transaction","n":` + strconv.Itoa(id) + `}`)}},
		},
		Gate:   gate.GateTransaction,
		Counts: account.Counts{account.CatTransaction: 1, account.CatSpan: 3},
	}
}

func errEvent(id int) encode.Outgoing {
	return encode.Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{EventID: fmt.Sprintf("%032d", id)},
			Items:  []envelope.Item{{Type: envelope.ItemTypeEvent, Payload: []byte(`{"n":` + strconv.Itoa(id) + `}`)}},
		},
		Gate:   gate.GateError,
		Counts: account.Counts{account.CatError: 1},
	}
}

func txs(from, n int) []encode.Outgoing {
	out := make([]encode.Outgoing, n)
	for i := range out {
		out[i] = tx(from + i)
	}
	return out
}

// TestOfferDelivers: every envelope offered is sent and counted once; the
// push's release runs once, after the last one settled.
func TestOfferDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, nil, false)
		released := 0
		f.lanes[0].Offer(t.Context(), txs(1, 5), func() { released++ })
		synctest.Wait()
		assert.Equal(t, 1, released)
		assert.Len(t, f.sentry.got(), 5)
		assert.Equal(t, map[string]int64{"category=span,project=1": 15, "category=transaction,project=1": 5}, f.sums("sent_items"))
		assert.Zero(t, f.lanes[0].Held(), "nothing held once settled")
		f.shutdown()
	})
}

// TestRetryWaitsWithoutAWorker: an envelope answered 503 waits in the delay
// queue for its backoff; the lane's only place goes to the next envelope at
// once, and the failed one is tried again when its backoff is over.
func TestRetryWaitsWithoutAWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.MaxConcurrentRequests = 1 }, false)
		f.sentry.respond = inTurn([]answer{{status: http.StatusServiceUnavailable}})
		start := time.Now()
		f.lanes[0].Offer(t.Context(), txs(1, 1), nil)
		synctest.Wait()
		f.lanes[0].Offer(t.Context(), txs(2, 1), nil)
		synctest.Wait()
		got := f.sentry.got()
		require.Len(t, got, 2)
		assert.Equal(t, start, got[1].at, "the new envelope went out at once, not after the retry's backoff")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		got = f.sentry.got()
		require.Len(t, got, 3)
		assert.Equal(t, start.Add(time.Second), got[2].at, "the retry went out when its backoff (1 s) was over")
		assert.Equal(t, []string{"1", "2", "1"}, f.sentry.ids())
		assert.Equal(t, int64(2), f.sums("sent_items")["category=transaction,project=1"])
		f.shutdown()
	})
}

// TestRetryBudget: an envelope is retried per retry_on_failure until its
// next wait would pass max_elapsed_time, waiting at least a 5xx's
// Retry-After, then counted once with the reason of its last failure.
func TestRetryBudget(t *testing.T) {
	tests := []struct {
		name     string
		answer   answer
		wantAt   []time.Duration // when each attempt went out
		wantWhy  string
		disabled bool
	}{
		// backoff 1, 2, 4 s; the next (8 s) would end at 15 s, past 10 s
		{"503", answer{status: 503}, []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second}, "send_error", false},
		{"503 with Retry-After", answer{status: 503, headers: map[string]string{"Retry-After": "4"}}, []time.Duration{0, 4 * time.Second, 8 * time.Second}, "send_error", false},
		// each attempt times out after 2 s: tries at 0, 2+1, 5+2; the next
		// wait (4 s) would end at 13 s
		{"no answer", answer{hang: true}, []time.Duration{0, 3 * time.Second, 7 * time.Second}, "network_error", false},
		{"retries off", answer{status: 502}, []time.Duration{0}, "send_error", true},
	}
	for _, tt := range tests {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t, 1, func(c *Config) {
				c.Retry.MaxElapsedTime = 10 * time.Second
				c.Retry.Enabled = !tt.disabled
				c.Client.Timeout = 2 * time.Second
			}, false)
			f.sentry.respond = func(string, int, *envelope.Envelope) answer { return tt.answer }
			start := time.Now()
			f.lanes[0].Offer(t.Context(), txs(1, 1), nil)
			time.Sleep(time.Minute)
			synctest.Wait()
			var at []time.Duration
			for _, a := range f.sentry.got() {
				at = append(at, a.at.Sub(start))
			}
			assert.Equal(t, tt.wantAt, at)
			assert.Equal(t, map[string]int64{
				"category=span,project=1,reason=" + tt.wantWhy:        3,
				"category=transaction,project=1,reason=" + tt.wantWhy: 1,
			}, f.sums("dropped_items"))
			f.shutdown()
		})
	}
}

// TestRateLimitDropsQueued: a 429 merges its limit, counts its envelope
// rate_limited, and drops what is queued of the limited category at once
// (ratelimit_backoff); other categories still go, and a new envelope of the
// limited category is dropped when offered.
func TestRateLimitDropsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.MaxConcurrentRequests = 1 }, false)
		f.sentry.respond = inTurn([]answer{{status: 429, headers: map[string]string{"X-Sentry-Rate-Limits": "60:transaction:key"}}})
		out := append(txs(1, 3), errEvent(10), errEvent(11))
		f.lanes[0].Offer(t.Context(), out, nil)
		synctest.Wait()
		f.lanes[0].Offer(t.Context(), txs(4, 1), nil)
		synctest.Wait()
		// Which of 10 and 11 goes first depends on whether the worker took 1
		// before the rest were queued (the backlog's oldest and newest in turn).
		assert.ElementsMatch(t, []string{"1", "10", "11"}, f.sentry.ids())
		assert.Equal(t, map[string]int64{
			"category=span,project=1,reason=rate_limited":             3,
			"category=transaction,project=1,reason=rate_limited":      1,
			"category=span,project=1,reason=ratelimit_backoff":        9,
			"category=transaction,project=1,reason=ratelimit_backoff": 3,
		}, f.sums("dropped_items"))
		assert.Equal(t, int64(2), f.sums("sent_items")["category=error,project=1"])
		f.shutdown()
	})
}

// memoryFixture is two projects sharing a 1 MiB budget (a share of 512 KiB
// each); project 1's Sentry hangs until unhang.
func memoryFixture(t *testing.T) (f *fixture, unhang func()) {
	f = newFixture(t, 2, func(c *Config) {
		c.MaxBytes = 1 << 20
		c.MaxProjects = 2
		c.Client.Timeout = 0 // the hang lasts until unhang
	}, false)
	var mu sync.Mutex
	hanging := true
	f.sentry.respond = func(project string, _ int, _ *envelope.Envelope) answer {
		mu.Lock()
		defer mu.Unlock()
		return answer{status: 200, hang: project == "1" && hanging}
	}
	return f, func() {
		mu.Lock()
		hanging = false
		mu.Unlock()
		f.sentry.releaseAll()
	}
}

// big is a transaction of ~10 KiB.
func big(id int) []encode.Outgoing {
	o := tx(id)
	o.Env.Items[0].Payload = []byte(`{"pad":"` + strings.Repeat("x", 10<<10) + `"}`)
	return []encode.Outgoing{o}
}

func (f *fixture) idsOf(project string) []int {
	var ids []int
	for _, a := range f.sentry.got() {
		if a.project == project {
			id, _ := strconv.Atoi(strings.TrimLeft(a.env.Header.EventID, "0"))
			ids = append(ids, id)
		}
	}
	return ids
}

// TestMemoryDropsOldest: when the memory budget is full, a project whose
// Sentry hangs drops its oldest envelopes not in flight (queue_overflow) and
// keeps its newest; every envelope is sent or counted.
func TestMemoryDropsOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, unhang := memoryFixture(t)
		hung := f.lanes[0]
		hung.Offer(t.Context(), big(1), nil)
		synctest.Wait()             // in flight, hanging
		for i := 2; i <= 300; i++ { // three times the budget
			hung.Offer(t.Context(), big(i), nil)
		}
		synctest.Wait()
		assert.LessOrEqual(t, f.stage.mem.Held(), f.stage.mem.Max(), "within the budget")
		dropped := f.sums("dropped_items")["category=transaction,project=1,reason=queue_overflow"]
		assert.Positive(t, dropped)
		unhang()
		synctest.Wait()
		ids := f.idsOf("1")
		require.NotEmpty(t, ids)
		assert.Equal(t, 1, ids[0], "the first was in flight when the budget filled")
		kept := slices.Sorted(slices.Values(ids[1:])) // sent by several workers once Sentry answers
		assert.Equal(t, 300, kept[len(kept)-1], "the newest was kept")
		assert.Greater(t, kept[0], int(dropped)+1, "the budget filled: the oldest went, ids 2 to %d", dropped+1)
		// Once Sentry answers, each request's copies of its body are
		// reserved too: more of the oldest queued give way to them.
		all := f.sums("dropped_items")["category=transaction,project=1,reason=queue_overflow"]
		assert.Equal(t, int64(300), int64(len(ids))+all, "every envelope sent or counted")
		f.shutdown()
	})
}

// TestMemoryHungGivesWay: a healthy project that needs room takes it from
// the hung project furthest past its share, never the reverse.
func TestMemoryHungGivesWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, unhang := memoryFixture(t)
		hung, healthy := f.lanes[0], f.lanes[1]
		for i := 1; i <= 300; i++ {
			hung.Offer(t.Context(), big(i), nil)
		}
		synctest.Wait()
		require.Positive(t, f.sums("dropped_items")["category=transaction,project=1,reason=queue_overflow"], "the budget is full")
		for i := range 40 { // bursts of 4 (~40 KiB), each sent before the next comes
			healthy.Offer(t.Context(), big(1000+i), nil)
			if i%4 == 3 {
				synctest.Wait()
			}
		}
		synctest.Wait()
		assert.Equal(t, int64(40), f.sums("sent_items")["category=transaction,project=2"], "the healthy project got room")
		assert.Zero(t, f.sums("dropped_items")["category=transaction,project=2,reason=queue_overflow"])
		unhang()
		synctest.Wait()
		assert.Equal(t, int64(300), int64(len(f.idsOf("1")))+f.sums("dropped_items")["category=transaction,project=1,reason=queue_overflow"],
			"every envelope of the hung project sent or counted")
		f.shutdown()
	})
}

// TestSplitOn413: a log container Sentry answers 413 is split in two, each
// half sent once (a half refused again is counted send_error, never split
// again).
func TestSplitOn413(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, nil, false)
		f.sentry.respond = func(_ string, _ int, env *envelope.Envelope) answer {
			if env.Items[0].ItemCount > 30 {
				return answer{status: http.StatusRequestEntityTooLarge}
			}
			return answer{status: 200}
		}
		enc := encode.New(nil, "public", account.NewAccountant(f.tel.Builder, "1", nil))
		logs := func(n int) []encode.Outgoing {
			items := make([][]byte, n)
			for i := range items {
				items[i] = []byte(`{"body":"log ` + strconv.Itoa(i) + `"}`)
			}
			return enc.AppendLogs(t.Context(), nil, items, &encode.Arena{})
		}
		f.lanes[0].Offer(t.Context(), logs(100), nil) // 100 → 413 → 50 + 50 → both 413 → counted
		synctest.Wait()
		f.lanes[0].Offer(t.Context(), logs(40), nil) // 40 → 413 → 20 + 20 → stored
		synctest.Wait()
		var counts []int
		for _, a := range f.sentry.got() {
			counts = append(counts, a.env.Items[0].ItemCount)
		}
		assert.Equal(t, []int{100, 50, 50, 40, 20, 20}, counts)
		assert.Equal(t, int64(100), f.sums("dropped_items")["category=log_item,project=1,reason=send_error"])
		assert.Equal(t, int64(40), f.sums("sent_items")["category=log_item,project=1"])
		assert.Zero(t, f.lanes[0].Held(), "the halves' bytes, counted in place of the container's, all let go")
		assert.Zero(t, f.stage.mem.Held())
		f.shutdown()
	})
}

// TestNoAnswerOneProbe: a Sentry that stops answering is probed by one
// request at a time; when it answers again, the way opens and the backlog
// drains.
func TestNoAnswerOneProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down sync.Mutex
		isDown := false
		f := newFixture(t, 1, func(c *Config) { c.Client.Timeout = 10 * time.Second }, false)
		f.sentry.respond = func(string, int, *envelope.Envelope) answer {
			time.Sleep(10 * time.Millisecond)
			down.Lock()
			defer down.Unlock()
			return answer{status: 200, hang: isDown}
		}
		f.lanes[0].Offer(t.Context(), txs(1, 200), nil) // a healthy spell: the limit grows
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 8, f.lanes[0].Limit(), "at its ceiling")
		down.Lock()
		isDown = true
		down.Unlock()
		sentBefore := len(f.sentry.got())
		f.lanes[0].Offer(t.Context(), txs(1000, 50), nil)
		for range 6 {
			time.Sleep(10 * time.Second)
			synctest.Wait()
			assert.Equal(t, 1, f.lanes[0].Limit(), "one probe")
		}
		assert.LessOrEqual(t, len(f.sentry.got())-sentBefore, 8+6, "the requests in flight when it stopped, then one per timeout, not 50")
		down.Lock()
		isDown = false
		down.Unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, int64(250), f.sums("sent_items")["category=transaction,project=1"], "the backlog drained")
		f.shutdown()
	})
}

// TestNoAnswerSpacesProbes: a receiver that ends every connection before
// its answer gets one probe at a time, each further probe in a row later
// than the last (50 ms doubling to initial_interval), not one per envelope
// as fast as they fail; the first answer after it heals drains the backlog.
func TestNoAnswerSpacesProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.Retry.InitialInterval = 5 * time.Second }, false)
		var mu sync.Mutex
		healed := false
		f.sentry.respond = func(string, int, *envelope.Envelope) answer {
			mu.Lock()
			defer mu.Unlock()
			return answer{status: 200, reset: !healed}
		}
		f.lanes[0].Offer(t.Context(), txs(1, 200), nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		got := f.sentry.got()
		want := []time.Duration{50, 100, 200, 400, 800, 1600, 3200, 5000, 5000}
		require.Greater(t, len(got), len(want), "probed all along")
		assert.LessOrEqual(t, len(got), 20, "one probe per gap, not one per envelope (200)")
		for i, gap := range want {
			assert.Equal(t, gap*time.Millisecond, got[i+1].at.Sub(got[i].at), "the gap after probe %d", i+1)
		}
		mu.Lock()
		healed = true
		mu.Unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, int64(200), f.sums("sent_items")["category=transaction,project=1"], "healed: the backlog drained")
		f.shutdown()
	})
}

// TestShutdownSettlesEverything: at BeginShutdown the envelopes waiting to
// retry are counted with their last failure; what is queued gets one
// attempt; drain_timeout later the request in flight is cancelled and the
// rest counted network_error.
func TestShutdownSettlesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 2, func(c *Config) {
			c.MaxConcurrentRequests = 1
			c.Client.Timeout = 0
			c.DrainTimeout = 5 * time.Second
		}, false)
		f.sentry.respond = func(project string, _ int, _ *envelope.Envelope) answer {
			if project == "1" {
				return answer{status: 503}
			}
			return answer{hang: true}
		}
		f.lanes[0].Offer(t.Context(), txs(1, 2), nil)  // both fail, then wait to retry
		f.lanes[1].Offer(t.Context(), txs(10, 3), nil) // one hangs, two queued
		synctest.Wait()
		start := time.Now()
		f.stage.Shutdown(t.Context())
		assert.Equal(t, 5*time.Second, time.Since(start), "the drain time, then done")
		d := f.sums("dropped_items")
		assert.Equal(t, int64(2), d["category=transaction,project=1,reason=send_error"], "retries end at shutdown, counted with their 503")
		assert.Equal(t, int64(3), d["category=transaction,project=2,reason=network_error"], "the hung one cancelled, the queued ones never sent")
		assert.Len(t, f.sentry.got(), 3, "2 for project 1, 1 for project 2: nothing after the drain")
		close(f.sentry.release)
	})
}

// TestClientReportRidesAlong: drops counted by the accountant ride along on
// the next envelope; a report whose envelope failed is kept for the next.
func TestClientReportRidesAlong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.MaxConcurrentRequests = 1 }, true)
		f.sentry.respond = inTurn([]answer{{status: 503}})
		f.lanes[0].acct.Dropped(t.Context(), account.ReasonQueueOverflow, account.Counts{account.CatSpan: 7})
		f.lanes[0].Offer(t.Context(), txs(1, 1), nil)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got := f.sentry.got()
		require.Len(t, got, 2)
		for i, a := range got {
			require.Len(t, a.env.Items, 2, "attempt %d carries the report", i)
			assert.Equal(t, envelope.ItemTypeClientReport, a.env.Items[1].Type)
			assert.Contains(t, string(a.env.Items[1].Payload), `"quantity":7`)
		}
		f.lanes[0].Offer(t.Context(), txs(2, 1), nil)
		synctest.Wait()
		assert.Len(t, f.sentry.got()[2].env.Items, 1, "delivered once: not sent again")
		f.shutdown()
	})
}

// TestHealth: a project's health follows its answers.
func TestHealth(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	after := time.Minute
	tests := []struct {
		name     string
		statuses []int // one a second from t0
		at       time.Duration
		want     HealthState
	}{
		{"nothing sent", nil, 0, HealthOK},
		{"answered", []int{200}, time.Hour, HealthOK},
		{"key refused", []int{200, 401}, 0, HealthRefused},
		{"project gone or key disabled", []int{200, 403}, 0, HealthRefused},
		{"refused until another answer", []int{403, 503}, 0, HealthOK},
		{"refused again", []int{403, 200, 401}, 0, HealthRefused},
		{"5xx after a refusal: unreachable once long enough", []int{401, 503}, 2 * time.Minute, HealthUnreachable},
		{"5xx for less than the threshold", []int{503, 503}, 30 * time.Second, HealthOK},
		{"5xx for longer", []int{503, 503}, 2 * time.Minute, HealthUnreachable},
		{"no answer for longer", []int{0, 0, 0}, 2 * time.Minute, HealthUnreachable},
		{"a 429 is an answer", []int{503, 429}, 2 * time.Minute, HealthOK},
		{"a 2xx ends it", []int{0, 503, 200}, 2 * time.Minute, HealthOK},
		{"a 500 for longer", []int{500}, 2 * time.Minute, HealthUnreachable},
		{"a 4xx ends it", []int{503, 404}, 2 * time.Minute, HealthOK},
		{"a 300 ends it", []int{503, 300}, 2 * time.Minute, HealthOK},
		{"failing for exactly the threshold", []int{503}, time.Minute, HealthOK},
		{"failing for a moment longer", []int{503}, time.Minute + time.Nanosecond, HealthUnreachable},
		{"failing since the first failure", []int{503, 503, 503}, time.Minute + time.Nanosecond, HealthUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Lane{}
			for i, s := range tt.statuses {
				l.health.observe(Result{Status: s}, t0.Add(time.Duration(i)*time.Second))
			}
			h := l.Health(t0.Add(tt.at), after)
			assert.Equal(t, tt.want, h.State)
			switch h.State {
			case HealthRefused:
				assert.Equal(t, tt.statuses[len(tt.statuses)-1], h.Status)
			case HealthUnreachable:
				assert.False(t, h.Since.IsZero())
			}
		})
	}
}

// TestNotStartedIsANetworkError: an attempt before Start (no client) fails
// like a request that got no answer, and is counted once.
func TestNotStartedIsANetworkError(t *testing.T) {
	tel := accounttest.New(t)
	request, err := newRequestTemplate("http://sentry.test/api/1/envelope/", "Sentry sentry_key=public", "test")
	require.NoError(t, err)
	p := httpSender{request: request, acct: account.NewAccountant(tel.Builder, "1", nil), bufs: &bufferPools{}}
	res := p.attemptEncoded(t.Context(), gate.GateInternal, &envelope.Envelope{}, EncodingLeftToConfighttp)
	assert.Equal(t, account.ReasonNetworkError, res.Reason)
	assert.True(t, res.retryable())
	assert.Equal(t, map[string]int64{"project=1,status=network_error": 1}, tel.Sums(t, "otelcol_exporter_sentry_requests"))
}

// TestBrownout: a Sentry that answers a fifth of the requests 503 (100 ms
// round trips), 200 envelopes/s for 20 s, retry_on_failure at the
// exporter's defaults (the collector's, but a first retry after 1 s). The
// limit never collapses (one request at a time would store a twentieth) and
// no worker waits in a backoff: at least 75 % is stored during the load, 99 % within 10 s of its
// end, all of it within 120 s, and nothing is dropped.
func TestBrownout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) {
			c.Retry = configretry.NewDefaultBackOffConfig()
			c.Retry.InitialInterval = time.Second // the exporter's default (factory.go)
			c.MaxConcurrentRequests = 128
		}, false)
		var mu sync.Mutex
		tries := map[string]uint64{}
		f.sentry.respond = func(_ string, _ int, env *envelope.Envelope) answer {
			time.Sleep(100 * time.Millisecond) // one request at a time would store 10 envelopes/s
			mu.Lock()
			defer mu.Unlock()
			// One in five, fixed by the envelope and its try, not by the order
			// the workers' requests arrive in: with the fixture's seeded
			// jitter, the same run every time.
			id := env.Header.EventID
			tries[id]++
			if rand.New(rand.NewPCG(tries[id], fnv(id))).IntN(5) == 0 {
				return answer{status: http.StatusServiceUnavailable}
			}
			return answer{status: http.StatusOK}
		}
		const total = 200 * 20
		stored := func() int64 { return f.sums("sent_items")["category=transaction,project=1"] }
		for i := range total {
			f.lanes[0].Offer(t.Context(), txs(i, 1), nil)
			time.Sleep(5 * time.Millisecond)
		}
		atEnd := stored()
		time.Sleep(10 * time.Second)
		at10 := stored()
		time.Sleep(110 * time.Second)
		synctest.Wait()
		at120 := stored()
		t.Logf("stored: %.1f %% during the load, %.2f %% 10 s after, %.2f %% 120 s after; limit %d",
			100*float64(atEnd)/total, 100*float64(at10)/total, 100*float64(at120)/total, f.lanes[0].Limit())
		assert.GreaterOrEqual(t, atEnd, int64(total*75/100), "75 % stored during the load")
		assert.GreaterOrEqual(t, at10, int64(total*99/100), "99 % within 10 s of its end")
		assert.Equal(t, int64(total), at120, "all within 120 s")
		assert.Empty(t, f.sums("dropped_items"), "nothing dropped")
		f.shutdown()
	})
}

// fnv is s's FNV-1a hash.
func fnv(s string) uint64 {
	h := fnvhash.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// TestBacklogDoesNotStarveNew: when a Sentry that was away answers again,
// the backlog drains, and what arrives meanwhile goes out with it, not
// behind it.
func TestBacklogDoesNotStarveNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) {
			c.Client.Timeout = 0
			c.MaxConcurrentRequests = 4
		}, false)
		var mu sync.Mutex
		away := true
		f.sentry.respond = func(string, int, *envelope.Envelope) answer {
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			return answer{status: 200, hang: away}
		}
		f.lanes[0].Offer(t.Context(), txs(1, 400), nil) // the first hangs, 399 wait
		synctest.Wait()
		mu.Lock()
		away = false
		mu.Unlock()
		f.sentry.releaseAll()
		time.Sleep(200 * time.Millisecond) // the way opens: the limit grows from the probe
		f.lanes[0].Offer(t.Context(), txs(1001, 10), nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		ids := f.sentry.ids()
		require.Len(t, ids, 410)
		lastNew := 0
		for i, id := range ids {
			if len(id) == 4 { // 1001..1010
				lastNew = i
			}
		}
		t.Logf("the last new envelope went out %dth of 410", lastNew+1)
		assert.Less(t, lastNew, 250, "the new envelopes went out while the backlog drained")
		f.shutdown()
	})
}

// runInBubble runs fn as the subtest name, in a synctest bubble of its own.
func runInBubble(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) { synctest.Test(t, fn) })
}
