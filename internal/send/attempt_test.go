package send

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// TestAnswers: one POST per answer Sentry can give, what it comes to (the
// Result the lane acts on), the rate limits it leaves in the project's state,
// and what is logged. Limits count on every answer, a 200 included; a
// Retry-After counts as a limit only on a 429, and as the retry's floor on a
// 5xx.
func TestAnswers(t *testing.T) {
	for _, tt := range slices.Concat(answers2xx3xxAnd429(), answers429to5xx(), answers5xxAnd4xx()) {
		runInBubble(t, tt.name, func(t *testing.T) { checkAnswer(t, tt) })
	}
}

// answerLimit is a category limited after an answer, and for how long.
type answerLimit struct {
	category ratelimit.Category
	lasts    time.Duration
}

// answerCase is one answer of TestAnswers and what it must come to.
type answerCase struct {
	name      string
	answer    func() answer // run in the bubble (an HTTP date is relative to its clock)
	want      Result
	retryable bool
	limits    []answerLimit // the categories limited afterwards, and for how long
	free      []ratelimit.Category
	logged    string // the detail of the "Sentry rejected an envelope" line; "" none
}

// httpDate is an HTTP date d from now (the bubble's clock).
func httpDate(d time.Duration) string { return time.Now().Add(d).UTC().Format(http.TimeFormat) }

// answers2xx3xxAnd429 are the 2xx, the 3xx and a 429 with its limits.
func answers2xx3xxAnd429() []answerCase {
	return []answerCase{
		{
			name:   "200",
			answer: func() answer { return answer{status: 200} },
			want:   Result{Delivered: true, Status: 200},
			free:   []ratelimit.Category{ratelimit.CategoryTransaction, ratelimit.CategoryError},
		},
		{
			name:   "202",
			answer: func() answer { return answer{status: 202} },
			want:   Result{Delivered: true, Status: 202},
		},
		{
			name: "200 announcing a limit",
			answer: func() answer {
				return answer{status: 200, headers: map[string]string{"X-Sentry-Rate-Limits": "120:log_item:organization"}}
			},
			want:   Result{Delivered: true, Status: 200, NewLimits: true},
			limits: []answerLimit{{ratelimit.CategoryLogItem, 120 * time.Second}},
			free:   []ratelimit.Category{ratelimit.CategoryTransaction},
		},
		{
			name:   "200 with a Retry-After: no limit (only a 429's Retry-After is one)",
			answer: func() answer { return answer{status: 200, headers: map[string]string{"Retry-After": "30"}} },
			want:   Result{Delivered: true, Status: 200},
			free:   []ratelimit.Category{ratelimit.CategoryTransaction, ratelimit.CategoryError},
		},
		{
			name:   "300: not a 2xx",
			answer: func() answer { return answer{status: 300, body: "multiple choices"} },
			want:   Result{Reason: account.ReasonSendError, Status: 300},
			logged: "multiple choices",
		},
		{
			name: "302: never followed",
			answer: func() answer {
				return answer{status: 302, headers: map[string]string{"Location": "http://sentry.test/api/1/elsewhere/"}, body: "moved"}
			},
			want:   Result{Reason: account.ReasonSendError, Status: 302},
			logged: "moved",
		},
		{
			name: "429 with X-Sentry-Rate-Limits",
			answer: func() answer {
				return answer{status: 429, headers: map[string]string{"X-Sentry-Rate-Limits": "60:transaction:key"}}
			},
			want:   Result{Reason: account.ReasonRateLimited, Status: 429, NewLimits: true},
			limits: []answerLimit{{ratelimit.CategoryTransaction, time.Minute}},
			free:   []ratelimit.Category{ratelimit.CategoryError},
		},
	}
}

