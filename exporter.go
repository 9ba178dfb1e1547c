// The exporter's lifecycle: it builds the shared parts (translator, trace
// index, assembler, dedupe window, in-flight budget) and a project per DSN,
// starts the HTTP clients and the tickers, and shuts down in order (held
// spans, held error events, pending envelopes, final client reports).

package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/admit"
	"github.com/otel-sentry/sentryexporter/internal/dedupe"
	"github.com/otel-sentry/sentryexporter/internal/discovery"
	"github.com/otel-sentry/sentryexporter/internal/dsn"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/logthrottle"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/pending"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/internal/send"
	"github.com/otel-sentry/sentryexporter/internal/traceindex"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// sentryExporter routes each resource's items to its Sentry project and hands
// them to that project's pipeline: translate what is not rate limited (the
// rest is only counted), wrap into envelopes, send concurrently, account for
// every outcome. Without routing there is one project, the `dsn`.
type sentryExporter struct {
	cfg        *Config
	set        exporter.Settings
	logger     *zap.Logger
	translator *translate.Translator
	payloads   encode.Arenas            // container payloads, reused across pushes
	index      *traceindex.Index        // heads and segments of recent traces (DSC, transaction of log-derived errors)
	facts      traceindex.FactsPool     // DSC facts of a push's segments, reused across pushes
	dedupe     *dedupe.Window[*project] // nil unless both error sources are on and error_events::dedupe_window > 0
	asm        *assembly                // trace assembly (assembly.go); nil when assembly::wait is 0
	tb         *metadata.TelemetryBuilder
	clk        clocks
	userAgent  string
	comp       *send.Compressors // envelope body encoders shared by the projects (internal/send)

	def           *project            // the `dsn` project; nil when routing covers everything
	static        map[string]*project // routing::dsns, by attribute value
	resolver      *discovery.Resolver // routing::discovery; nil without
	discoveryWait time.Duration       // longest a push waits for a look-up (discoveryWait; tests shorten it)
	unroutable    *account.Accountant // drops of items that have no project

	mu       sync.Mutex
	byDSN    map[string]*project // every project, static or discovered, by DSN
	projects []*project          // the same, copied on write, for the report loop and the gauge
	host     component.Host      // set by start; discovered projects build their client from it

	pending   pending.Total      // bytes all projects hold, against pending::max_bytes
	inflight  *admit.Budget      // requests and bytes in flight over all projects (internal/admit)
	run       context.Context    // ends pending::drain_timeout after shutdown began: requests in flight are cancelled
	cancelRun context.CancelFunc //
	drainEnd  *time.Timer        // set when shutdown begins
	// finalReport bounds the one attempt of each project's final client report.
	finalReport time.Duration
	// clientHook, when set (by tests), adjusts each project's HTTP client once
	// built: a test points DNS at a local server through it.
	clientHook func(*http.Client)

	stopping       chan struct{}
	stopOnce       sync.Once
	reportLoopWG   sync.WaitGroup
	dedupeLoopWG   sync.WaitGroup
	assemblyLoopWG sync.WaitGroup
	warnOnce       logthrottle.Throttle
}

