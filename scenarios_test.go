package sentryexporter

// The seed scenarios: a published lab put a stub ingest in front of an
// official SDK and measured what it dropped after a 429. Each test below
// replays one of its cases against this exporter, built through the factory
// and exporterhelper, over HTTP in memory, with the exporter in a synctest bubble (virtual time).

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// quota answers 429 for envelopes carrying itemType once cap of them were
// accepted, until refill has passed since the cap was hit.
type quota struct {
	mu       sync.Mutex
	itemType string
	cap      int
	used     int
	cappedAt time.Time
	refill   time.Duration // 0: never
	headers  map[string]string
}

func (q *quota) respond(env *envelope.Envelope) answer {
	q.mu.Lock()
	defer q.mu.Unlock()
	mine := false
	for _, it := range env.Items {
		mine = mine || it.Type == q.itemType
	}
	if !mine {
		return answer{status: http.StatusOK}
	}
	now := time.Now()
	if q.refill > 0 && !q.cappedAt.IsZero() && now.Sub(q.cappedAt) >= q.refill {
		q.used, q.cappedAt = 0, time.Time{}
	}
	if q.used >= q.cap {
		if q.cappedAt.IsZero() {
			q.cappedAt = now
		}
		return answer{status: http.StatusTooManyRequests, headers: q.headers}
	}
	q.used++
	return answer{status: http.StatusOK}
}

// noDedupe sends error events in the push that made them (no dedupe window),
// for tests that time error envelopes per push.
func noDedupe(c *Config) { c.ErrorEvents.DedupeWindow = 0 }

func (h *harness) consumeTraces(first, n int, exceptions bool) {
	require.NoError(h.t, h.traces.ConsumeTraces(context.Background(), makeTraces(first, n, exceptions)))
}

func (h *harness) consumeLogs(n int) {
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), makeLogs(n)))
}

// Scenario 1: no cap, everything is stored, nothing is dropped.
func TestScenarioBaseline(t *testing.T) { synctest.Test(t, testScenarioBaseline) }

