package send

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/concurrency"
	"github.com/otel-sentry/sentryexporter/internal/membudget"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Config is what the stage is built from; the exporter's config keys map onto it.
type Config struct {
	// Client is the HTTP client's settings (confighttp): one client, with its
	// own connection pool, per project. Its endpoint is ignored (each lane
	// has its envelope URL); zstd and gzip are applied by the stage itself.
	Client confighttp.ClientConfig
	// Retry is retry_on_failure: the backoff of envelopes whose attempt got no
	// answer or a 5xx.
	Retry configretry.BackOffConfig
	// MaxConcurrentRequests is the most a project's adaptive limit reaches.
	MaxConcurrentRequests int
	// MaxRequestsInFlight is the request budget over all projects.
	MaxRequestsInFlight int
	// MaxBytes is the memory budget over everything the exporter holds.
	MaxBytes int64
	// MaxProjects is routing::max_projects: the shares of both budgets.
	MaxProjects int
	// DrainTimeout is the sending time left once shutdown begins.
	DrainTimeout time.Duration
	// ReportInterval is the period of each project's standalone client report.
	ReportInterval time.Duration
}

// Settings are the stage's surroundings.
type Settings struct {
	Telemetry component.TelemetrySettings
	Logger    *zap.Logger
	UserAgent string
	// Jitter is the source of the retry backoff's jitter (nil: one seeded at
	// random): a seeded one makes a run with failures repeatable.
	Jitter *rand.Rand
}

// Stage is the send stage: everything that happens to an envelope after it
// is built. It has one way in, [Lane.Offer], and one way out, each project's
// [account.Accountant], which learns the fate of every item it was offered:
// stored by Sentry, or dropped and why. In between it owns the queueing, the
// retries (a failed envelope waits in a delay queue, never in a worker), the
// concurrency (each project's adaptive limit within the request budget), the
// memory it holds (one budget for the exporter, shared fairly by projects)
// and the client reports that tell Sentry what was dropped.
type Stage struct {
	cfg    Config
	set    Settings
	mem    *membudget.Memory
	budget *concurrency.Budget
	comp   *Compressors // nil when confighttp compresses
	bufs   bufferPools
	jitter *jitter // the retry backoff's (Settings.Jitter)

	// run ends DrainTimeout after shutdown began: requests in flight are
	// cancelled and what is left fails at once.
	run       context.Context
	cancelRun context.CancelFunc
	stopping  chan struct{} // closed when shutdown begins: no more retries
	stopOnce  sync.Once
	drainEnd  *time.Timer
	loops     sync.WaitGroup

	mu      sync.Mutex
	host    component.Host // set by Start
	lanes   atomic.Pointer[[]*Lane]
	started bool

	// roomMu serializes the making of room in the memory budget, so that two
	// lanes never evict for the same bytes. It is taken before any lane's mu,
	// never after.
	roomMu sync.Mutex
}

// New builds the stage; lanes can be added at once, clients come with Start.
func New(cfg Config, set Settings) *Stage {
	s := &Stage{
		cfg: cfg, set: set,
		mem:      membudget.NewMemory(cfg.MaxBytes, cfg.MaxProjects),
		budget:   concurrency.NewBudget(cfg.MaxRequestsInFlight, cfg.MaxProjects, cfg.Retry.InitialInterval),
		jitter:   newJitter(set.Jitter),
		stopping: make(chan struct{}),
	}
	if OwnEncoding(cfg.Client.Compression) != EncodingLeftToConfighttp {
		s.comp = NewCompressors(cfg.Client.CompressionParams.Level)
	}
	s.run, s.cancelRun = context.WithCancel(context.Background())
	s.lanes.Store(&[]*Lane{})
	return s
}

// finalReportTimeout bounds the one attempt each project's final client
// report gets at shutdown (all projects in parallel).
const finalReportTimeout = 2 * time.Second

// NewHolder is a part of the memory budget for a holder outside the stage
// (the spans held for trace assembly, the error events in the dedupe
// window): what it holds leaves less room for envelopes.
func (s *Stage) NewHolder() *membudget.Holder { return s.mem.NewHolder() }

// Memory is the budget, for the exporter's gauges.
func (s *Stage) Memory() *membudget.Memory { return s.mem }

