// The exporter's lifecycle: it builds the shared parts (translator, trace
// index, assembler, dedupe window, the send stage) and a project per DSN,
// starts the send stage and the tickers, and shuts down in order (held
// spans, held error events, then the send stage: pending envelopes, final
// client reports).

package sentryexporter

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/assemblepdata"
	"github.com/otel-sentry/sentryexporter/internal/dedupe"
	"github.com/otel-sentry/sentryexporter/internal/discovery"
	"github.com/otel-sentry/sentryexporter/internal/dsn"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/logthrottle"
	"github.com/otel-sentry/sentryexporter/internal/membudget"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
	"github.com/otel-sentry/sentryexporter/internal/profilers"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/internal/send"
	"github.com/otel-sentry/sentryexporter/internal/traceindex"
	"github.com/otel-sentry/sentryexporter/internal/tracemetric"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// sentryExporter routes each resource's items to its Sentry project and hands
// them to that project's pipeline: translate what is not rate limited (the
// rest is only counted), wrap into envelopes, and offer them to the send
// stage, which sends them and accounts for every outcome. Without routing
// there is one project, the `dsn`.
type sentryExporter struct {
	cfg         *Config
	set         exporter.Settings
	logger      *zap.Logger
	translator  *translate.Translator
	payloads    encode.Arenas                     // container payloads, reused across pushes
	index       *traceindex.Index                 // heads and segments of recent traces (DSC, transaction of log-derived errors); each project has its own view
	facts       traceindex.FactsPool              // DSC facts of a push's segments, reused across pushes
	dedupe      *dedupe.Window[*project]          // nil unless both error sources are on and error_events::dedupe_window > 0
	assembly    *assemblepdata.Assembly[*project] // trace assembly (assembly.go); nil when assembly::wait is 0
	tb          *metadata.TelemetryBuilder
	stage       *send.Stage       // everything after an envelope is built (internal/send)
	assemblyMem *membudget.Holder // the spans held for assembly, in the stage's memory budget
	metrics     *tracemetric.Translator
	streams     *tracemetric.Pool // cumulative streams' previous points (metrics::max_stream_bytes), a share per project
	streamMem   *membudget.Holder // the streams' state, in the same budget
	profiles    *profilechunk.Translator
	profilers   *profilers.Registry // per project, the profilers recently seen by process and span (profiles.go)

	def             *project            // the `dsn` project; nil when routing covers everything
	static          map[string]*project // routing::dsns, by attribute value
	resolver        *discovery.Resolver // routing::discovery; nil without
	discoveryClient *http.Client        // the resolver's, built at start
	unroutable      *account.Accountant // drops of items that have no project
	refused         *project            // route's answer for a project the sender may not write to (sender.go); never pushed to

	now func() time.Time // the clock of projects' idleness (retire.go)

	mu       sync.Mutex
	byDSN    map[string]*project // every project, static or discovered, by DSN (discovered ones leave it when retired)
	projects []*project          // the same, copied on write, for the gauges

	loops      sync.WaitGroup // the dedupe, assembly and status tickers (start)
	logLimiter logthrottle.Throttle
	status     statusReporter // component status (status.go)
}

func newExporter(cfg *Config, set exporter.Settings) (*sentryExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &sentryExporter{
		cfg:     cfg,
		set:     set,
		logger:  set.Logger,
		tb:      tb,
		index:   traceindex.New(),
		byDSN:   map[string]*project{},
		static:  map[string]*project{},
		refused: &project{},
		now:     time.Now,
	}
	e.index.NoSpanIDs = !cfg.ErrorEvents.FromSpanExceptions && !cfg.ErrorEvents.FromLogs
	e.index.NoRequests = !cfg.ErrorEvents.FromLogs
	e.stage = newStage(cfg, set)
	e.buildTranslators()
	if ee := cfg.ErrorEvents; ee.FromSpanExceptions && ee.FromLogs && ee.DedupeWindow > 0 {
		e.dedupe = dedupe.New[*project](ee.DedupeWindow)
		e.dedupe.Mem = e.stage.NewHolder() // the window reserves before it holds, and gives back what it releases
	}
	if e.assembly = newAssembly(cfg.Assembly); e.assembly != nil {
		e.assemblyMem = e.stage.NewHolder()
	}
	if e.dedupe != nil && e.assembly != nil {
		e.dedupe.SpanHeld, e.dedupe.HoldMore = e.assembly.Held, cfg.Assembly.Wait
	}
	e.unroutable = account.NewAccountant(tb, unroutableProject, nil)
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
	if err := e.registerGauges(); err != nil {
		return nil, err
	}
	return e, nil
}