func testScenarioBaseline(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 5 {
		h.consumeTraces(i, 1, true)
		h.consumeLogs(10)
		time.Sleep(500 * time.Millisecond)
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Equal(t, 5, h.sentry.countType(envelope.ItemTypeTransaction))
	assert.Equal(t, 5, h.sentry.countType(envelope.ItemTypeEvent))
	assert.Equal(t, 5, h.sentry.countType(envelope.ItemTypeLog))
	assert.EqualValues(t, 15, h.sent("span"))
	assert.EqualValues(t, 5, h.sent("transaction"))
	assert.EqualValues(t, 5, h.sent("error"))
	assert.EqualValues(t, 50, h.sent("log_item"))
	assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", nil))
	assert.Empty(t, h.sentry.discards(), "nothing dropped: no client report")
}

// Scenario 2: errors capped with 60:error:organization:usage_exceeded after 2.
// The SDK sent 3 of 10 errors and reported 7 lost when 8 were; we count all 8.
func TestScenarioErrorCap(t *testing.T) { synctest.Test(t, testScenarioErrorCap) }

func testScenarioErrorCap(t *testing.T) {
	h := newHarness(t, noDedupe) // error envelopes timed per push
	q := &quota{itemType: envelope.ItemTypeEvent, cap: 2, headers: map[string]string{
		"X-Sentry-Rate-Limits": "60:error:organization:usage_exceeded", "Retry-After": "60",
	}}
	h.sentry.setRespond(q.respond)
	capStart := time.Time{}
	for i := range 10 {
		h.consumeTraces(i, 1, true)
		h.consumeLogs(2)
		if i == 2 {
			capStart = time.Now()
		}
		time.Sleep(500 * time.Millisecond)
	}
	assert.Equal(t, 3, h.sentry.countType(envelope.ItemTypeEvent), "2 accepted + the one answered 429; none after it")
	assert.Equal(t, 10, h.sentry.countType(envelope.ItemTypeTransaction), "spans keep flowing")
	assert.Equal(t, 10, h.sentry.countType(envelope.ItemTypeLog), "logs keep flowing")
	for _, r := range h.sentry.envelopes() {
		if r.at.After(capStart) && r.at.Before(capStart.Add(60*time.Second)) {
			assert.NotContains(t, r.dataTypes(), envelope.ItemTypeEvent, "no error envelope inside the 60 s window")
		}
	}
	assert.EqualValues(t, 2, h.sent("error"))
	assert.EqualValues(t, 1, h.dropped("error", "rate_limited"), "the event that got the 429 is counted")
	assert.EqualValues(t, 7, h.dropped("error", "ratelimit_backoff"))
	assert.EqualValues(t, 10-2, h.droppedAll("error"), "every error not stored is counted: 8, not the SDK's 7")
	assert.Zero(t, h.droppedAll("span"))

	// After the window, the next real error is the probe; the quota is still
	// exhausted, so the window starts over.
	time.Sleep(60 * time.Second)
	h.consumeTraces(100, 1, true)
	assert.Equal(t, 4, h.sentry.countType(envelope.ItemTypeEvent))
	assert.EqualValues(t, 2, h.dropped("error", "rate_limited"))

	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Equal(t, map[string]uint64{"ratelimit_backoff/error": 7}, h.sentry.discards(),
		"client reports carry the local drops exactly; the 429-rejected events are Relay's to report")
}

// Scenario 3: a span-only limit does not touch errors or logs.
func TestScenarioSpanOnlyLimit(t *testing.T) { synctest.Test(t, testScenarioSpanOnlyLimit) }

func testScenarioSpanOnlyLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TracesAs = TracesAsSpans })
	q := &quota{itemType: envelope.ItemTypeSpan, cap: 1, headers: map[string]string{
		"X-Sentry-Rate-Limits": "60:span:organization:usage_exceeded", "Retry-After": "60",
	}}
	h.sentry.setRespond(q.respond)
	for i := range 6 {
		h.consumeTraces(i, 1, true)
		h.consumeLogs(1)
		time.Sleep(500 * time.Millisecond)
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Equal(t, 2, h.sentry.countType(envelope.ItemTypeSpan), "1 accepted, 1 answered 429, then none")
	assert.Equal(t, 6, h.sentry.countType(envelope.ItemTypeEvent), "errors unaffected")
	assert.Equal(t, 6, h.sentry.countType(envelope.ItemTypeLog), "logs unaffected")
	assert.EqualValues(t, 3, h.sent("span"))
	assert.EqualValues(t, 3, h.dropped("span", "rate_limited"))
	assert.EqualValues(t, 12, h.dropped("span", "ratelimit_backoff"))
	assert.Zero(t, h.droppedAll("error"))
	assert.Zero(t, h.droppedAll("log_item"))
	assert.Zero(t, h.droppedAll("transaction"), "in spans mode there are no transactions to drop")
	assert.Equal(t, map[string]uint64{"ratelimit_backoff/span": 12}, h.sentry.discards())
}

// Scenario 4: with a 5 s window and the quota still exhausted, exactly one
// probe per window reaches Sentry.
func TestScenarioOneProbePerWindow(t *testing.T) { synctest.Test(t, testScenarioOneProbePerWindow) }

func testScenarioOneProbePerWindow(t *testing.T) {
	h := newHarness(t, noDedupe) // error envelopes timed per push
	q := &quota{itemType: envelope.ItemTypeEvent, cap: 2, headers: map[string]string{
		"X-Sentry-Rate-Limits": "5:error:organization:usage_exceeded", "Retry-After": "5",
	}}
	h.sentry.setRespond(q.respond)
	for i := range 22 { // one error a second, as in the lab
		h.consumeTraces(i, 1, true)
		time.Sleep(time.Second)
	}
	h.shutdown()
	times := errorEnvelopeTimes(h.sentry)
	// Errors at t=0,1 accepted; t=2 answered 429; then one probe at t=7, 12, 17.
	assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second, 7 * time.Second, 12 * time.Second, 17 * time.Second}, times)
	assert.EqualValues(t, 4, h.dropped("error", "rate_limited"))
	assert.EqualValues(t, 22-6, h.dropped("error", "ratelimit_backoff"))
}

// bubbleStart is where a synctest bubble's virtual time starts.
var bubbleStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// errorEnvelopeTimes is when each envelope holding only an error event
// arrived, from the start of the test's bubble.
func errorEnvelopeTimes(f *fakeSentry) []time.Duration {
	var times []time.Duration
	for _, r := range f.envelopes() {
		if len(r.dataTypes()) == 1 && r.dataTypes()[0] == envelope.ItemTypeEvent {
			times = append(times, r.at.Sub(bubbleStart))
		}
	}
	return times
}

// Scenario 5: the quota refills 6 s after the cap. The probe at the end of
// the first 5 s window still meets the exhausted quota (429, new window); the
// next probe succeeds and the flow resumes, as in the lab's refill run.
func TestScenarioRefill(t *testing.T) { synctest.Test(t, testScenarioRefill) }