// LaneOptions are one project's part of the stage.
type LaneOptions struct {
	URL, Auth string // the envelope URL and X-Sentry-Auth of every request
	Limits    *ratelimit.State
	Acct      *account.Accountant
	Reports   *account.ClientReports // nil when client reports are disabled
}

// NewLane adds a project. After Start its HTTP client is built at once.
func (s *Stage) NewLane(o LaneOptions) (*Lane, error) {
	request, err := newRequestTemplate(o.URL, o.Auth, s.set.UserAgent)
	if err != nil {
		return nil, err
	}
	l := &Lane{
		stage: s, acct: o.Acct, reports: o.Reports, limits: o.Limits,
		limit: s.budget.NewLimit(s.cfg.MaxConcurrentRequests),
		mem:   s.mem.NewHolder(),
		wake:  make(chan struct{}, s.cfg.MaxConcurrentRequests+1),
		quit:  make(chan struct{}),
	}
	l.http = httpSender{
		request: request, limits: o.Limits, acct: o.Acct,
		timeout: s.cfg.Client.Timeout, logger: s.set.Logger, bufs: &s.bufs,
	}
	if s.comp != nil {
		l.http.body = NewBodyEncoder(s.comp, s.cfg.Client.Compression, s.set.Logger, o.Acct.CompressionFallback)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		client, err := s.newClient(context.Background(), s.host)
		if err != nil {
			return nil, err
		}
		l.http.client.Store(client)
	}
	lanes := append(slices.Clone(*s.lanes.Load()), l)
	s.lanes.Store(&lanes)
	return l, nil
}

// Lanes is every project's lane, in the order they were added.
func (s *Stage) Lanes() []*Lane { return *s.lanes.Load() }

// Start builds each project's HTTP client (only Start gets the host's
// extensions, which auth needs) and starts the client-report loop.
func (s *Stage) Start(ctx context.Context, host component.Host) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range *s.lanes.Load() {
		client, err := s.newClient(ctx, host)
		if err != nil {
			return err
		}
		l.http.client.Store(client)
	}
	s.host, s.started = host, true
	if s.cfg.ReportInterval > 0 {
		s.loops.Go(func() { s.Every(s.cfg.ReportInterval, s.reportTick) })
	}
	return nil
}

// newClient builds one project's HTTP client. Its Timeout is cleared: each
// POST is bounded by `timeout` on its request's context instead. The effect
// is the same (connection, request and answer), but a Client.Timeout over a
// wrapped transport (confighttp's instrumentation) costs a goroutine, a
// timer and two channels per request.
func (s *Stage) newClient(ctx context.Context, host component.Host) (*http.Client, error) {
	client, err := NewClient(ctx, s.clientConfig(), host, s.set.Telemetry)
	if err != nil {
		return nil, err
	}
	client.Timeout = 0
	return client, nil
}

// clientConfig is the client's config as confighttp gets it.
func (s *Stage) clientConfig() confighttp.ClientConfig {
	cfg := s.cfg.Client
	if s.comp != nil {
		cfg.Compression = "" // the stage compresses envelope bodies itself
	}
	if cfg.Keepalive.HasValue() && cfg.Keepalive.Get().MaxIdleConnsPerHost == 0 {
		// Go's default of 2 idle connections per host would close and reopen
		// connections under max_concurrent_requests concurrent envelopes.
		ka := *cfg.Keepalive.Get()
		ka.MaxIdleConnsPerHost = s.cfg.MaxConcurrentRequests
		cfg.Keepalive = configoptional.Some(ka)
	}
	return cfg
}

// Running ends when the drain time after shutdown is over: work that
// feeds the stage (a discovery look-up, say) gives up then too.
func (s *Stage) Running() context.Context { return s.run }

// isStopping reports whether shutdown began.
func (s *Stage) isStopping() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}

// BeginShutdown runs before exporterhelper drains its queue: from then on no
// envelope is retried (those waiting to retry are counted at once with their
// last failure), so the drain ends promptly; each queued envelope still gets
// one attempt unless its category is rate limited. DrainTimeout later every
// request still in flight is cancelled and whatever is left fails at once
// (network_error): a hanging Sentry cannot hold the shutdown.
func (s *Stage) BeginShutdown() {
	s.stopOnce.Do(func() {
		close(s.stopping)
		s.drainEnd = time.AfterFunc(s.cfg.DrainTimeout, s.cancelRun)
		for _, l := range s.Lanes() {
			l.stopRetries()
		}
	})
}