// answers429to5xx are the other 429s, a 413 and the 5xx with Retry-After.
func answers429to5xx() []answerCase {
	return []answerCase{
		{
			name:   "429 with Retry-After: every category",
			answer: func() answer { return answer{status: 429, headers: map[string]string{"Retry-After": "30"}} },
			want:   Result{Reason: account.ReasonRateLimited, Status: 429, NewLimits: true},
			limits: []answerLimit{{ratelimit.CategoryAll, 30 * time.Second}, {ratelimit.CategoryError, 30 * time.Second}},
		},
		{
			name:   "429 with neither: every category for the default",
			answer: func() answer { return answer{status: 429} },
			want:   Result{Reason: account.ReasonRateLimited, Status: 429, NewLimits: true},
			limits: []answerLimit{{ratelimit.CategoryAll, ratelimit.DefaultRetryAfter}},
		},
		{
			name: "429 naming only a category unknown here: the refused transaction's, for the header's time",
			answer: func() answer {
				return answer{status: 429, headers: map[string]string{"X-Sentry-Rate-Limits": "45:new_category:organization", "Retry-After": "90"}}
			},
			want:   Result{Reason: account.ReasonRateLimited, Status: 429, NewLimits: true},
			limits: []answerLimit{{ratelimit.CategoryTransaction, 45 * time.Second}},
			free:   []ratelimit.Category{ratelimit.CategoryAll, ratelimit.CategoryError, ratelimit.CategorySpan, ratelimit.CategoryTraceMetric},
		},
		{
			name: "413",
			answer: func() answer {
				return answer{status: 413, headers: map[string]string{"X-Sentry-Error": "envelope exceeded size limits"}}
			},
			want:   Result{Reason: account.ReasonSendError, Status: 413, TooLarge: true},
			logged: "envelope exceeded size limits",
		},
		{
			name:      "500 with Retry-After seconds",
			answer:    func() answer { return answer{status: 500, headers: map[string]string{"Retry-After": "7"}} },
			want:      Result{Reason: account.ReasonSendError, Status: 500, RetryAfter: 7 * time.Second},
			retryable: true,
			logged:    "{}",
			free:      []ratelimit.Category{ratelimit.CategoryAll},
		},
		{
			name:      "502 without Retry-After",
			answer:    func() answer { return answer{status: 502, body: "bad gateway"} },
			want:      Result{Reason: account.ReasonSendError, Status: 502},
			retryable: true,
			logged:    "bad gateway",
		},
		{
			name: "503 with a Retry-After HTTP date",
			answer: func() answer {
				return answer{status: 503, headers: map[string]string{"Retry-After": httpDate(90 * time.Second)}}
			},
			want:      Result{Reason: account.ReasonSendError, Status: 503, RetryAfter: 90 * time.Second},
			retryable: true,
			logged:    "{}",
			free:      []ratelimit.Category{ratelimit.CategoryAll},
		},
	}
}

// answers5xxAnd4xx are a 5xx with limits and the 4xx that are logged.
func answers5xxAnd4xx() []answerCase {
	return []answerCase{
		{
			name: "503 announcing a limit",
			answer: func() answer {
				return answer{status: 503, headers: map[string]string{"X-Sentry-Rate-Limits": "10:error:key"}}
			},
			want:      Result{Reason: account.ReasonSendError, Status: 503, NewLimits: true},
			retryable: true,
			limits:    []answerLimit{{ratelimit.CategoryError, 10 * time.Second}},
			logged:    "{}",
		},
		{
			name: "400: X-Sentry-Error is the detail",
			answer: func() answer {
				return answer{status: 400, headers: map[string]string{"X-Sentry-Error": "invalid envelope"}, body: "ignored"}
			},
			want:   Result{Reason: account.ReasonSendError, Status: 400},
			logged: "invalid envelope",
		},
		{
			name:   "401: the body is the detail, trimmed",
			answer: func() answer { return answer{status: 401, body: "  \n{\"detail\":\"bad key\"}\n "} },
			want:   Result{Reason: account.ReasonSendError, Status: 401},
			logged: `{"detail":"bad key"}`,
		},
		{
			name:   "403: a long body is cut",
			answer: func() answer { return answer{status: 403, body: strings.Repeat("x", 1000)} },
			want:   Result{Reason: account.ReasonSendError, Status: 403},
			logged: strings.Repeat("x", maxErrorSnippet),
		},
	}
}