func testScenarioRefill(t *testing.T) {
	h := newHarness(t, noDedupe) // error envelopes timed per push
	q := &quota{itemType: envelope.ItemTypeEvent, cap: 2, refill: 6 * time.Second, headers: map[string]string{
		"X-Sentry-Rate-Limits": "5:error:organization:usage_exceeded", "Retry-After": "5",
	}}
	h.sentry.setRespond(q.respond)
	for i := range 16 {
		h.consumeTraces(i, 1, true)
		time.Sleep(time.Second)
	}
	h.shutdown()
	times := errorEnvelopeTimes(h.sentry)
	// t=0,1 stored; t=2 429 (quota refills at t=8); t=7 probe 429; t=12 probe
	// stored, t=13 stored (the refilled cap of 2), t=14 429 again.
	assert.Equal(t, []time.Duration{0, 1 * time.Second, 2 * time.Second, 7 * time.Second, 12 * time.Second, 13 * time.Second, 14 * time.Second}, times)
	assert.EqualValues(t, 4, h.sent("error"), "the first probe after the refill is stored and the flow resumes")
	assert.EqualValues(t, 3, h.dropped("error", "rate_limited"))
	assert.EqualValues(t, 16-7, h.dropped("error", "ratelimit_backoff"))
}

// Scenario 6: Retry-After alone on a 429 blocks every category for its seconds.
func TestScenarioRetryAfterOnly(t *testing.T) { synctest.Test(t, testScenarioRetryAfterOnly) }

func testScenarioRetryAfterOnly(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests, headers: map[string]string{"Retry-After": "5"}}))
	h.consumeTraces(0, 1, false) // answered 429: all categories for 5 s
	time.Sleep(4 * time.Second)
	h.consumeTraces(1, 1, true)
	h.consumeLogs(3)
	assert.Len(t, h.sentry.envelopes(), 1, "nothing is sent inside the 5 s")
	time.Sleep(time.Second)
	h.consumeTraces(2, 1, true)
	h.consumeLogs(3)
	h.shutdown()
	assert.Equal(t, 1+3, len(h.sentry.envelopes())-countReportOnly(h), "the 429, then transaction, error and logs after 5 s")
	assert.EqualValues(t, 3, h.dropped("span", "rate_limited"))
	assert.EqualValues(t, 3, h.dropped("span", "ratelimit_backoff"))
	assert.EqualValues(t, 1, h.dropped("error", "ratelimit_backoff"))
	assert.EqualValues(t, 3, h.dropped("log_item", "ratelimit_backoff"))
}

// countReportOnly counts envelopes that carry nothing but client reports.
func countReportOnly(h *harness) int {
	n := 0
	for _, r := range h.sentry.envelopes() {
		if len(r.dataTypes()) == 0 {
			n++
		}
	}
	return n
}

// Scenario 7: a bare 429 blocks every category, client reports included, for
// 60 s; the client report is kept and sent once the limit ends.
func TestScenarioBare429(t *testing.T) { synctest.Test(t, testScenarioBare429) }

func testScenarioBare429(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests}))
	h.consumeTraces(0, 1, false)
	for i := 1; i <= 11; i++ {
		time.Sleep(5 * time.Second) // up to 55 s
		h.consumeTraces(i, 1, true)
	}
	assert.Len(t, h.sentry.envelopes(), 1, "for 60 s nothing at all, not even a client report")
	time.Sleep(5 * time.Second) // 60 s
	h.consumeLogs(1)
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Equal(t, map[string]uint64{
		"ratelimit_backoff/transaction": 11, "ratelimit_backoff/span": 33, "ratelimit_backoff/error": 11,
	}, h.sentry.discards(), "the report survives the all-category limit, unlike the SDK's")
	assert.EqualValues(t, 3, h.dropped("span", "rate_limited"))
}

// Scenario 7: a Retry-After of 60 s starts a window of 60 s from the
// answer, on the clock the gauge reads, and inside it nothing is sent. The
// window's end is tested in TestScenarioRetryAfterOnly.
func TestScenarioRealTimeRetryAfter(t *testing.T) { synctest.Test(t, testScenarioRealTimeRetryAfter) }