// Shutdown runs once every envelope has been offered (after exporterhelper
// drained its queue and the exporter released what it held): it waits until
// every lane has settled its envelopes (bounded by DrainTimeout), then sends
// each project's final client report, one attempt of at most
// finalReportTimeout, all projects at once (or logs its counts when that
// fails).
func (s *Stage) Shutdown(ctx context.Context) {
	s.BeginShutdown()
	s.loops.Wait()
	lanes := s.Lanes()
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(l.close)
	}
	wg.Wait()
	s.drainEnd.Stop()
	s.cancelRun()
	finalReports(ctx, lanes)
}

// Every runs fn every d until shutdown begins (BeginShutdown): the loops
// that release what waits while no push comes by (the stage's client
// reports, the exporter's held spans and error events, its status) all end
// on this one event.
func (s *Stage) Every(d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			fn()
		case <-s.stopping:
			return
		}
	}
}

// reportTick sends each project's pending client report, each project on
// its own: a project whose Sentry hangs delays only its own report (and
// skips its next ticks until that attempt ends), never another project's.
func (s *Stage) reportTick() {
	for _, l := range s.Lanes() {
		if l.reports == nil || !l.reporting.CompareAndSwap(false, true) {
			continue
		}
		s.loops.Go(func() {
			defer l.reporting.Store(false)
			l.flushReport(s.run, false)
		})
	}
}

// makeRoom counts n more bytes for l in the memory budget, making room when
// it is full: the lane furthest past its share (l itself included, counted
// with the n bytes it asks for) drops its oldest envelope not in flight, as
// often as needed. A lane whose Sentry hangs so gives way to a busy healthy
// one, never the reverse. False when no lane past its share has anything to
// drop and l would be past its share too: the new envelope is the one to
// drop. A lane holding nothing is no exception: past its share, an envelope
// goes in only where the total has room, so no envelope, however large,
// takes more than the budget.
func (s *Stage) makeRoom(l *Lane, n int64) bool {
	if l.mem.TryTake(n) {
		return true
	}
	s.roomMu.Lock()
	defer s.roomMu.Unlock()
	if l.mem.Held()+n > s.mem.Share() && !s.couldFit(l, n) {
		return false // no drop could make room: drop none for it
	}
	var skip []*Lane // lanes with nothing left to drop
	for {
		if s.mem.Held()+n <= s.mem.Max() {
			l.mem.Add(n)
			return true
		}
		v := s.furthestOver(l, n, skip)
		switch {
		case v == nil && l.mem.Held()+n <= s.mem.Share():
			// Everything else is in flight or held outside the stage; within
			// its share a lane always takes its envelope, so that none waits
			// for room that never comes.
			l.mem.Add(n)
			return true
		case v == nil:
			return false
		case !v.evictOldest():
			skip = append(skip, v)
		}
	}
}

// couldFit reports whether the budget could take n more bytes for l once
// every lane dropped all it may: l all it holds, the others what they hold
// past their shares. An upper bound, so that an envelope that can never fit
// costs no other lane an envelope.
func (s *Stage) couldFit(l *Lane, n int64) bool {
	free := s.mem.Max() - s.mem.Held() + l.mem.Held()
	for _, c := range s.Lanes() {
		if c != l {
			free += max(0, c.mem.Over())
		}
	}
	return n <= free
}

// furthestOver is the lane furthest past its share, l counted with the n
// bytes it asks for, other than those in skip; nil when none is past it.
func (s *Stage) furthestOver(l *Lane, n int64, skip []*Lane) *Lane {
	var best *Lane
	var over int64
	for _, c := range s.Lanes() {
		if slices.Contains(skip, c) {
			continue
		}
		o := c.mem.Over()
		if c == l {
			o += n
		}
		if o > over {
			best, over = c, o
		}
	}
	return best
}

// finalReports sends each lane's final client report, each within
// finalReportTimeout, and closes the lane's idle connections.
func finalReports(ctx context.Context, lanes []*Lane) {
	var wg sync.WaitGroup
	for _, l := range lanes {
		client := l.http.client.Load()
		if client == nil {
			continue
		}
		wg.Go(func() {
			if l.reports != nil {
				rctx, cancel := context.WithTimeout(ctx, finalReportTimeout)
				l.flushReport(rctx, true)
				cancel()
			}
			client.CloseIdleConnections()
		})
	}
	wg.Wait()
}
