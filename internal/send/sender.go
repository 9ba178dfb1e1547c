package send

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/admit"
	"github.com/otel-sentry/sentryexporter/internal/logthrottle"
	"github.com/otel-sentry/sentryexporter/ratelimit"
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

// Send delivers env unless g is rate limited, retrying network errors and 5xx
// until retry_on_failure gives up. It holds a place in the project's adaptive
// concurrency limit and the exporter's in-flight budget only while a request
// is in flight, and checks the limits again after every wait: an envelope
// never waits for a rate limit to end.
func (s *Sender) Send(ctx context.Context, env *envelope.Envelope, g admit.Gate) Result {
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
			s.logger.Warn("Sentry rate limit: dropping this category until the limit ends",
				zap.String("category", c.Label()), zap.Duration("retry_after", deadline.Sub(now)), zap.Bool("capped", capped))
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