func newExporter(cfg *Config, set exporter.Settings, clk clocks) (*sentryExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &sentryExporter{
		cfg:           cfg,
		set:           set,
		logger:        set.Logger,
		tb:            tb,
		clk:           clk,
		userAgent:     fmt.Sprintf("%s/%s (%s %s; %s/%s)", sdkinfo.Name, sdkinfo.Version, set.BuildInfo.Description, set.BuildInfo.Version, runtime.GOOS, runtime.GOARCH),
		index:         traceindex.New(),
		byDSN:         map[string]*project{},
		static:        map[string]*project{},
		stopping:      make(chan struct{}),
		discoveryWait: discoveryWait,
	}
	e.index.NoSpanIDs = !cfg.ErrorEvents.FromSpanExceptions && !cfg.ErrorEvents.FromLogs
	e.index.NoRequests = !cfg.ErrorEvents.FromLogs
	e.pending.Max = cfg.Pending.MaxBytes
	// Each project's fair share of the total, held whatever the others hold.
	e.pending.Share = min(cfg.Pending.MaxBytesPerProject, cfg.Pending.MaxBytes/max(int64(cfg.Routing.MaxProjects), 1))
	e.inflight = admit.NewBudget(cfg.Pending.MaxRequestsInFlight, cfg.Pending.MaxBytesInFlight, cfg.Routing.MaxProjects)
	e.finalReport = finalReportTimeout
	e.run, e.cancelRun = context.WithCancel(context.Background())
	e.translator = translate.New(translate.Options{
		Environment:              cfg.Environment,
		Release:                  cfg.Release,
		SDKName:                  sdkinfo.Name,
		SDKVersion:               sdkinfo.Version,
		ErrorsFromSpanExceptions: cfg.ErrorEvents.FromSpanExceptions,
		ErrorsFromLogs:           cfg.ErrorEvents.FromLogs,
		SendDefaultPII:           cfg.SendDefaultPII,
		LogResourceAttributes:    append([]string{}, cfg.Logs.ResourceAttributes...), // never nil: [] means none
	})
	if ee := cfg.ErrorEvents; ee.FromSpanExceptions && ee.FromLogs && ee.DedupeWindow > 0 {
		e.dedupe = dedupe.New[*project](ee.DedupeWindow)
	}
	e.asm = newAssembly(cfg.Assembly)
	if e.dedupe != nil && e.asm != nil {
		e.dedupe.SpanHeld, e.dedupe.HoldMore = e.heldInAssembly, cfg.Assembly.Wait
	}
	e.unroutable = account.NewAccountant(tb, unroutableProject, nil)
	if send.OwnEncoding(cfg.ClientConfig.Compression) != send.EncodingByClient {
		e.comp = send.NewCompressors(cfg.ClientConfig.CompressionParams.Level)
	}
	if cfg.DSN != "" {
		if e.def, err = e.addProject(string(cfg.DSN)); err != nil {
			return nil, err
		}
	}
	for value, raw := range cfg.Routing.DSNs {
		p, err := e.addProject(string(raw))
		if err != nil {
			return nil, fmt.Errorf("routing::dsns::%s: %w", value, err)
		}
		e.static[value] = p
	}
	err = tb.RegisterExporterSentryRateLimitRemainingCallback(func(_ context.Context, o metric.Float64Observer) error {
		now := e.clk.now()
		for _, p := range e.allProjects() {
			p.acct.ObserveLimits(o, p.limits.Load(), now)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = tb.RegisterExporterSentryPendingBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		for _, p := range e.allProjects() {
			o.Observe(p.queue.Bytes(), metric.WithAttributes(p.acct.Project))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = tb.RegisterExporterSentryAssemblyHeldBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		if e.asm == nil {
			return nil
		}
		for _, p := range e.allProjects() {
			o.Observe(p.heldBytes.Load(), metric.WithAttributes(p.acct.Project))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = tb.RegisterExporterSentryConcurrencyLimitCallback(func(_ context.Context, o metric.Int64Observer) error {
		for _, p := range e.allProjects() {
			o.Observe(int64(p.sender.Limit.Current()), metric.WithAttributes(p.acct.Project))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = tb.RegisterExporterSentryInFlightBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		for _, p := range e.allProjects() {
			o.Observe(p.sender.Limit.HeldBytes(), metric.WithAttributes(p.acct.Project))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// unroutableProject labels the drops of items that have no project.
const unroutableProject = "unroutable"

// addProject returns the project of a DSN, creating it (with its own limits,
// client reports, counters and sender) on first use. Before start the HTTP
// client is built by start; after it, at once.
func (e *sentryExporter) addProject(rawDSN string) (*project, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.byDSN[rawDSN]; ok {
		return p, nil
	}
	if len(e.byDSN) >= e.cfg.Routing.MaxProjects {
		return nil, fmt.Errorf("more than `routing::max_projects` (%d) Sentry projects", e.cfg.Routing.MaxProjects)
	}
	d, err := dsn.Parse(rawDSN)
	if err != nil {
		return nil, err
	}
	url, err := dsn.EnvelopeURL(d, e.cfg.ClientConfig.Endpoint)
	if err != nil {
		return nil, err
	}
	p := &project{exp: e, dsn: d, limits: &ratelimit.State{}}
	if e.cfg.ClientReports.Enabled {
		p.reports = &account.ClientReports{}
	}
	p.acct = account.NewAccountant(e.tb, d.ProjectID, p.reports)
	p.enc = encode.New(e.index, d.PublicKey, p.acct)
	var body *send.BodyEncoder
	if e.comp != nil {
		body = send.NewBodyEncoder(e.comp, e.cfg.ClientConfig.Compression, e.logger, p.acct.CompressionFallback)
	}
	p.queue = pending.New(e.run, e.cfg.MaxConcurrentRequests, e.cfg.Pending.MaxBytesPerProject, &e.pending, p.deliver)
	if p.sender, err = send.New(send.Options{
		URL: url, Auth: d.AuthHeader, UserAgent: e.userAgent,
		Limits:   p.limits,
		Retry:    e.cfg.RetryConfig,
		Limit:    e.inflight.NewLimit(e.cfg.MaxConcurrentRequests),
		Stopping: e.stopping,
		Now:      e.clk.now,
		Wall:     e.clk.wall,
		Pause:    e.clk.pause,
		Logger:   e.logger,
		Acct:     p.acct,
		Timeout:  e.cfg.ClientConfig.Timeout,
		Body:     body,
	}); err != nil {
		return nil, err
	}
	p.queue.Allowed = p.sender.Limit.Current
	if e.host != nil {
		if p.sender.Client, err = e.newClient(context.Background(), e.host); err != nil {
			return nil, err
		}
	}
	e.byDSN[rawDSN] = p
	e.projects = append(append([]*project(nil), e.projects...), p)
	return p, nil
}

func (e *sentryExporter) allProjects() []*project {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.projects
}

// newClient builds one project's HTTP client. It is built in start (or later
// for a discovered project) because only Start gets the host's extensions,
// which auth needs.
//
// Its Timeout is cleared: the sender bounds each POST with `timeout` on the
// request's context instead. The effect is the same (connection, request and
// answer), but a Client.Timeout over a wrapped transport (confighttp's
// instrumentation) costs a goroutine, a timer and two channels per request.
func (e *sentryExporter) newClient(ctx context.Context, host component.Host) (*http.Client, error) {
	client, err := e.newClientWith(ctx, host, e.cfg.ClientConfig)
	if err == nil {
		client.Timeout = 0
	}
	return client, err
}

func (e *sentryExporter) newClientWith(ctx context.Context, host component.Host, clientCfg confighttp.ClientConfig) (*http.Client, error) {
	clientCfg.Endpoint = "" // the envelope URL is derived from the DSN (and `endpoint`) in addProject
	if send.OwnEncoding(clientCfg.Compression) != send.EncodingByClient {
		clientCfg.Compression = "" // internal/send compresses envelope bodies itself
	}
	if clientCfg.Keepalive.HasValue() && clientCfg.Keepalive.Get().MaxIdleConnsPerHost == 0 {
		// Go's default of 2 idle connections per host would close and reopen
		// connections under max_concurrent_requests concurrent envelopes.
		ka := *clientCfg.Keepalive.Get()
		ka.MaxIdleConnsPerHost = e.cfg.MaxConcurrentRequests
		clientCfg.Keepalive = configoptional.Some(ka)
	}
	client, err := clientCfg.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
	if err == nil && e.clientHook != nil {
		e.clientHook(client)
	}
	return client, err
}

// start builds the projects' HTTP clients and starts the client-report ticker.
func (e *sentryExporter) start(ctx context.Context, host component.Host) error {
	e.mu.Lock()
	e.host = host
	projects := e.projects
	e.mu.Unlock()
	for _, p := range projects {
		client, err := e.newClient(ctx, host)
		if err != nil {
			return err
		}
		p.sender.Client = client
	}
	if e.cfg.Routing.Discovery.HasValue() {
		// The management API goes through the same TLS, proxy and auth
		// settings, without request compression (its bodies are tiny JSON).
		apiCfg := e.cfg.ClientConfig
		apiCfg.Compression = ""
		client, err := e.newClientWith(ctx, host, apiCfg)
		if err != nil {
			return err
		}
		d := e.cfg.Routing.Discovery.Get()
		e.resolver = discovery.New(client, discovery.Config{
			URL: d.URL, OrgSlug: d.OrgSlug, AuthToken: string(d.AuthToken), Team: d.Team,
			AutoCreateProjects: d.AutoCreateProjects, TTL: d.CacheTTL,
		}, e.clk.now)
	}
	if e.cfg.ClientReports.Enabled {
		e.reportLoopWG.Go(e.reportLoop)
	}
	if e.dedupe != nil {
		e.dedupeLoopWG.Go(func() { e.every(e.dedupeTick(), func() { e.releaseDue(context.Background(), false) }) })
	}
	if e.asm != nil {
		e.assemblyLoopWG.Go(func() { e.every(e.assemblyTick(), func() { e.expireHeld(e.run) }) })
	}
	return nil
}

// finalReportTimeout bounds the one attempt each project's final client
// report gets at shutdown (all projects in parallel).
const finalReportTimeout = 2 * time.Second

// beginShutdown runs before exporterhelper drains its queue: from then on no
// envelope is retried, so the drain ends promptly; each queued batch still
// gets one attempt unless its category is rate limited. pending::drain_timeout
// later, every request still in flight is cancelled and whatever is still
// pending fails at once (network_error): a hanging Sentry cannot hold the
// shutdown.
func (e *sentryExporter) beginShutdown() {
	e.stopOnce.Do(func() {
		close(e.stopping)
		e.drainEnd = time.AfterFunc(e.cfg.Pending.DrainTimeout, e.cancelRun)
	})
}

// shutdown runs last, after exporterhelper's queue drained into the
// projects' pending queues: it waits until each project has settled its
// envelopes (bounded by pending::drain_timeout), then sends each project's
// final client report, one attempt of at most finalReportTimeout, all
// projects at once (or logs its counts when that fails).
func (e *sentryExporter) shutdown(ctx context.Context) error {
	e.beginShutdown()
	e.reportLoopWG.Wait()
	e.dedupeLoopWG.Wait()
	e.assemblyLoopWG.Wait()
	// Held spans go out first: their error events may merge with log-derived
	// ones still in the dedupe window, which is released next.
	e.flushHeld(ctx)
	e.releaseDue(ctx, true) // every held error event goes out now, before the final client reports
	projects := e.allProjects()
	var wg sync.WaitGroup
	for _, p := range projects {
		wg.Go(p.queue.Close)
	}
	wg.Wait()
	e.drainEnd.Stop()
	e.cancelRun()
	for _, p := range projects {
		if p.sender.Client == nil {
			continue
		}
		wg.Go(func() {
			if p.reports != nil {
				rctx, cancel := context.WithTimeout(ctx, e.finalReport)
				p.flushReport(rctx, true)
				cancel()
			}
			p.sender.Client.CloseIdleConnections()
		})
	}
	wg.Wait()
	e.tb.Shutdown()
	return nil
}

// reportLoop sends each project's pending client report every
// client_reports.interval, each project on its own: a project whose Sentry
// hangs delays only its own report (and skips its next ticks until that
// attempt ends), never another project's.
func (e *sentryExporter) reportLoop() {
	t := time.NewTicker(e.cfg.ClientReports.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			for _, p := range e.allProjects() {
				if !p.reporting.CompareAndSwap(false, true) {
					continue
				}
				e.reportLoopWG.Go(func() {
					defer p.reporting.Store(false)
					p.flushReport(e.run, false)
				})
			}
		case <-e.stopping:
			return
		}
	}
}

// releaseDue sends the held error events whose window ended; all of them when
// final (shutdown).
func (e *sentryExporter) releaseDue(ctx context.Context, final bool) {
	if e.dedupe == nil {
		return
	}
	if n := e.dedupe.TakeOverflow(); n > 0 {
		e.warnOnce.Log(e.logger, "dedupe-overflow", "Error events were sent without waiting for their duplicate: the dedupe window is full",
			zap.Int64("count", n), zap.Int("max_held_events", e.dedupe.MaxEvents), zap.Int("max_held_bytes", e.dedupe.MaxBytes))
	}
	rel := e.dedupe.Due(e.clk.now(), final)
	if len(rel) == 0 {
		return
	}
	byProject := map[*project][]encode.Outgoing{}
	for i := range rel {
		r := &rel[i]
		byProject[r.P] = append(byProject[r.P], r.P.enc.Error(&r.Ev))
	}
	for p, out := range byProject {
		p.sendAll(ctx, out)
	}
}

// dedupeTick is how often held error events are checked when no push comes
// by: a held event is sent at most this long after its window ended.
func (e *sentryExporter) dedupeTick() time.Duration {
	return min(max(e.dedupe.Length/4, 100*time.Millisecond), time.Second)
}

// every runs fn every d until shutdown begins: the held error events and
// held spans are released by it while no push comes by.
func (e *sentryExporter) every(d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			fn()
		case <-e.stopping:
			return
		}
	}
}

// clocks are the exporter's time sources: now for Sentry's rate-limit
// windows; wall and pause for the retry budget and its waits. Tests replace them.
type clocks struct {
	now   func() time.Time
	wall  func() time.Time
	pause func(ctx context.Context, stopping <-chan struct{}, d time.Duration) bool
}

func realClocks() clocks {
	return clocks{now: time.Now, wall: time.Now, pause: send.Sleep}
}
