package sentryexporter

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/metadatatest"
)

// TestStatusHandling gives each answer Sentry can give a row. The harness has
// no sending queue, so Consume* returns once every envelope is settled; it
// returns nil whatever happened, and the counters tell the outcome.
func TestStatusHandling(t *testing.T) {
	tests := []struct {
		name        string
		answers     []answer // in order; the last one repeats
		wantTries   int      // POSTs of the one transaction envelope
		wantSent    bool
		wantReason  string
		wantLimited bool // a limit is active afterwards
	}{
		{"200", []answer{{status: 200}}, 1, true, "", false},
		{"202", []answer{{status: 202}}, 1, true, "", false},
		{"200 with limits", []answer{{status: 200, headers: map[string]string{"X-Sentry-Rate-Limits": "60::organization"}}}, 1, true, "", true},
		// a 400 to a zstd body is re-sent once with gzip (a Relay older than zstd answers 400, see internal/send/compress.go)
		{"400 invalid envelope", []answer{{status: 400, headers: map[string]string{"X-Sentry-Error": "invalid event envelope"}}}, 2, false, "send_error", false},
		{"401", []answer{{status: 401}}, 1, false, "send_error", false},
		{"403 disabled key", []answer{{status: 403}}, 1, false, "send_error", false},
		{"413 single event", []answer{{status: 413}}, 1, false, "send_error", false},
		{"429 bare", []answer{{status: 429}}, 1, false, "rate_limited", true},
		{"429 never retried even with Retry-After 0", []answer{{status: 429, headers: map[string]string{"Retry-After": "0"}}}, 1, false, "rate_limited", false},
		{"500 then 200", []answer{{status: 500}, {status: 200}}, 2, true, "", false},
		{"503 twice then 202", []answer{{status: 503}, {status: 503}, {status: 202}}, 3, true, "", false},
		{"502 until retries give up", []answer{{status: 502}}, 4, false, "send_error", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			h := newHarness(t, func(c *Config) {
				c.RetryConfig.MaxElapsedTime = 30 * time.Millisecond
				c.RetryConfig.InitialInterval = 8 * time.Millisecond
				c.RetryConfig.MaxInterval = 8 * time.Millisecond
				c.RetryConfig.RandomizationFactor = 0
				c.ClientReports.Enabled = false
			})
			var tries atomic.Int32
			h.sentry.setRespond(func(*envelope.Envelope) answer {
				n := int(tries.Add(1)) - 1
				return tt.answers[min(n, len(tt.answers)-1)]
			})
			h.consumeTraces(0, 1, false)
			assert.EqualValues(t, tt.wantTries, tries.Load())
			if tt.wantSent {
				assert.EqualValues(t, 3, h.sent("span"))
				assert.Zero(t, h.droppedAll("span"))
			} else {
				assert.EqualValues(t, 3, h.dropped("span", tt.wantReason))
				assert.EqualValues(t, 1, h.dropped("transaction", tt.wantReason))
			}
			time.Sleep(time.Second)
			h.consumeTraces(1, 1, false)
			if tt.wantLimited {
				assert.EqualValues(t, tt.wantTries, tries.Load(), "the next transaction is dropped locally")
				assert.EqualValues(t, 3, h.dropped("span", "ratelimit_backoff"))
			}
			h.shutdown()
		}))
	}
}

