package send

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/logthrottle"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Result is what one attempt to send an envelope came to.
type Result struct {
	Delivered bool
	Reason    account.Reason // when not delivered
	Status    int            // Sentry's HTTP status; 0 when there was no answer
	TooLarge  bool           // 413: a container may be split once
	// RetryAfter is the Retry-After Sentry sent with a 5xx, as a duration.
	RetryAfter time.Duration
	// NewLimits: the answer carried rate limits, now merged into the
	// project's state.
	NewLimits bool
}

// retryable: no answer at all, or a 5xx. Never a 429 or another 4xx.
func (r Result) retryable() bool {
	return !r.Delivered && (r.Reason == account.ReasonNetworkError || r.Reason == account.ReasonSendError && r.Status >= 500)
}

// httpSender is the only code that speaks HTTP: one POST of one envelope to its
// project's envelope URL and the reading of the answer. It merges the rate
// limits of every answer (200 included) into the project's state and
// classifies the answer; it never retries, waits or queues.
type httpSender struct {
	client        atomic.Pointer[http.Client] // built at start (confighttp needs the host's extensions)
	request       requestTemplate
	body          *BodyEncoder // compression of envelope bodies (compress.go); nil: confighttp's
	limits        *ratelimit.State
	acct          *account.Accountant
	timeout       time.Duration // `timeout`: one POST, its answer included (0: none)
	logger        *zap.Logger
	bufs          *bufferPools
	answerReaders sync.Pool // *answerReader, so that bounding a read allocates nothing
	errLog        logthrottle.Throttle
}

// bufferPools are the stage's body buffers, shared by its lanes: the encoded
// envelope (back to the pool before the request starts once compressed, or
// once the transport closed it when it goes uncompressed) and the compressor's
// output (back once copied into the request's own body).
type bufferPools struct {
	raw, wire sync.Pool // *[]byte
}

// maxPooledBuffer: larger buffers are not kept, so that one huge envelope
// does not pin its buffers for ever.
const maxPooledBuffer = 4 << 20

func (*bufferPools) get(p *sync.Pool, size int) *[]byte {
	if buf, _ := p.Get().(*[]byte); buf != nil {
		return buf
	}
	s := make([]byte, 0, size)
	return &s
}

func (*bufferPools) put(p *sync.Pool, buf *[]byte) {
	if cap(*buf) <= maxPooledBuffer {
		*buf = (*buf)[:0]
		p.Put(buf)
	}
}

// attemptEncoded makes one POST of env, an envelope behind g, with the body
// in enc (attempt, in compress.go, picks it), bounded by `timeout`, and
// classifies the answer.
func (p *httpSender) attemptEncoded(ctx context.Context, g gate.Gate, env *envelope.Envelope, enc BodyEncoding) Result {
	env.Header.SentAt = time.Now()
	body := p.encodeBody(env, enc)
	defer p.recycle(&body) // after the request was cancelled: the transport is done with it or never will be
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel() // after the answer was read
	}
	return p.exchange(ctx, g, p.request.new(ctx, body.r, int64(body.n), body.enc))
}

// requestBodyOf is one request's body and the pooled buffer behind it.
type requestBodyOf struct {
	r   io.ReadCloser
	n   int
	enc BodyEncoding
	// sent, when set, is r (an uncompressed body): its pooled buffer goes
	// back to its pool only once the transport closed it.
	sent *requestBody
}

// encodeBody writes env out in a pooled buffer and, when enc is one of the
// stage's own, compresses it into a body of the request's own.
func (p *httpSender) encodeBody(env *envelope.Envelope, enc BodyEncoding) requestBodyOf {
	raw := p.bufs.get(&p.bufs.raw, 64<<10)
	*raw = env.AppendTo((*raw)[:0])
	if enc == EncodingLeftToConfighttp { // always so without p.body (attempt)
		sent := &requestBody{raw: raw}
		sent.Reset(*raw)
		return requestBodyOf{r: sent, n: len(*raw), enc: EncodingLeftToConfighttp, sent: sent}
	}
	scratch := p.bufs.get(&p.bufs.wire, 16<<10)
	*scratch = p.body.comp.Compress(enc, *raw, (*scratch)[:0])
	p.bufs.put(&p.bufs.raw, raw)
	// The request gets a copy of its own, read through a bytes.Reader behind
	// io.NopCloser: net/http knows that body to be in memory and writes it
	// with the request's headers in one write. Any other body type costs a
	// write of its own for the headers (isKnownInMemoryReader,
	// net/http/transfer.go), and so a second syscall and a second read by
	// Sentry per envelope. No buffer then waits for the transport to close
	// the body.
	wire := slices.Clone(*scratch)
	p.bufs.put(&p.bufs.wire, scratch)
	return requestBodyOf{r: io.NopCloser(bytes.NewReader(wire)), n: len(wire), enc: enc}
}

