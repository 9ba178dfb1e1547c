// The component's face to the collector: NewFactory, the defaults (each
// with its reason), and the one exporter that a component config's traces,
// logs, metrics and profiles pipelines share.

package sentryexporter

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/exporter/xexporter"

	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/tracemetric"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

const (
	// Defaults that differ from the library constructors; each with its reason.
	defaultTimeout               = 30 * time.Second // one envelope; the HTTP client's timeout is the only one
	defaultMaxConcurrentRequests = 128              // 128 in flight at 50 ms RTT = ~2,560 envelopes/s at most (make load)
	defaultQueueSizeItems        = 50_000           // spans, logs or data points per signal; ~1.6 KiB each in pdata (soak): ~80 MiB per queue
	defaultBatchMinItems         = 1_000
	defaultBatchMaxItems         = 2_000 // bounds what one consumer holds and translates at once
	defaultClientReportInterval  = 30 * time.Second
	defaultMaxProjects           = 100       // each project: limits, client reports, a connection pool (see README)
	defaultIdleTimeout           = time.Hour // a renamed service's slot comes back; an hourly job keeps its project
	defaultDiscoveryURL          = "https://sentry.io"
	defaultDiscoveryTTL          = 10 * time.Minute
	defaultDiscoveryTimeout      = 10 * time.Second // one management API call; a look-up makes a few, within 30 s
	// A sender's look-ups: a service's restart of a few dozen new names in a minute, far
	// below the management API's own limit (its 429 would stop discovery for everyone).
	defaultLookupsPerMinute  = 60
	defaultMaxCreatedPerHour = 10                 // a team's new services of a day, not a sender's invented names
	defaultMaxCreated        = defaultMaxProjects // no more than the exporter could route at once
	// defaultDedupeWindow covers a traces and a logs pipeline flushing their
	// batches at different times (the batcher's flush_timeout is 200 ms; an
	// SDK's batch span processor and log processor export every 1-5 s).
	defaultDedupeWindow = 5 * time.Second
	// defaultMemoryMaxBytes is the one memory budget (docs/memory.md): with
	// Go's heap growing to about twice what is live, it keeps a 100-project
	// gateway well under 512 MiB RSS whatever Sentry does (make partition,
	// make flap; 128 MiB reached 476 MiB in make flap, too close).
	defaultMemoryMaxBytes = 96 << 20
	// Shutdown: pending envelopes get this long, then each final client report
	// gets finalReportTimeout: the exporter's own part stays under 10 s.
	defaultDrainTimeout = 5 * time.Second
	// defaultAssemblyWait covers a request's children waiting for its root:
	// the SDKs' batch span processor exports every 5 s, so a request's
	// children can go out one flush (5 s) before its root, plus the
	// collector's own batching (a second or two), plus the request's own
	// duration (a child that ends early waits for the root to end). 30 s
	// covers requests up to ~20 s; @sentry/opentelemetry's exporter, which
	// assembles in process, waits up to 300 s (its `timeout`).
	defaultAssemblyWait = 30 * time.Second
	// defaultAssemblyMaxBytes: ~22,000-75,000 held spans (1.4 × protobuf +
	// 512 B each), about 10,000-30,000 split spans/s waiting half a 5 s flush
	// interval. It counts against the memory budget, of which it may take
	// half at most: envelopes keep the rest.
	defaultAssemblyMaxBytes = 48 << 20
	// defaultMaxStreamBytes: about 52,000 cumulative streams (a metric of one
	// process with one attribute set each: 100 services of 500 streams), a
	// twelfth of the memory budget.
	defaultMaxStreamBytes = 8 << 20
	// In flight over all projects: 512 requests is 4 projects at the default
	// max_concurrent_requests (docs/memory.md).
	defaultMaxRequestsInFlight = 512
	// defaultRetryInitialInterval: the first retry of an envelope that got no
	// answer or a 5xx comes after 1 s, not the collector's 5 s: a waiting
	// envelope holds no worker (internal/send's delay queue) and a failing
	// Sentry is protected by the concurrency limit (halved once per round
	// trip while most answers are 5xx, one probe while none come), so an
	// early retry costs one request. With 5 s, a brownout of 1 in 5 leaves
	// over 1 % undelivered 10 s after the load (TestBrownout). Vector's
	// HTTP sinks also start at 1 s (retry_initial_backoff_secs).
	defaultRetryInitialInterval = time.Second
)