// checkAnswer makes one attempt answered as tt says and checks its result,
// the limits it leaves and what it logs.
func checkAnswer(t *testing.T, tt answerCase) {
	f := newFixture(t, 1, nil, false)
	a := tt.answer()
	f.sentry.respond = func(string, int, *envelope.Envelope) answer { return a }
	o := tx(1)
	res := f.lanes[0].http.attempt(t.Context(), o.Gate, &o.Env)
	assert.Equal(t, tt.want, res)
	assert.Equal(t, tt.retryable, res.retryable(), "retryable")
	assert.Len(t, f.sentry.got(), 1, "one request")
	limits, now := f.limits[0].Load(), time.Now()
	for _, l := range tt.limits {
		assert.Equal(t, now.Add(l.lasts), limits.Deadline(l.category), "%q limited", l.category)
	}
	for _, c := range tt.free {
		assert.False(t, limits.Active(c, now), "%q not limited", c)
	}
	rejected := f.logs.FilterMessage("Sentry rejected an envelope").All()
	if tt.logged == "" {
		assert.Empty(t, rejected)
	} else if assert.Len(t, rejected, 1) {
		assert.Equal(t, tt.logged, rejected[0].ContextMap()["detail"])
		assert.Equal(t, int64(tt.want.Status), rejected[0].ContextMap()["status"])
	}
	f.shutdown()
}

// TestNetworkError: no answer is a network error, retryable, counted as a
// request without a status, and logged without the URL.
func TestNetworkError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) { c.Client.Timeout = 2 * time.Second }, false)
		f.sentry.respond = func(string, int, *envelope.Envelope) answer { return answer{hang: true} }
		o := tx(1)
		start := time.Now()
		res := f.lanes[0].http.attempt(t.Context(), o.Gate, &o.Env)
		assert.Equal(t, 2*time.Second, time.Since(start), "bounded by timeout")
		assert.Equal(t, Result{Reason: account.ReasonNetworkError}, res)
		assert.True(t, res.retryable())
		assert.Equal(t, map[string]int64{"project=1,status=network_error": 1}, f.sums("requests"))
		logged := f.logs.FilterMessage("Sending to Sentry failed").All()
		require.Len(t, logged, 1)
		assert.Equal(t, context.DeadlineExceeded.Error(), logged[0].ContextMap()["error"], "the cause, without the URL")
		f.shutdown()
	})
}

// TestRedactedError: an HTTP client error is printed without its URL (which
// an endpoint or a proxy URL may give userinfo); an error that wraps nothing
// prints as it is.
func TestRedactedError(t *testing.T) {
	withURL := &url.Error{Op: "Post", URL: "http://user:secret@proxy.test/api/1/envelope/", Err: errors.New("connection refused")}
	assert.Equal(t, "connection refused", redactedError(withURL))
	assert.Equal(t, "plain", redactedError(errors.New("plain")))
	empty := &url.Error{Op: "Post", URL: "http://proxy.test/", Err: nil}
	assert.Equal(t, empty.Error(), redactedError(empty), "nothing wrapped: printed as it is")
}

// TestRetryableStatuses: only no answer and a 5xx are retried.
func TestRetryableStatuses(t *testing.T) {
	for _, tt := range []struct {
		res  Result
		want bool
	}{
		{Result{Reason: account.ReasonNetworkError}, true},
		{Result{Reason: account.ReasonSendError, Status: 500}, true},
		{Result{Reason: account.ReasonSendError, Status: 599}, true},
		{Result{Reason: account.ReasonSendError, Status: 499}, false},
		{Result{Reason: account.ReasonSendError, Status: 413, TooLarge: true}, false},
		{Result{Reason: account.ReasonRateLimited, Status: 429}, false},
		{Result{Delivered: true, Status: 200}, false},
	} {
		assert.Equal(t, tt.want, tt.res.retryable(), "%+v", tt.res)
	}
}