func testScenarioRealTimeRetryAfter(t *testing.T) {
	rh := newHarness(t, nil)
	sentry := rh.sentry
	sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests, headers: map[string]string{"Retry-After": "60"}}))
	before := time.Now()
	rh.consumeTraces(0, 1, false)
	after := time.Now()
	rh.consumeTraces(1, 1, false)
	require.Len(t, sentry.envelopes(), 1, "inside the window nothing is sent")
	reading := time.Now()
	remaining := rh.limitRemaining("all")
	read := time.Now()
	assert.LessOrEqual(t, remaining, 60-reading.Sub(after).Seconds()+0.001, "the window started when Sentry answered")
	assert.GreaterOrEqual(t, remaining, 60-read.Sub(before).Seconds()-0.001)
	rh.shutdown()
}

// Scenario 8: client reports equal the local drops exactly and arrive within
// the interval (here on the next envelope) or at shutdown.
func TestScenarioClientReportsExact(t *testing.T) { synctest.Test(t, testScenarioClientReportsExact) }

func testScenarioClientReportsExact(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "10:transaction:key"}}))
	h.consumeTraces(0, 1, false) // 429 on the transaction
	h.consumeTraces(1, 4, false) // 4 transactions dropped locally
	h.consumeLogs(5)             // carries the pending report
	reports := h.sentry.discards()
	assert.Equal(t, map[string]uint64{"ratelimit_backoff/transaction": 4, "ratelimit_backoff/span": 12}, reports,
		"the report rode along on the next envelope")
	h.consumeTraces(5, 2, false) // 2 more dropped: go out at shutdown
	h.shutdown()
	assert.Equal(t, map[string]uint64{"ratelimit_backoff/transaction": 6, "ratelimit_backoff/span": 18}, h.sentry.discards())
	assert.EqualValues(t, 6, h.dropped("transaction", "ratelimit_backoff"))
	assert.EqualValues(t, 18, h.dropped("span", "ratelimit_backoff"))
}

// Scenario 9: a limit announced on a 200 answer is honored, and so is a
// log_byte-only limit (sentry-go ignores both span and log_byte).
func TestScenarioLimitOn200AndLogByte(t *testing.T) {
	synctest.Test(t, testScenarioLimitOn200AndLogByte)
}

func testScenarioLimitOn200AndLogByte(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusOK, headers: map[string]string{"X-Sentry-Rate-Limits": "30:log_byte:organization"}}))
	h.consumeLogs(5) // stored, and announces the limit
	h.consumeLogs(7) // dropped locally
	h.consumeTraces(0, 1, true)
	h.shutdown()
	assert.EqualValues(t, 5, h.sent("log_item"))
	assert.EqualValues(t, 7, h.dropped("log_item", "ratelimit_backoff"))
	assert.Positive(t, h.dropped("log_byte", "ratelimit_backoff"))
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeTransaction), "other categories flow")
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeLog))
}

// When a window ends while many envelopes are in flight at once, exactly one
// of them is the probe; if Sentry still answers 429, the others never leave.
func TestOneProbeUnderConcurrency(t *testing.T) { synctest.Test(t, testOneProbeUnderConcurrency) }

func testOneProbeUnderConcurrency(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false; noDedupe(c) })
	limited := answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "5:error:organization"}}
	h.sentry.setRespond(func(env *envelope.Envelope) answer {
		if env.Items[0].Type == envelope.ItemTypeEvent {
			return limited
		}
		return answer{status: http.StatusOK}
	})
	h.consumeTraces(0, 1, true) // one 429 on the error: a 5 s window
	require.Equal(t, 1, h.sentry.countType(envelope.ItemTypeEvent))

	time.Sleep(6 * time.Second)
	h.consumeTraces(1, 20, true) // 20 error envelopes at once after the window
	assert.Equal(t, 2, h.sentry.countType(envelope.ItemTypeEvent), "one probe, not 20")
	assert.EqualValues(t, 2, h.dropped("error", "rate_limited"))
	assert.EqualValues(t, 19, h.dropped("error", "ratelimit_backoff"))
	assert.Equal(t, 21, h.sentry.countType(envelope.ItemTypeTransaction), "transactions were never limited")

	h.sentry.setRespond(nil) // the quota refilled
	time.Sleep(6 * time.Second)
	h.consumeTraces(30, 20, true) // the probe succeeds; those racing it may be dropped
	h.consumeTraces(60, 20, true) // then everything flows
	h.shutdown()
	assert.GreaterOrEqual(t, h.sent("error"), int64(21))
	assert.EqualValues(t, 61, h.sent("error")+h.droppedAll("error"), "every error stored or counted")
}