// newStage is the send stage of cfg: everything after an envelope is built.
func newStage(cfg *Config, set exporter.Settings) *send.Stage {
	var reportInterval time.Duration
	if cfg.ClientReports.Enabled {
		reportInterval = cfg.ClientReports.Interval
	}
	return send.New(send.Config{
		Client:                cfg.ClientConfig,
		Retry:                 cfg.RetryConfig,
		MaxConcurrentRequests: cfg.MaxConcurrentRequests,
		MaxRequestsInFlight:   cfg.Pending.MaxRequestsInFlight,
		MaxBytes:              cfg.Memory.MaxBytes,
		MaxProjects:           cfg.Routing.MaxProjects,
		DrainTimeout:          cfg.Pending.DrainTimeout,
		ReportInterval:        reportInterval,
	}, send.Settings{
		Telemetry: set.TelemetrySettings,
		Logger:    set.Logger,
		UserAgent: fmt.Sprintf("%s/%s (%s %s; %s/%s)", sdkinfo.Name, sdkinfo.Version, set.BuildInfo.Description, set.BuildInfo.Version, runtime.GOOS, runtime.GOARCH),
	})
}

// buildTranslators builds the translators of spans and logs, of metrics and
// of profiles, the metrics' stream state and the profilers seen, both in the
// stage's memory budget.
func (e *sentryExporter) buildTranslators() {
	cfg := e.cfg
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
	e.metrics = tracemetric.New(tracemetric.Options{
		Environment: cfg.Environment, Release: cfg.Release, SDKName: sdkinfo.Name, SDKVersion: sdkinfo.Version,
		ResourceAttributes: append([]string{}, cfg.Metrics.ResourceAttributes...), // never nil: [] means none
	})
	e.streams = tracemetric.NewPool(min(cfg.Metrics.MaxStreamBytes, cfg.Memory.MaxBytes/4), uint64(time.Now().UnixNano()))
	e.streamMem = e.stage.NewHolder()
	inApp, _ := profilechunk.NewInApp(cfg.Profiles.InAppInclude, cfg.Profiles.InAppExclude) // Validate has rejected what fails
	e.profiles = profilechunk.NewTranslator(profilechunk.Options{
		Environment: cfg.Environment, Release: cfg.Release, InApp: inApp, SharedIdentity: cfg.Profiles.AllProcessesProfiledBy,
	})
	e.profilers = profilers.New(profilerTTL, maxProfilers, e.stage.NewHolder())
}

const (
	// profilerTTL is how long after a process's last profile chunk its
	// transactions name its profiler: three of the SDKs' 60 s chunks
	// (@sentry/node, sentry-python), and many of an OTel profiler's
	// exports (the eBPF profiler's every 5 s). A process that stops
	// profiling stops being named within it.
	profilerTTL = 3 * time.Minute
	// maxProfilers bounds the processes and linked spans remembered, shared
	// fairly by the projects: 10,000 entries of ~260 bytes, 2.6 MB at most,
	// in the memory budget.
	maxProfilers = 10_000
)

// unroutableProject labels the drops of items that have no project.
const unroutableProject = "unroutable"

// addProject returns the project of a DSN (`dsn`, routing::dsns),
// creating it on first use; it never retires.
func (e *sentryExporter) addProject(rawDSN string) (*project, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addProjectLocked(rawDSN, false)
}