// countingBody is an answer body of n bytes that counts what was read of it.
type countingBody struct {
	r      io.Reader
	read   int
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error { b.closed = true; return nil }

// TestAnswerReadBounded: at most maxResponseRead bytes of an answer are read
// (sentry-go drains 16 KiB), the body is closed, and its start, trimmed, is
// the snippet logged.
func TestAnswerReadBounded(t *testing.T) {
	for _, tt := range []struct {
		name     string
		body     string
		wantRead int
		snippet  string
	}{
		{"short", "  {\"detail\":\"x\"}\n", 17, `{"detail":"x"}`},
		{"long", strings.Repeat("y", 1<<20), maxResponseRead, strings.Repeat("y", maxErrorSnippet)},
		{"exactly the bound", strings.Repeat("z", maxResponseRead), maxResponseRead, strings.Repeat("z", maxErrorSnippet)},
		{"empty", "", 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingBody{r: strings.NewReader(tt.body)}
			c := newAnswerReader()
			got := c.drain(body)
			assert.Equal(t, tt.wantRead, body.read, "bytes read")
			assert.True(t, body.closed)
			assert.Equal(t, tt.snippet, string(got))
		})
	}
}

// endlessBody is an answer body that never ends: Read waits until Close.
type endlessBody struct {
	closed chan struct{}
	once   bool
}

func newEndlessBody() *endlessBody { return &endlessBody{closed: make(chan struct{})} }

func (b *endlessBody) Read(p []byte) (int, error) {
	if !b.once { // a first byte, then nothing
		b.once = true
		p[0] = '{'
		return 1, nil
	}
	<-b.closed
	return 0, errors.New("read on closed body")
}

func (b *endlessBody) Close() error {
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	return nil
}

// TestAnswerReadTimeout: an answer whose body never ends is cut once its
// status is in for maxAnswerRead, not held for the whole client timeout; the
// status still counts.
func TestAnswerReadTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, nil, false)
		f.sentry.respond = func(string, int, *envelope.Envelope) answer {
			return answer{status: 200, stream: newEndlessBody()}
		}
		o := tx(1)
		start := time.Now()
		res := f.lanes[0].http.attempt(t.Context(), o.Gate, &o.Env)
		assert.Equal(t, time.Second, time.Since(start), "maxAnswerRead")
		assert.True(t, res.Delivered)
		f.shutdown()
	})
}

// TestBufferPools: an encoded body's buffer goes back to its pool up to
// maxPooledBuffer bytes of capacity, emptied; a larger one is let go, so that
// one huge envelope does not pin its buffers for ever.
func TestBufferPools(t *testing.T) {
	var p bufferPools
	// sync.Pool may drop what is put (always under the race detector, a
	// quarter of the time): a buffer kept comes back within a few tries.
	comesBack := func(capacity int) bool {
		buf := make([]byte, 10, capacity)
		for range 50 {
			p.put(&p.raw, &buf)
			got := p.get(&p.raw, 64)
			if got == &buf {
				assert.Empty(t, *got, "emptied")
				return true
			}
		}
		return false
	}
	assert.True(t, comesBack(64<<10), "a modest buffer is kept")
	assert.True(t, comesBack(maxPooledBuffer), "a buffer of exactly maxPooledBuffer is kept")
	assert.False(t, comesBack(maxPooledBuffer+1), "a larger one is let go")
	fresh := p.get(&p.wire, 123)
	assert.Equal(t, 123, cap(*fresh), "an empty pool gives a new buffer of the size asked")
}