// NewFactory creates the factory of the Sentry exporter. The traces, logs,
// metrics and profiles exporters built from one component config share one
// exporter, hence one rate-limit state, one client-report aggregator and one
// connection pool. It is an xexporter.Factory: profiles are the collector's
// experimental signal (a pipeline needs --feature-gates=service.profilesSupport).
func NewFactory() exporter.Factory {
	shared := &sharedExporters{byConfig: map[*Config]*sharedExporter{}}
	return xexporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xexporter.WithTraces(shared.createTraces, metadata.TracesStability),
		xexporter.WithLogs(shared.createLogs, metadata.LogsStability),
		xexporter.WithMetrics(shared.createMetrics, metadata.MetricsStability),
		xexporter.WithProfiles(shared.createProfiles, metadata.ProfilesStability),
	)
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = defaultTimeout
	client.Compression = configcompression.TypeZstd // Relay accepts zstd; ~40 % cheaper than gzip here (make compare); gzip fallback per project (internal/send/compress.go)

	queue := exporterhelper.NewDefaultQueueConfig()
	// Bound the queue by items, not requests: a request can hold any number of
	// spans, so a request-sized queue has no memory bound at all.
	queue.Sizer = exporterhelper.RequestSizerTypeItems
	queue.QueueSize = defaultQueueSizeItems
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.Sizer = exporterhelper.RequestSizerTypeItems
	batch.MinSize = defaultBatchMinItems
	batch.MaxSize = defaultBatchMaxItems
	queue.Batch = configoptional.Some(batch)

	retry := configretry.NewDefaultBackOffConfig()
	retry.InitialInterval = defaultRetryInitialInterval

	return &Config{
		Routing: RoutingConfig{
			Attribute:   "service.name",
			MaxProjects: defaultMaxProjects,
			IdleTimeout: defaultIdleTimeout,
			// Applied when a `discovery` block is given: sentry.io, and
			// resolved DSNs kept 10 minutes (a project's DSN rarely changes; a
			// new project is found within that).
			Discovery: configoptional.Default(defaultDiscovery()),
		},
		TracesAs:              TracesAsTransactions,
		MaxConcurrentRequests: defaultMaxConcurrentRequests,
		Memory:                MemoryConfig{MaxBytes: defaultMemoryMaxBytes},
		Pending:               PendingConfig{DrainTimeout: defaultDrainTimeout, MaxRequestsInFlight: defaultMaxRequestsInFlight},
		ErrorEvents:           ErrorEventsConfig{FromSpanExceptions: true, FromLogs: true, DedupeWindow: defaultDedupeWindow},
		Logs:                  LogsConfig{ResourceAttributes: slices.Clone(translate.DefaultLogResourceAttributes)},
		Metrics:               MetricsConfig{ResourceAttributes: slices.Clone(tracemetric.DefaultResourceAttributes), MaxStreamBytes: defaultMaxStreamBytes},
		ClientReports:         ClientReportsConfig{Enabled: true, Interval: defaultClientReportInterval},
		Assembly:              AssemblyConfig{Wait: defaultAssemblyWait, MaxBytes: defaultAssemblyMaxBytes},
		ClientConfig:          client,
		QueueConfig:           configoptional.Some(queue),
		RetryConfig:           retry,
	}
}

// defaultDiscovery is what a `discovery` block starts from.
func defaultDiscovery() DiscoveryConfig {
	return DiscoveryConfig{
		URL: defaultDiscoveryURL, CacheTTL: defaultDiscoveryTTL, ClientConfig: defaultDiscoveryClient(),
		LookupsPerMinute: defaultLookupsPerMinute, MaxCreatedPerHour: defaultMaxCreatedPerHour, MaxCreated: defaultMaxCreated,
	}
}

// defaultDiscoveryClient is the management API's client: confighttp's
// defaults, with the one timeout of a look-up's call.
func defaultDiscoveryClient() confighttp.ClientConfig {
	c := confighttp.NewDefaultClientConfig()
	c.Timeout = defaultDiscoveryTimeout
	return c
}

func (s *sharedExporters) createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	t, stop, err := newPipeline(s, set, cfg, cfg.(*Config).QueueConfig, func(p *pipeline, opts []exporterhelper.Option) (exporter.Traces, error) {
		return exporterhelper.NewTraces(ctx, set, cfg, settled(p, p.shared.exp.pushTraces), opts...)
	})
	if err != nil {
		return nil, err
	}
	return struct {
		stopFirst
		consumer.Traces
	}{stop, t}, nil
}

