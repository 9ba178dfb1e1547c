package send

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/admit"
	"github.com/otel-sentry/sentryexporter/internal/logthrottle"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

const (
	// maxResponseRead is how much of an answer is read so the connection can be
	// reused (sentry-go drains 16 KiB); the rest is discarded with the connection.
	maxResponseRead = 16 << 10
	// maxAnswerRead bounds the time spent reading an answer's body once its
	// status is in: a body that dribbles or never ends cannot hold a worker
	// (and the envelope's outcome, already known from the status) for the
	// whole client timeout.
	maxAnswerRead = time.Second
	// maxErrorSnippet is how much of an error body goes into a log line.
	maxErrorSnippet = 256
)

// Result is what became of one envelope.
type Result struct {
	Delivered bool
	Reason    account.Reason // when not delivered
	Status    int            // Sentry's HTTP status; 0 when there was no answer or no attempt
	TooLarge  bool           // 413: the caller may split a container once
}

// Sender is the only code that knows HTTP. It POSTs envelopes, merges the rate
// limits of every answer (2xx included), retries network errors and 5xx per
// retry_on_failure, and classifies the answer. It never waits for a rate limit
// to end: an envelope whose category is limited is dropped at once.
type Sender struct {
	// Client is built at start (confighttp needs the host's extensions);
	// it is set before the first Send.
	Client *http.Client
	// Limit is the project's place in the in-flight budget: its adaptive
	// concurrency limit (max_concurrent_requests at most), within the
	// exporter's budget (internal/admit).
	Limit   *admit.Limit
	ReadFor time.Duration // maxAnswerRead; tests shorten it

	limits   *ratelimit.State
	retry    configretry.BackOffConfig
	probes   admit.Probes // one probe per gate when a window ends
	stopping <-chan struct{}
	now      func() time.Time // rate-limit windows
	wall     func() time.Time // retry budget
	pause    func(ctx context.Context, stopping <-chan struct{}, d time.Duration) bool
	logger   *zap.Logger
	acct     *account.Accountant
	timeout  time.Duration   // `timeout`: one POST, its answer included (0: none)
	request  requestTemplate // URL and headers of every request
	bufs     sync.Pool       // *bodyBuffers
	cutters  sync.Pool       // *bodyCutter, so that bounding a read allocates nothing
	errLog   logthrottle.Throttle
	body     *BodyEncoder // compression of envelope bodies (compress.go); nil: confighttp's
}

// Options are what one project's Sender is built from.
type Options struct {
	URL, Auth, UserAgent string // the envelope URL, X-Sentry-Auth and User-Agent of every request
	Limits               *ratelimit.State
	Retry                configretry.BackOffConfig
	Limit                *admit.Limit
	Stopping             <-chan struct{} // closed when shutdown begins: no more retries
	Now                  func() time.Time
	Wall                 func() time.Time
	Pause                func(ctx context.Context, stopping <-chan struct{}, d time.Duration) bool
	Logger               *zap.Logger
	Acct                 *account.Accountant
	Timeout              time.Duration
	Body                 *BodyEncoder // nil: bodies are left to confighttp
}

// New is one project's Sender; its Client is set later, at start.
func New(o Options) (*Sender, error) {
	request, err := newRequestTemplate(o.URL, o.Auth, o.UserAgent)
	if err != nil {
		return nil, err
	}
	return &Sender{
		Limit: o.Limit, ReadFor: maxAnswerRead,
		limits: o.Limits, retry: o.Retry, stopping: o.Stopping, now: o.Now, wall: o.Wall, pause: o.Pause,
		logger: o.Logger, acct: o.Acct, timeout: o.Timeout, request: request, body: o.Body,
	}, nil
}

// envelopeOverhead is what an envelope costs beyond its item payloads (the
// headers, the outgoing struct), counted against the pending bounds.
const envelopeOverhead = 512

// EnvelopeSize is env's encoded size, within envelopeOverhead.
func EnvelopeSize(env *envelope.Envelope) int64 {
	n := int64(envelopeOverhead)
	for i := range env.Items {
		n += int64(len(env.Items[i].Payload))
	}
	return n
}

// requestCost is what one request for env holds while in flight, counted
// against pending::max_bytes_in_flight: the encoded envelope, its compressed
// copy (at most as large, counted as large), and admit.RequestOverhead.
func requestCost(env *envelope.Envelope) int64 {
	return 2*EnvelopeSize(env) + admit.RequestOverhead
}

// verdictOf is what res tells the project's concurrency limit.
func verdictOf(ctx context.Context, res Result) admit.Verdict {
	switch {
	case res.Status >= 500:
		return admit.VerdictOverload
	case res.Status > 0:
		return admit.VerdictOK
	case ctx.Err() != nil: // shutdown's drain time is over: cancelled by us
		return admit.VerdictIgnore
	default:
		return admit.VerdictNone
	}
}