// An envelope that gets no answer, or a 5xx, is retried per
// retry_on_failure, then counted once with its last failure. The harness's
// backoff (1 ms doubling to at most 5 ms) waits 1, 2, 4, 5 and 5 ms within
// the 20 ms budget: 6 attempts for each of the 5 envelopes answered 503;
// with no answer the probes are spaced too, so fewer.
func TestNetworkErrorRetriedThenCounted(t *testing.T) {
	for _, tt := range []struct {
		name, status, reason string
		fault                func(*fakeSentry)
	}{
		{"connection refused", "network_error", "network_error", func(f *fakeSentry) { f.stop() }},
		{"503 every time", "503", "send_error", func(f *fakeSentry) {
			f.setRespond(func(*envelope.Envelope) answer { return answer{status: http.StatusServiceUnavailable} })
		}},
	} {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			h := newHarness(t, func(c *Config) {
				c.RetryConfig.MaxElapsedTime = 20 * time.Millisecond
				c.ClientReports.Enabled = false
				noDedupe(c) // error events go out in their push, not at shutdown (when nothing is retried)
			})
			tt.fault(h.sentry)
			h.consumeTraces(0, 2, true)
			h.consumeLogs(3)
			h.shutdown()
			assert.EqualValues(t, 6, h.dropped("span", tt.reason))
			assert.EqualValues(t, 2, h.dropped("transaction", tt.reason))
			assert.EqualValues(t, 2, h.dropped("error", tt.reason))
			assert.EqualValues(t, 3, h.dropped("log_item", tt.reason))
			requests := h.sum("otelcol_exporter_sentry_requests", map[string]string{"status": tt.status})
			if tt.status == "503" {
				assert.EqualValues(t, 5*6, requests, "2 transactions, 2 error events and a log container, 6 attempts each")
				return
			}
			// No answer: each probe after one waits its gap (at most the
			// 1 ms initial_interval), so fewer attempts fit in 20 ms.
			assert.GreaterOrEqual(t, requests, int64(5*2), "every envelope retried")
			assert.LessOrEqual(t, requests, int64(5*6), "at most 6 attempts each")
		}))
	}
}

// A 413 on a container splits it in two and sends each half once.
func TestContainerTooLargeSplitsOnce(t *testing.T) { synctest.Test(t, testContainerTooLargeSplitsOnce) }

func testContainerTooLargeSplitsOnce(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false })
	var mu sync.Mutex
	var counts []int
	h.sentry.setRespond(func(env *envelope.Envelope) answer {
		mu.Lock()
		defer mu.Unlock()
		n := env.Items[0].ItemCount
		counts = append(counts, n)
		if n > 30 {
			return answer{status: http.StatusRequestEntityTooLarge}
		}
		return answer{status: http.StatusOK}
	})
	h.consumeLogs(100) // 100 → 413 → 50 + 50 → both 413 again → counted
	h.consumeLogs(40)  // 40 → 413 → 20 + 20 → stored
	h.shutdown()
	assert.Equal(t, []int{100, 50, 50, 40, 20, 20}, counts)
	assert.EqualValues(t, 100, h.dropped("log_item", "send_error"))
	assert.EqualValues(t, 40, h.sent("log_item"))
}

// The invariant: for each category, items in = items stored + items counted
// dropped, under random 503s, connection resets, 429s with random headers and
// refills. Sentry counts what it stored; the exporter's counters must agree.
func TestInvariantUnderChaos(t *testing.T) { synctest.Test(t, testInvariantUnderChaos) }

func testInvariantUnderChaos(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.RetryConfig.MaxElapsedTime = 10 * time.Millisecond
		c.RetryConfig.InitialInterval = time.Millisecond
		c.MaxConcurrentRequests = 8
	})
	rng := rand.New(rand.NewPCG(1, 2))
	var rngMu sync.Mutex
	var stored [account.NumCategories]atomic.Int64
	limitsHeaders := []string{"1:error:key", "2:transaction", "1:log_item;log_byte:org", "1::organization", "garbage", "1:span", ""}
	h.sentry.setRespond(func(env *envelope.Envelope) answer {
		rngMu.Lock()
		roll := rng.IntN(10)
		header := limitsHeaders[rng.IntN(len(limitsHeaders))]
		rngMu.Unlock()
		switch {
		case roll == 0:
			return answer{reset: true} // the connection dies before Sentry stores anything
		case roll < 2:
			return answer{status: http.StatusServiceUnavailable}
		case roll < 4:
			return answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": header}}
		default:
			for _, it := range env.Items {
				storeCounts(&stored, it)
			}
			return answer{status: http.StatusOK}
		}
	})
	var in account.Counts
	for i := range 40 {
		td := makeTraces(i*3, 3, i%2 == 0)
		in[account.CatSpan] += int64(td.SpanCount())
		in[account.CatTransaction] += 3
		if i%2 == 0 {
			in[account.CatError] += 3
		}
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
		require.NoError(t, h.logs.ConsumeLogs(t.Context(), makeLogs(7)))
		in[account.CatLogItem] += 7
		time.Sleep(700 * time.Millisecond)
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	for _, cat := range []account.Category{account.CatError, account.CatTransaction, account.CatSpan, account.CatLogItem} {
		name := string(cat.Wire())
		assert.Equal(t, in[cat], stored[cat].Load()+h.droppedAll(name), "%s: in = stored + dropped", name)
		assert.Equal(t, stored[cat].Load(), h.sent(name), "%s: sent_items equals what Sentry stored", name)
	}
	assert.Positive(t, h.dropped("span", "rate_limited")+h.dropped("span", "ratelimit_backoff"), "the chaos did limit something")
}