func (s *sharedExporters) createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	l, stop, err := newPipeline(s, set, cfg, cfg.(*Config).QueueConfig, func(p *pipeline, opts []exporterhelper.Option) (exporter.Logs, error) {
		return exporterhelper.NewLogs(ctx, set, cfg, settled(p, p.shared.exp.pushLogs), opts...)
	})
	if err != nil {
		return nil, err
	}
	return struct {
		stopFirst
		consumer.Logs
	}{stop, l}, nil
}

func (s *sharedExporters) createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	m, stop, err := newPipeline(s, set, cfg, cfg.(*Config).QueueConfig, func(p *pipeline, opts []exporterhelper.Option) (exporter.Metrics, error) {
		return exporterhelper.NewMetrics(ctx, set, cfg, settled(p, p.shared.exp.pushMetrics), opts...)
	})
	if err != nil {
		return nil, err
	}
	return struct {
		stopFirst
		consumer.Metrics
	}{stop, m}, nil
}

func (s *sharedExporters) createProfiles(ctx context.Context, set exporter.Settings, cfg component.Config) (xexporter.Profiles, error) {
	p, stop, err := newPipeline(s, set, cfg, unbatched(cfg.(*Config).QueueConfig), func(p *pipeline, opts []exporterhelper.Option) (xexporter.Profiles, error) {
		return xexporterhelper.NewProfiles(ctx, set, cfg, settled(p, p.shared.exp.pushProfiles), opts...)
	})
	if err != nil {
		return nil, err
	}
	return struct {
		stopFirst
		xconsumer.Profiles
	}{stop, p}, nil
}

// unbatched is the profiles pipeline's sending queue: the configured one
// without its batcher. exporterhelper's profiles batcher splits a request by
// samples and copies the whole dictionary into every part
// (xexporterhelper's profilesRequest.split): with 100 services' profiles in
// one request, make partition's collector held ~180 MiB of such copies
// (heap profile, 2026-12-05) and peaked at 677 MiB. A profile needs no
// batching: each becomes chunks of its own.
func unbatched(q configoptional.Optional[exporterhelper.QueueBatchConfig]) configoptional.Optional[exporterhelper.QueueBatchConfig] {
	if !q.HasValue() {
		return q
	}
	c := *q.Get()
	c.Batch = configoptional.None[exporterhelper.BatchConfig]()
	return configoptional.Some(c)
}

// newPipeline is the one path every signal's pipeline is built on: the
// shared exporter of cfg, exporterhelper's exporter of the signal (build),
// with the options every signal gets and its sending queue (the configured
// one; profiles' without its batcher, unbatched), and the pipeline's own start and
// shutdown (shared.go), so that each pipeline is counted on its own.
func newPipeline[E component.Component](s *sharedExporters, set exporter.Settings, cfg component.Config,
	queue configoptional.Optional[exporterhelper.QueueBatchConfig], build func(*pipeline, []exporterhelper.Option) (E, error),
) (E, stopFirst, error) {
	var none E
	e, err := s.acquire(cfg.(*Config), set)
	if err != nil {
		return none, stopFirst{}, err
	}
	p := &pipeline{shared: e, stopped: make(chan struct{})}
	c, err := build(p, p.options(queue))
	if err != nil {
		return none, stopFirst{}, err
	}
	return c, stopFirst{Component: c, pipeline: p}, nil
}

// stopFirst tells the shared exporter that a pipeline's shutdown began,
// before exporterhelper drains the pipeline's queue (WithShutdown runs only
// after the drain), so that once every pipeline is stopping no queued
// envelope sits in a retry backoff during the drain. A pipeline is
// struct{stopFirst; consumer.X}: Start and Shutdown from here, the rest
// from exporterhelper's exporter.
type stopFirst struct {
	component.Component
	pipeline *pipeline
}

func (s stopFirst) Shutdown(ctx context.Context) error {
	s.pipeline.beginShutdown()
	return s.Component.Shutdown(ctx)
}

// options are the exporterhelper options every signal gets, with its
// sending queue.
func (p *pipeline) options(queue configoptional.Optional[exporterhelper.QueueBatchConfig]) []exporterhelper.Option {
	return []exporterhelper.Option{
		exporterhelper.WithStart(p.start),
		exporterhelper.WithShutdown(p.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}), // translation only reads
		// The HTTP client's timeout already applies to each envelope: one timeout, not two.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		// exporterhelper's retry is off: it would re-send a whole batch, cannot
		// tell the push which attempt is the last (so give-ups could not be
		// counted), and would park rate-limited data. The exporter retries the
		// failed envelopes itself, driven by retry_on_failure.
		exporterhelper.WithRetry(configretry.BackOffConfig{Enabled: false}),
		exporterhelper.WithQueue(queue),
	}
}