// Send delivers env unless g is rate limited, retrying network errors and 5xx
// until retry_on_failure gives up. It holds a place in the project's adaptive
// concurrency limit and the exporter's in-flight budget only while a request
// is in flight, and checks the limits again after every wait: an envelope
// never waits for a rate limit to end.
func (s *Sender) Send(ctx context.Context, env *envelope.Envelope, g account.Gate) Result {
	var wait backoff
	wait.reset(s.retry)
	start := s.wall() // the retry budget runs on the wall clock, as its sleeps do
	cost := requestCost(env)
	for {
		if g.Limited(s.limits.Load(), s.now()) {
			return Result{Reason: account.ReasonRateLimitBackoff}
		}
		if ctx.Err() != nil { // shutdown's drain time is over: no new request
			return Result{Reason: account.ReasonNetworkError}
		}
		if !s.Limit.Acquire(ctx, cost) {
			return Result{Reason: account.ReasonNetworkError}
		}
		// Checked again after waiting for the slot: a limit may have arrived.
		adm, ended := s.probes.Admit(g, s.limits.Load(), s.now())
		if adm == admit.Limited {
			s.Limit.Release(cost, admit.VerdictIgnore)
			return Result{Reason: account.ReasonRateLimitBackoff}
		}
		res, retryAfter := s.attempt(ctx, env)
		s.Limit.Release(cost, verdictOf(ctx, res))
		if adm == admit.Probe {
			s.probes.Settle(g, ended, res.Status)
		}
		if !retryable(res) {
			return res
		}
		delay, ok := wait.next(s.retry)
		delay = max(delay, retryAfter)
		elapsed := s.wall().Sub(start)
		if !ok || s.isStopping() || (s.retry.MaxElapsedTime > 0 && elapsed+delay > s.retry.MaxElapsedTime) {
			return res
		}
		if !s.pause(ctx, s.stopping, delay) {
			return res
		}
	}
}

// retryable: no answer at all, or a 5xx. Never a 429 or another 4xx.
func retryable(r Result) bool {
	return !r.Delivered && (r.Reason == account.ReasonNetworkError || r.Reason == account.ReasonSendError && r.Status >= 500)
}

// attemptEncoded makes one POST with the body in enc (attempt, in compress.go,
// picks it). It returns the classified result and, for a 5xx, the Retry-After
// Sentry asked for.
func (s *Sender) attemptEncoded(ctx context.Context, env *envelope.Envelope, enc BodyEncoding) (Result, time.Duration) {
	now := s.now()
	env.Header.SentAt = now
	bufs, _ := s.bufs.Get().(*bodyBuffers)
	if bufs == nil {
		bufs = &bodyBuffers{raw: make([]byte, 0, 64<<10), wire: make([]byte, 0, 16<<10)}
	}
	bufs.raw = env.AppendTo(bufs.raw[:0])
	wire, used := s.encodeBody(enc, bufs.raw, bufs.wire[:0])
	if used != EncodingByClient {
		bufs.wire = wire
	}
	rc := &requestBody{}
	rc.Reset(wire)
	defer func() {
		// The transport may still be writing the body after the answer came
		// (a server can answer early); reuse the buffers only once it closed it.
		if rc.closed.Load() && cap(bufs.raw) <= 4<<20 && cap(bufs.wire) <= 4<<20 { // do not pin huge buffers
			s.bufs.Put(bufs)
		}
	}()

	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel() // after the answer was read
	}
	req := s.request.new(ctx, rc, int64(len(wire)), used)
	cut, _ := s.cutters.Get().(*bodyCutter)
	if cut == nil {
		cut = newBodyCutter()
	}
	defer s.cutters.Put(cut) // after the snippet in cut's buffer was logged
	resp, err := s.Client.Do(req)
	if err != nil {
		s.acct.Request(ctx, 0)
		s.errLog.Log(s.logger, "network", "Sending to Sentry failed", zap.String("error", redactedError(err)))
		return Result{Reason: account.ReasonNetworkError}, 0
	}
	cut.arm(resp.Body, s.ReadFor)
	snippet := cut.drain(resp.Body)
	cut.disarm()
	s.acct.Request(ctx, resp.StatusCode)

	// Limits count on every answer, 200 included.
	answered := s.now()
	if l, capped := ratelimit.FromResponse(resp.StatusCode, resp.Header, answered); !l.Empty() {
		s.mergeLimits(l, capped, answered)
	}

	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return Result{Delivered: true, Status: code}, 0
	case code == http.StatusTooManyRequests:
		return Result{Reason: account.ReasonRateLimited, Status: code}, 0
	case code == http.StatusRequestEntityTooLarge:
		s.logRejected(code, resp.Header, snippet)
		return Result{Reason: account.ReasonSendError, Status: code, TooLarge: true}, 0
	case code >= 500:
		s.logRejected(code, resp.Header, snippet)
		retryAfter, _, _ := ratelimit.ParseRetryAfter(resp.Header.Get("Retry-After"), answered)
		var d time.Duration
		if !retryAfter.IsZero() {
			d = retryAfter.Sub(answered)
		}
		return Result{Reason: account.ReasonSendError, Status: code}, d
	default:
		s.logRejected(code, resp.Header, snippet)
		return Result{Reason: account.ReasonSendError, Status: code}, 0
	}
}