// storeCounts adds what Sentry stores of one item to stored.
func storeCounts(stored *[account.NumCategories]atomic.Int64, it envelope.Item) {
	switch it.Type {
	case envelope.ItemTypeEvent:
		stored[account.CatError].Add(1)
	case envelope.ItemTypeTransaction:
		var tx struct {
			Spans []json.RawMessage `json:"spans"`
		}
		if json.Unmarshal(it.Payload, &tx) == nil {
			stored[account.CatTransaction].Add(1)
			stored[account.CatSpan].Add(int64(1 + len(tx.Spans)))
		}
	case envelope.ItemTypeSpan:
		stored[account.CatSpan].Add(int64(it.ItemCount))
	case envelope.ItemTypeLog:
		stored[account.CatLogItem].Add(int64(it.ItemCount))
	}
}

// At shutdown nothing is sent into an active limit: what is still queued is
// dropped and counted, and the final client report is logged when an
// all-category limit blocks it.
func TestShutdownUnderLimitDropsQueued(t *testing.T) {
	synctest.Test(t, testShutdownUnderLimitDropsQueued)
}

func testShutdownUnderLimitDropsQueued(t *testing.T) {
	sentry := newMemSentry(t)
	var posts atomic.Int32
	sentry.setRespond(func(*envelope.Envelope) answer {
		posts.Add(1)
		return answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "600::organization"}}
	})
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.WithoutCancel(t.Context()))) }) // t.Context is done once cleanup runs
	core, logs := observer.New(zap.WarnLevel)
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.DSN = configopaque.String(sentry.dsn())
	q := exporterhelper.NewDefaultQueueConfig()
	q.NumConsumers = 1
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	cfg.QueueConfig = configoptional.Some(q)
	// One request at a time: pushes return once handed over, so it is the
	// project's workers, not the consumer, that decide how many envelopes are
	// out when the first 429 arrives.
	cfg.MaxConcurrentRequests = 1
	useMemNet(&cfg.ClientConfig)
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	te, err := f.CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Start(t.Context(), sentry.host()))
	for i := range 50 {
		require.NoError(t, te.ConsumeTraces(t.Context(), makeTraces(i, 1, false)))
	}
	require.NoError(t, te.Shutdown(t.Context()))

	assert.EqualValues(t, 1, posts.Load(), "one 429, then nothing is sent into the limit, not even at shutdown")
	h := &harness{t: t, tel: tel}
	assert.EqualValues(t, 3, h.dropped("span", "rate_limited"))
	assert.EqualValues(t, 49*3, h.dropped("span", "ratelimit_backoff"))
	assert.EqualValues(t, 50, h.droppedAll("transaction"))
	final := logs.FilterMessageSnippet("Final Sentry client report").All()
	require.Len(t, final, 1)
	assert.EqualValues(t, 49*3, final[0].ContextMap()["ratelimit_backoff.span"])
}

// Self-metrics, asserted with the generated metadatatest helpers.
func TestTelemetry(t *testing.T) { synctest.Test(t, testTelemetry) }