// recycle puts b's buffer back in its pool once the transport closed the
// body: it may still be writing it after the answer came (a server can
// answer early).
func (p *httpSender) recycle(b *requestBodyOf) {
	if b.sent != nil && b.sent.closed.Load() {
		p.bufs.put(&p.bufs.raw, b.sent.raw)
	}
}

// exchange sends req, an envelope behind g, reads its answer (bounded in
// bytes and time), merges the answer's rate limits (every answer's, 200
// included; a 429's always cover g's categories) and classifies it.
func (p *httpSender) exchange(ctx context.Context, g gate.Gate, req *http.Request) Result {
	client := p.client.Load()
	if client == nil { // not started
		p.acct.Request(ctx, 0)
		return Result{Reason: account.ReasonNetworkError}
	}
	resp, err := roundTrip(client, req)
	if err != nil {
		p.acct.Request(ctx, 0)
		p.errLog.Log(p.logger, "network", "Sending to Sentry failed", zap.String("error", redactedError(err)))
		return Result{Reason: account.ReasonNetworkError}
	}
	reader, _ := p.answerReaders.Get().(*answerReader)
	if reader == nil {
		reader = newAnswerReader()
	}
	defer p.answerReaders.Put(reader) // after the snippet in its buffer was logged
	reader.arm(resp.Body, maxAnswerRead)
	snippet := reader.drain(resp.Body)
	reader.disarm()
	p.acct.Request(ctx, resp.StatusCode)

	answered := time.Now()
	res := p.classify(resp, snippet, answered)
	if l, capped := ratelimit.FromResponse(resp.StatusCode, resp.Header, answered, g.Categories()); !l.Empty() {
		p.mergeLimits(l, capped, answered)
		res.NewLimits = true
	}
	return res
}

// roundTrip sends req through c's transport, as c.Do would but without
// what an envelope POST never uses: following redirects (Do copies the
// request's headers for them on every request, and would not re-send a
// POST's body anyway) and Client.Timeout (newClient clears it; `timeout` is
// on the request's context). A client with a cookie jar (confighttp's
// `cookies`) goes through Do. Errors are wrapped as Do wraps them.
func roundTrip(c *http.Client, req *http.Request) (*http.Response, error) {
	if c.Jar != nil || c.Timeout != 0 || c.Transport == nil {
		return c.Do(req)
	}
	resp, err := c.Transport.RoundTrip(req)
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: req.URL.String(), Err: err}
	}
	return resp, nil
}

// classify says what an answer means for the envelope.
func (p *httpSender) classify(resp *http.Response, snippet []byte, answered time.Time) Result {
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return Result{Delivered: true, Status: code}
	case code == http.StatusTooManyRequests:
		return Result{Reason: account.ReasonRateLimited, Status: code}
	case code == http.StatusRequestEntityTooLarge:
		p.logRejected(code, resp.Header, snippet)
		return Result{Reason: account.ReasonSendError, Status: code, TooLarge: true}
	case code >= 500:
		p.logRejected(code, resp.Header, snippet)
		res := Result{Reason: account.ReasonSendError, Status: code}
		if retryAfter, _, _ := ratelimit.ParseRetryAfter(resp.Header.Get("Retry-After"), answered); !retryAfter.IsZero() {
			res.RetryAfter = retryAfter.Sub(answered)
		}
		return res
	default:
		p.logRejected(code, resp.Header, snippet)
		return Result{Reason: account.ReasonSendError, Status: code}
	}
}

// mergeLimits adds l to the DSN's limits and logs once per newly started window.
func (p *httpSender) mergeLimits(l ratelimit.Limits, capped bool, now time.Time) {
	before := p.limits.Load()
	p.limits.Merge(l)
	l.Each(func(c ratelimit.Category, deadline time.Time) {
		if deadline.After(now) && !before.Active(c, now) {
			p.logger.Warn("Sentry rate limit: dropping this category until the limit ends",
				zap.String("category", c.Label()), zap.Duration("retry_after", deadline.Sub(now)), zap.Bool("capped", capped))
		}
	})
}

// logRejected logs a failed answer with Sentry's X-Sentry-Error or a short body
// snippet, at most once per errorLogInterval per status.
func (p *httpSender) logRejected(status int, h http.Header, snippet []byte) {
	detail := h.Get("X-Sentry-Error")
	if detail == "" {
		detail = string(snippet)
	}
	p.errLog.Log(p.logger, http.StatusText(status), "Sentry rejected an envelope",
		zap.Int("status", status), zap.String("detail", detail))
}

// redactedError prints an HTTP client error without a URL's userinfo; the
// envelope URL carries none (the key travels in X-Sentry-Auth), but an
// `endpoint` or proxy_url might.
func redactedError(err error) string {
	var ue interface {
		Unwrap() error
	}
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}