// mergeLimits adds l to the DSN's limits and logs once per newly started window.
func (s *Sender) mergeLimits(l ratelimit.Limits, capped bool, now time.Time) {
	before := s.limits.Load()
	s.limits.Merge(l)
	l.Each(func(c ratelimit.Category, deadline time.Time) {
		if deadline.After(now) && !before.Active(c, now) {
			name := string(c)
			if c == ratelimit.CategoryAll {
				name = "all"
			}
			s.logger.Warn("Sentry rate limit: dropping this category until the limit ends",
				zap.String("category", name), zap.Duration("retry_after", deadline.Sub(now)), zap.Bool("capped", capped))
		}
	})
}

// logRejected logs a failed answer with Sentry's X-Sentry-Error or a short body
// snippet, at most once per errorLogInterval per status.
func (s *Sender) logRejected(status int, h http.Header, snippet []byte) {
	detail := h.Get("X-Sentry-Error")
	if detail == "" {
		detail = string(snippet)
	}
	s.errLog.Log(s.logger, http.StatusText(status), "Sentry rejected an envelope",
		zap.Int("status", status), zap.String("detail", detail))
}

func (s *Sender) isStopping() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}

// Sleep waits d; false when ctx ended or shutdown began first. It is the
// real clock's pause between retries.
func Sleep(ctx context.Context, stopping <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-stopping:
		return false
	}
}

// bodyBuffers are one envelope's encoding and its compressed form, reused
// across envelopes once the transport closed the body.
type bodyBuffers struct {
	raw, wire []byte
}

// requestBody is an envelope being sent; closed tells when the transport is
// done with it. One per request, so that a late Close of an earlier request
// can never mark a later one's buffers free.
type requestBody struct {
	bytes.Reader
	closed atomic.Bool
}

func (b *requestBody) Close() error {
	b.closed.Store(true)
	return nil
}

// drain reads at most maxResponseRead bytes of body, closes it, and returns
// the first maxErrorSnippet bytes (in c's buffer: valid until c is reused).
func (c *bodyCutter) drain(body io.ReadCloser) []byte {
	defer body.Close()
	n, _ := io.ReadFull(body, c.head[:])
	c.rest = io.LimitedReader{R: body, N: maxResponseRead - int64(n)}
	_, _ = io.Copy(io.Discard, &c.rest)
	c.rest.R = nil
	return bytes.TrimSpace(c.head[:n])
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

// backoff is retry_on_failure's exponential backoff with jitter.
type backoff struct{ interval time.Duration }

func (b *backoff) reset(cfg configretry.BackOffConfig) { b.interval = cfg.InitialInterval }

// next returns the next delay; false when retries are off.
func (b *backoff) next(cfg configretry.BackOffConfig) (time.Duration, bool) {
	if !cfg.Enabled {
		return 0, false
	}
	d := b.interval
	if cfg.RandomizationFactor > 0 {
		delta := cfg.RandomizationFactor * float64(d)
		d = time.Duration(float64(d) - delta + rand.Float64()*2*delta)
	}
	next := time.Duration(float64(b.interval) * cfg.Multiplier)
	if cfg.MaxInterval > 0 && next > cfg.MaxInterval {
		next = cfg.MaxInterval
	}
	b.interval = next
	return d, true
}

// bodyCutter closes an answer's body when reading it takes too long (a body
// that dribbles or never ends), ending the read. One timer, reused.
type bodyCutter struct {
	t    *time.Timer
	mu   sync.Mutex
	body io.Closer
	head [maxErrorSnippet]byte // the start of the answer (drain)
	rest io.LimitedReader      // the remainder, read and discarded
}

func newBodyCutter() *bodyCutter {
	c := &bodyCutter{}
	c.t = time.AfterFunc(time.Hour, c.fire)
	c.t.Stop()
	return c
}

func (c *bodyCutter) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.body != nil {
		_ = c.body.Close()
	}
}

// arm closes body after d unless disarm comes first.
func (c *bodyCutter) arm(body io.Closer, d time.Duration) {
	c.mu.Lock()
	c.body = body
	c.mu.Unlock()
	c.t.Reset(d)
}

func (c *bodyCutter) disarm() {
	c.t.Stop()
	c.mu.Lock()
	c.body = nil
	c.mu.Unlock()
}