func testTelemetry(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false })
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "60:log_item:organization"}}))
	h.consumeLogs(3) // 429
	h.consumeLogs(2) // dropped locally
	h.consumeTraces(0, 1, false)
	time.Sleep(15 * time.Second)

	project := attribute.String("project", "1")
	metadatatest.AssertEqualExporterSentryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(project, attribute.String("category", "log_item"), attribute.String("reason", "rate_limited")), Value: 3},
		{Attributes: attribute.NewSet(project, attribute.String("category", "log_byte"), attribute.String("reason", "rate_limited")), Value: h.dropped("log_byte", "rate_limited")},
		{Attributes: attribute.NewSet(project, attribute.String("category", "log_item"), attribute.String("reason", "ratelimit_backoff")), Value: 2},
		{Attributes: attribute.NewSet(project, attribute.String("category", "log_byte"), attribute.String("reason", "ratelimit_backoff")), Value: h.dropped("log_byte", "ratelimit_backoff")},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterSentrySentItems(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(project, attribute.String("category", "transaction")), Value: 1},
		{Attributes: attribute.NewSet(project, attribute.String("category", "span")), Value: 3},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterSentryRequests(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(project, attribute.String("status", "429")), Value: 1},
		{Attributes: attribute.NewSet(project, attribute.String("status", "200")), Value: 1},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterSentryRateLimitRemaining(t, h.tel, []metricdata.DataPoint[float64]{
		{Attributes: attribute.NewSet(project, attribute.String("category", "log_item")), Value: 45},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	assert.Positive(t, h.dropped("log_byte", "ratelimit_backoff"))
	h.shutdown()
}

// The DSN's key never reaches a log line, an error or a metric.
func TestKeyNeverLogged(t *testing.T) { synctest.Test(t, testKeyNeverLogged) }

func testKeyNeverLogged(t *testing.T) {
	sentry := newMemSentry(t)
	sentry.setRespond(func(*envelope.Envelope) answer {
		return answer{status: http.StatusForbidden, headers: map[string]string{"X-Sentry-Error": "project disabled"}}
	})
	core, logs := observer.New(zap.DebugLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.WithoutCancel(t.Context()))) }) // t.Context is done once cleanup runs
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.DSN = configopaque.String(sentry.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig = configretry.BackOffConfig{Enabled: false}
	useMemNet(&cfg.ClientConfig)
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	te, err := f.CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Start(t.Context(), sentry.host()))
	require.NoError(t, te.ConsumeTraces(t.Context(), makeTraces(0, 1, true)))
	synctest.Wait() // the envelope is answered and settled (no retries)
	sentry.stop()
	require.NoError(t, te.ConsumeTraces(t.Context(), makeTraces(1, 1, true)))
	require.NoError(t, te.Shutdown(t.Context()))

	require.NotZero(t, logs.Len())
	entries := logs.All()
	for i := range entries {
		e := &entries[i]
		line := e.Message
		for k, v := range e.ContextMap() {
			line += " " + k + "=" + toString(v)
		}
		assert.NotContains(t, line, "publickey", "log line leaks the DSN key: %s", line)
	}
	assert.NotEmpty(t, logs.FilterMessageSnippet("Sentry rejected an envelope").FilterField(zap.String("detail", "project disabled")).All())
	for _, name := range []string{"otelcol_exporter_sentry_dropped_items", "otelcol_exporter_sentry_requests"} {
		m, err := tel.GetMetric(name)
		require.NoError(t, err)
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			for _, kv := range dp.Attributes.ToSlice() {
				assert.NotContains(t, kv.Value.String(), "publickey")
			}
		}
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// Values JSON cannot hold still give envelopes the strict fake Sentry accepts,
// and every item is stored once.
func TestBadValuesEndToEnd(t *testing.T) { synctest.Test(t, testBadValuesEndToEnd) }