// addProjectLocked returns the project of a DSN, creating it (with its own
// limits, client reports, counters and lane of the send stage) on first
// use; retirable when discovery found it (retire.go). e.mu is held.
func (e *sentryExporter) addProjectLocked(rawDSN string, retirable bool) (*project, error) {
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
	p := &project{exp: e, dsn: d, limits: &ratelimit.State{}, retirable: retirable}
	var reports *account.ClientReports
	if e.cfg.ClientReports.Enabled {
		reports = &account.ClientReports{}
	}
	p.acct = account.NewAccountant(e.tb, d.ProjectID, reports)
	p.index = e.index.NewProject() // a project sees only its own traces' segments
	p.streams = e.streams.NewStreams()
	p.enc = encode.New(p.index, d.PublicKey, p.acct)
	if p.lane, err = e.stage.NewLane(send.LaneOptions{URL: url, Auth: d.AuthHeader, Limits: p.limits, Acct: p.acct, Reports: reports}); err != nil {
		p.index.Release()
		p.streams.Release()
		return nil, err
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

// start starts the send stage (the projects' HTTP clients are built there:
// only Start gets the host's extensions, which auth needs), discovery's
// client, and the tickers.
func (e *sentryExporter) start(ctx context.Context, host component.Host) error {
	if err := e.stage.Start(ctx, host); err != nil {
		return err
	}
	if e.cfg.Routing.Discovery.HasValue() {
		client, err := e.newDiscoveryClient(ctx, host)
		if err != nil {
			return err
		}
		e.discoveryClient = client
		d := e.cfg.Routing.Discovery.Get()
		e.resolver = discovery.New(client, discovery.Config{
			URL: d.URL, OrgSlug: d.OrgSlug, AuthToken: string(d.AuthToken), Team: d.Team,
			AutoCreateProjects: d.AutoCreateProjects, TTL: d.CacheTTL,
			LookupsPerMinute: d.LookupsPerMinute, MaxCreatedPerHour: d.MaxCreatedPerHour, MaxCreated: d.MaxCreated,
			OnCreate: func(slug string, total int) {
				e.tb.ExporterSentryProjectsCreated.Add(context.Background(), 1)
				e.logger.Info("Sentry project created by discovery", zap.String("project_slug", slug),
					zap.Int("created", total), zap.Int("max_created", d.MaxCreated))
			},
		}, time.Now)
	}
	if e.resolver != nil {
		e.loops.Go(func() { e.stage.Every(e.retireTick(), func() { e.retireIdle(context.Background()) }) })
	}
	if e.dedupe != nil {
		e.loops.Go(func() { e.stage.Every(e.dedupeTick(), func() { e.releaseDue(context.Background(), false) }) })
	}
	if e.assembly != nil {
		e.loops.Go(func() { e.stage.Every(e.assemblyTick(), func() { e.expireHeld(context.Background()) }) })
	}
	e.status.addHost(host)
	e.loops.Go(func() { e.stage.Every(statusTick, e.reportStatus) })
	return nil
}

// newDiscoveryClient is the management API's client, from discovery's own
// HTTP settings (never the envelopes' `headers` or `auth`), without request
// compression (its bodies are tiny JSON).
func (e *sentryExporter) newDiscoveryClient(ctx context.Context, host component.Host) (*http.Client, error) {
	apiCfg := e.cfg.Routing.Discovery.Get().ClientConfig
	apiCfg.Compression = ""
	return send.NewClient(ctx, apiCfg, host, e.set.TelemetrySettings)
}

// beginShutdown runs before exporterhelper drains its queue: from then on no
// envelope is retried, so the drain ends promptly (internal/send's
// Stage.BeginShutdown); the exporter's loops (Stage.Every) end with it.
func (e *sentryExporter) beginShutdown() {
	e.stage.BeginShutdown()
}

// shutdown runs last, after exporterhelper's queue drained into the send
// stage: held spans and held error events go out, then the stage settles
// every envelope (bounded by pending::drain_timeout) and sends each
// project's final client report.
func (e *sentryExporter) shutdown(ctx context.Context) error {
	e.beginShutdown()
	e.loops.Wait()
	if e.resolver != nil {
		// exporterhelper has drained: no push waits on a look-up any more;
		// look-ups still going on in the background end here.
		if err := e.resolver.Shutdown(ctx); err != nil {
			e.logger.Warn("Sentry project discovery did not stop in time", zap.Error(err))
		}
		e.discoveryClient.CloseIdleConnections()
	}
	// Held spans go out first: their error events may merge with log-derived
	// ones still in the dedupe window, which is released next.
	e.flushHeld(ctx)
	e.releaseDue(ctx, true) // every held error event goes out now, before the final client reports
	e.stage.Shutdown(ctx)
	e.tb.Shutdown()
	return nil
}

// releaseDue sends the held error events whose window ended; all of them when
// final (shutdown).
func (e *sentryExporter) releaseDue(ctx context.Context, final bool) {
	if e.dedupe == nil {
		return
	}
	if n := e.dedupe.TakeOverflow(); n > 0 {
		e.logLimiter.Log(e.logger, "dedupe-overflow", "Error events were sent without waiting for their duplicate: the dedupe window is full",
			zap.Int64("count", n), zap.Int("max_held_events", e.dedupe.MaxEvents), zap.Int("max_held_bytes", e.dedupe.MaxBytes))
	}
	rel := e.dedupe.Due(time.Now(), final)
	if len(rel) == 0 {
		return
	}
	byProject := map[*project][]encode.Outgoing{}
	for i := range rel {
		r := &rel[i]
		byProject[r.P] = append(byProject[r.P], r.P.enc.Error(&r.Ev))
	}
	for p, out := range byProject {
		p.lane.Offer(ctx, out, nil)
	}
}

// dedupeTick is how often held error events are checked when no push comes
// by: a held event is sent at most this long after its window ended.
func (e *sentryExporter) dedupeTick() time.Duration {
	return min(max(e.dedupe.Length/4, 100*time.Millisecond), time.Second)
}