func testBadValuesEndToEnd(t *testing.T) {
	h := newHarness(t, nil)
	td := makeTraces(0, 2, true)
	rs := td.ResourceSpans().At(0)
	rs.Resource().Attributes().PutStr("bad.utf8", "caf\xe9\x00")
	spans := rs.ScopeSpans().At(0).Spans()
	a := spans.At(0).Attributes()
	a.PutDouble("nan", math.NaN())
	a.PutDouble("inf", math.Inf(1))
	a.PutStr("huge", strings.Repeat("x", 3<<20))
	a.PutStr("nul", "a\x00b")
	deep := a.PutEmptyMap("deep")
	for range 50 {
		deep = deep.PutEmptyMap("d")
	}
	mixed := a.PutEmptySlice("mixed")
	mixed.AppendEmpty().SetStr("one")
	mixed.AppendEmpty().SetInt(2)
	spans.At(1).SetTraceID(pcommon.TraceID{}) // all-zero ids
	spans.At(1).SetSpanID(pcommon.SpanID{})
	spans.At(2).SetEndTimestamp(0)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))

	ld := makeLogs(3)
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	lr.At(0).SetTraceID(pcommon.TraceID{})
	lr.At(0).Body().SetEmptyMap().PutDouble("nan", math.NaN())
	lr.At(1).Attributes().PutStr("bad", "\xff\xfe")
	lr.At(1).SetSeverityNumber(plog.SeverityNumber(99))
	lr.At(2).Body().SetEmptyBytes().FromRaw([]byte{0, 1, 2})
	require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
	h.shutdown()

	h.sentry.requireNoInvalid()
	assert.EqualValues(t, td.SpanCount(), h.sent("span"))
	assert.EqualValues(t, 3, h.sent("log_item"))
	assert.EqualValues(t, 2, h.sent("error"))
	assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", nil))
}

// A client report that rides on an envelope Sentry refuses with a 4xx is kept,
// and from then on goes out on its own: it never takes more data down with it.
func TestRefusedReportGoesStandalone(t *testing.T) { synctest.Test(t, testRefusedReportGoesStandalone) }

func testRefusedReportGoesStandalone(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "60:transaction:key"}}))
	h.consumeTraces(0, 1, false) // 429
	h.consumeTraces(1, 2, false) // 2 transactions dropped locally: a report is pending

	withReport := func(env *envelope.Envelope) bool {
		for _, it := range env.Items {
			if it.Type == envelope.ItemTypeClientReport {
				return true
			}
		}
		return false
	}
	h.sentry.setRespond(func(env *envelope.Envelope) answer {
		if withReport(env) && len(env.Items) > 1 {
			return answer{status: http.StatusBadRequest}
		}
		return answer{status: http.StatusOK}
	})
	h.consumeLogs(3) // carries the report: 400
	h.consumeLogs(2) // must not carry it
	h.shutdown()     // the report goes out on its own

	envs := h.sentry.envelopes()
	last := envs[len(envs)-1]
	require.True(t, withReport(last.env))
	assert.Len(t, last.env.Items, 1, "the final report is standalone")
	assert.False(t, withReport(envs[len(envs)-2].env), "the next data envelope carried no report")
	assert.EqualValues(t, 2, h.sent("log_item"))
	assert.EqualValues(t, 3, h.dropped("log_item", "send_error"))
	d := discardsOf(t, envs[len(envs)-1:])
	assert.EqualValues(t, 2, d["ratelimit_backoff/transaction"])
	assert.EqualValues(t, 6, d["ratelimit_backoff/span"])
	assert.EqualValues(t, 3, d["send_error/log_item"])
}

// `timeout` bounds each POST, its answer included (the sender puts it on the
// request's context; the client itself has none): a Sentry that never answers
// costs the envelope a network_error, counted once, not a hung worker.
func TestTimeoutBoundsEachPost(t *testing.T) { synctest.Test(t, testTimeoutBoundsEachPost) }

func testTimeoutBoundsEachPost(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, func(c *Config) {
		c.ClientConfig.Timeout = 20 * time.Millisecond
		c.RetryConfig.Enabled = false
		c.ClientReports.Enabled = false
	})
	h.sentry.setRespond(func(*envelope.Envelope) answer {
		<-release
		return answer{status: http.StatusOK}
	})
	h.consumeTraces(0, 1, false) // returns once the envelope is settled
	close(release)
	h.shutdown()
	assert.EqualValues(t, 1, h.dropped("transaction", "network_error"))
	assert.EqualValues(t, 0, h.sent("transaction"))
	assert.EqualValues(t, 1, h.sum("otelcol_exporter_sentry_requests", map[string]string{"status": "network_error"}))
}
