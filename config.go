// The configuration and its validation: a bad value is an error at config
// time, never a surprise at run time.

package sentryexporter

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otel-sentry/sentryexporter/internal/dsn"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
)

// TracesAs selects the Sentry item type that spans are sent as.
type TracesAs string

const (
	// TracesAsTransactions sends each segment of a trace as one transaction event:
	// the most broadly supported form (sentry.io, self-hosted, older Relays).
	TracesAsTransactions TracesAs = "transactions"
	// TracesAsSpans sends span v2 containers (one trace per envelope, with a DSC
	// `trace` header). Needs the org feature standalone-span-ingestion.
	TracesAsSpans TracesAs = "spans"
)

var _ encoding.TextUnmarshaler = (*TracesAs)(nil)

// UnmarshalText rejects anything but "transactions" and "spans" while the YAML is decoded.
func (t *TracesAs) UnmarshalText(text []byte) error {
	switch v := TracesAs(text); v {
	case TracesAsTransactions, TracesAsSpans:
		*t = v
		return nil
	default:
		return fmt.Errorf("`traces_as` must be %q or %q, got %q", TracesAsTransactions, TracesAsSpans, string(text))
	}
}

// ErrorEventsConfig selects which OTel data also becomes Sentry error events (Issues).
type ErrorEventsConfig struct {
	// FromSpanExceptions turns span events named "exception" into error events
	// linked to their trace. Default true.
	FromSpanExceptions bool `mapstructure:"from_span_exceptions"`
	// FromLogs turns log records carrying exception.* attributes into error
	// events; the record is still sent as a log. Default true.
	FromLogs bool `mapstructure:"from_logs"`
	// DedupeWindow is how long an error event with a trace and span id waits
	// for the same exception from the other pipeline (span event or log
	// record), so that the two become one event. Used only when both sources
	// are on; 0 turns it off. Default 5s.
	DedupeWindow time.Duration `mapstructure:"dedupe_window"`

	_ struct{}
}

// ClientReportsConfig controls the client reports that tell Sentry what this
// exporter dropped locally.
type ClientReportsConfig struct {
	// Enabled sends client reports. Default true.
	Enabled bool `mapstructure:"enabled"`
	// Interval between standalone client reports; pending counts also ride
	// along on every outgoing envelope and go out at shutdown. Default 30s.
	Interval time.Duration `mapstructure:"interval"`

	_ struct{}
}

// AssemblyConfig controls trace assembly: a span whose local root has not
// arrived waits for it, so that a request split across batches becomes one
// transaction (docs/assembly.md).
type AssemblyConfig struct {
	// Wait is how long a span waits for its local root, from its arrival;
	// then it is sent without it (counted as a fragment, reason expired).
	// 0 turns assembly off. Default 30s.
	Wait time.Duration `mapstructure:"wait"`
	// MaxBytes bounds the (estimated) bytes of spans held, over all
	// projects, each its share (routing::max_projects); when full, the oldest
	// held spans of the project furthest past its share are sent without
	// their root (reason memory_bound); at most half of memory::max_bytes.
	// Default 48 MiB.
	MaxBytes int64 `mapstructure:"max_bytes"`

	_ struct{}
}

// LogsConfig controls what each log record carries.
type LogsConfig struct {
	// ResourceAttributes lists the resource attributes copied onto every log
	// record (Sentry bills logs by bytes). Default: service.name,
	// service.namespace (environment, release and host are always on the
	// record as sentry.environment, sentry.release, server.address). [] sends none; ["*"]
	// sends all of them, process.command_line and the like included.
	ResourceAttributes []string `mapstructure:"resource_attributes"`

	_ struct{}
}

// MetricsConfig controls what OTLP metrics become (docs/mapping.md#metrics).
type MetricsConfig struct {
	// ResourceAttributes lists the resource attributes copied onto every
	// metric, as logs::resource_attributes does for logs. Default:
	// service.name, service.namespace. [] sends none; ["*"] all of them.
	ResourceAttributes []string `mapstructure:"resource_attributes"`
	// MaxStreamBytes bounds the state of cumulative streams (each one's
	// previous point, 160 bytes a stream), counted in memory::max_bytes,
	// each project its share (routing::max_projects); when full, the project
	// furthest past its share evicts the stream it used longest ago, whose
	// next point is counted (no_baseline). At most a quarter of
	// memory::max_bytes is used, whatever this says. Default 8 MiB, about
	// 52,000 streams.
	MaxStreamBytes int64 `mapstructure:"max_stream_bytes"`

	_ struct{}
}

// RoutingConfig sends each resource to its own Sentry project.
type RoutingConfig struct {
	// Attribute is the resource attribute whose value picks the project.
	// Default service.name.
	Attribute string `mapstructure:"attribute"`
	// DSNs maps an attribute value to the DSN of its project. Values without
	// an entry go to discovery, if configured, else to `dsn`.
	DSNs map[string]configopaque.String `mapstructure:"dsns"`
	// Discovery resolves values without an entry through Sentry's management API.
	Discovery configoptional.Optional[DiscoveryConfig] `mapstructure:"discovery"`
	// MaxProjects caps the Sentry projects (distinct DSNs) one exporter holds,
	// each with its limits, client reports and connection pool, and its
	// share (1 / max_projects) of every bound they share. Default 100.
	MaxProjects int `mapstructure:"max_projects"`
	// IdleTimeout retires a discovered project that nothing was routed to
	// for this long, once it holds nothing: its slot of max_projects is
	// freed, and its next item discovers it again. Default 1h.
	IdleTimeout time.Duration `mapstructure:"idle_timeout"`
	// Sender binds each request's sender to the projects it may write to
	// (docs/routing.md#senders). Off unless a key is set.
	Sender SenderConfig `mapstructure:"sender"`

	_ struct{}
}

// SenderConfig names each request's sender, from what the receiver and its
// auth extension established, never from the data: a resource attribute
// is whatever the sender wrote.
type SenderConfig struct {
	// MetadataKey is the client metadata key that names the sender (a
	// header the receiver keeps with `include_metadata: true`, set or
	// checked by what stands in front of it). The sending queue's batches
	// must be partitioned by it (sending_queue::batch::partition::metadata_keys),
	// and a persistent queue keeps it.
	MetadataKey string `mapstructure:"metadata_key"`
	// AuthAttribute is the attribute of the receiver's auth extension that
	// names the sender (oidc's `subject`, basicauth's `username`...). It
	// survives neither batching nor a persistent queue: with it, the
	// sending queue must have neither `batch` nor `storage`.
	AuthAttribute string `mapstructure:"auth_attribute"`
	// Projects lists, per sender, the routing values (routing::attribute's
	// values, or their project slugs) it may write to; "*" allows any. A
	// resource outside its sender's list, and every resource of a request
	// with no sender or one not listed, is dropped (not_allowed). Empty:
	// the sender's name itself is the routing value, and resources'
	// attributes are not read.
	Projects map[string][]string `mapstructure:"projects"`

	_ struct{}
}

// on reports whether senders are bound.
func (s *SenderConfig) on() bool { return s.MetadataKey != "" || s.AuthAttribute != "" }

// Validate checks the sender keys.
func (s *SenderConfig) Validate() error {
	var p problems
	if s.MetadataKey != "" && s.AuthAttribute != "" {
		p.add("set one of `metadata_key` and `auth_attribute`, not both")
	}
	if !s.on() && len(s.Projects) > 0 {
		p.add("`projects` needs `metadata_key` or `auth_attribute` to name the sender")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Projects)) {
		if len(s.Projects[name]) == 0 {
			p.add(fmt.Sprintf("`projects::%s` is empty: list its values, or leave the sender out", name))
		}
	}
	return p.err()
}

// DiscoveryConfig resolves a project slug (the attribute value, slugified)
// to its DSN through Sentry's management API, as the contrib exporter does.
type DiscoveryConfig struct {
	// URL of Sentry: https://sentry.io (the default), or a self-hosted Sentry.
	URL string `mapstructure:"url"`
	// OrgSlug is the organization the projects belong to.
	OrgSlug string `mapstructure:"org_slug"`
	// AuthToken is an auth token with project:read (and project:write for
	// auto_create_projects). Prints as [REDACTED].
	AuthToken configopaque.String `mapstructure:"auth_token"`
	// AutoCreateProjects creates a missing project in Team.
	AutoCreateProjects bool `mapstructure:"auto_create_projects"`
	// Team owning created projects; empty: the organization's first team.
	Team string `mapstructure:"team"`
	// CacheTTL is how long a resolved DSN is kept before it is looked up again. Default 10m.
	CacheTTL time.Duration `mapstructure:"cache_ttl"`
	// LookupsPerMinute bounds, per sender (its routing::sender name;
	// unbound, its client address, one budget for requests without), the
	// look-ups that reach the management API; past it that sender's new values are
	// counted unroutable for a while, and the API's own rate limit, which
	// stops discovery for every sender, is not reached. Default 60.
	LookupsPerMinute int `mapstructure:"lookups_per_minute"`
	// MaxCreatedPerHour and MaxCreated bound the projects
	// auto_create_projects creates, per hour and over the exporter's
	// lifetime; each creation is logged. Defaults 10 and 100.
	MaxCreatedPerHour int `mapstructure:"max_created_per_hour"`
	MaxCreated        int `mapstructure:"max_created"`
	// AllowInsecureHTTP lets `url` be plain http://: the auth token (with
	// project:write) would cross the network in clear. Default false.
	AllowInsecureHTTP bool `mapstructure:"allow_insecure_http"`
	// ClientConfig is the management API's own HTTP client (timeout, tls,
	// proxy_url, headers, auth...): never the envelopes' settings, so that
	// neither their `headers` nor their `auth` reach sentry.io. `endpoint`
	// is not used (`url` is).
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`

	_ struct{}
}

// MemoryConfig bounds what the exporter holds on data's way to Sentry.
type MemoryConfig struct {
	// MaxBytes is the one memory budget for everything the exporter holds:
	// envelopes queued, waiting to retry and in flight (every copy of a
	// request's body, reserved before each attempt), spans held for trace
	// assembly, error events held in the dedupe window and cumulative metric
	// streams' previous points. Each project may hold its share (max_bytes /
	// routing::max_projects) whatever the others hold, and more while there
	// is room; when it is full, the oldest envelopes not in flight are
	// dropped and counted (queue_overflow), first those of the projects
	// furthest past their share. Default 96 MiB (docs/memory.md).
	MaxBytes int64 `mapstructure:"max_bytes"`

	_ struct{}
}

// PendingConfig bounds the requests in flight and the time left to send
// when shutdown begins.
type PendingConfig struct {
	// DrainTimeout is how long, once shutdown begins, pending envelopes may
	// still be sent; then requests in flight are cancelled and what is left is
	// counted as network_error. Default 5s.
	DrainTimeout time.Duration `mapstructure:"drain_timeout"`
	// MaxRequestsInFlight caps the requests in flight over all projects;
	// each project's own cap is max_concurrent_requests, adapted to how its
	// Sentry answers (docs/memory.md). Default 512.
	MaxRequestsInFlight int `mapstructure:"max_requests_in_flight"`

	_ struct{}
}

// Config defines the configuration of the Sentry exporter.
type Config struct {
	// DSN of the Sentry project that receives the envelopes. Required unless
	// routing covers every resource. Prints as [REDACTED].
	DSN configopaque.String `mapstructure:"dsn"`

	// Routing sends each resource to its own project (by a resource attribute).
	Routing RoutingConfig `mapstructure:"routing"`

	// Environment is written on every item. Empty: taken per resource from
	// deployment.environment.name, then deployment.environment.
	Environment string `mapstructure:"environment"`
	// Release is written on every item. Empty: taken per resource from service.version.
	Release string `mapstructure:"release"`

	// TracesAs is "transactions" (default) or "spans" (span v2 containers).
	TracesAs TracesAs `mapstructure:"traces_as"`

	// MaxConcurrentRequests caps the envelopes in flight to each Sentry project
	// at once, across all queue consumers. Default 128.
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`

	// SendDefaultPII adds what Sentry's SDKs add with send_default_pii: the
	// Cookie header and cookies, the values of IP-address headers
	// (X-Forwarded-For, X-Real-IP, ...), and the client address as
	// request.env.REMOTE_ADDR. Default false. Authorization-like headers and
	// query parameters stay [Filtered] either way.
	SendDefaultPII bool `mapstructure:"send_default_pii"`

	// Logs controls what each log record carries.
	Logs LogsConfig `mapstructure:"logs"`

	// Metrics controls what each metric carries and the cumulative streams' state.
	Metrics MetricsConfig `mapstructure:"metrics"`

	// Memory is the one memory budget of everything the exporter holds.
	Memory MemoryConfig `mapstructure:"memory"`

	// Pending bounds the requests in flight and the drain at shutdown.
	Pending PendingConfig `mapstructure:"pending"`

	// ErrorEvents selects the sources of Sentry error events.
	ErrorEvents ErrorEventsConfig `mapstructure:"error_events"`

	// ClientReports controls client reports of local drops.
	ClientReports ClientReportsConfig `mapstructure:"client_reports"`

	// Assembly holds spans until their local root arrives.
	Assembly AssemblyConfig `mapstructure:"assembly"`

	// Profiles controls how profile chunks' frames are read.
	Profiles ProfilesConfig `mapstructure:"profiles"`

	// ClientConfig holds the HTTP client settings (timeout, tls, proxy_url,
	// headers, compression, keepalive...). `endpoint`, when set, replaces the
	// DSN's scheme, host and path prefix (for a Relay or proxy in between);
	// /api/<project>/envelope/ is still appended.
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`
	// QueueConfig is the exporterhelper sending queue. Defaults bound it by items.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	// RetryConfig drives the exporter's own per-envelope retry of network errors
	// and 5xx answers. It never applies to rate-limited items.
	RetryConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the keys of the top level and those that involve more
// than one sub-config. confmap.Validate calls it, and the Validate of each
// sub-config (and of the embedded configs) on its own, prefixing their
// errors with their key path (`routing: ...`); every problem is reported at
// once, and no error ever repeats a DSN's key.
func (cfg *Config) Validate() error {
	var errs []error
	routed := len(cfg.Routing.DSNs) > 0 || cfg.Routing.Discovery.HasValue()
	if cfg.DSN == "" && !routed {
		errs = append(errs, errors.New("`dsn` is required (or `routing::dsns` / `routing::discovery`)"))
	} else if cfg.DSN != "" {
		if _, err := dsn.Parse(string(cfg.DSN)); err != nil {
			errs = append(errs, err) // dsn.Parse's errors never echo the key
		}
	}
	if cfg.Routing.MaxProjects >= 1 {
		if err := cfg.Routing.countProjects(cfg.DSN != ""); err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.ClientConfig.Endpoint != "" {
		if _, err := dsn.ParseEndpoint(cfg.ClientConfig.Endpoint); err != nil {
			errs = append(errs, err)
		}
	}
	switch cfg.TracesAs {
	case TracesAsTransactions, TracesAsSpans:
	default:
		errs = append(errs, fmt.Errorf("`traces_as` must be %q or %q", TracesAsTransactions, TracesAsSpans))
	}
	if cfg.MaxConcurrentRequests < 1 {
		errs = append(errs, errors.New("`max_concurrent_requests` must be at least 1"))
	}
	if err := cfg.senderSurvivesQueue(); err != nil {
		errs = append(errs, err)
	}
	if a := cfg.Assembly; a.Wait > 0 && cfg.Memory.MaxBytes >= minMemoryBytes && a.MaxBytes > cfg.Memory.MaxBytes/2 {
		errs = append(errs, fmt.Errorf("`assembly::max_bytes` (%d) must be at most half of `memory::max_bytes` (%d): held spans count against it, and envelopes need the rest", a.MaxBytes, cfg.Memory.MaxBytes))
	}
	if err := cfg.validateDurable(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// senderSurvivesQueue checks that the sender's name reaches the push: the
// batcher merges requests keeping only the metadata keys it partitions by,
// and a persistent queue keeps metadata but not the auth extension's data.
func (cfg *Config) senderSurvivesQueue() error {
	s := cfg.Routing.Sender
	if !s.on() || !cfg.QueueConfig.HasValue() {
		return nil
	}
	q := cfg.QueueConfig.Get()
	batched := q.Batch.HasValue()
	if s.AuthAttribute != "" {
		if batched || q.StorageID != nil {
			return errors.New("`routing::sender::auth_attribute` does not survive `sending_queue::batch` or `sending_queue::storage` (they keep only client metadata): turn both off, or name the sender by `metadata_key`")
		}
		return nil
	}
	if batched && !slices.ContainsFunc(q.Batch.Get().Partition.MetadataKeys, func(k string) bool { return strings.EqualFold(k, s.MetadataKey) }) {
		return fmt.Errorf("`routing::sender::metadata_key` (%s) must be in `sending_queue::batch::partition::metadata_keys`: otherwise a batch merges senders and loses the key", s.MetadataKey)
	}
	return nil
}

// Validate checks the error-event keys.
func (e *ErrorEventsConfig) Validate() error {
	if e.DedupeWindow < 0 {
		return errors.New("`dedupe_window` must not be negative")
	}
	return nil
}

// Validate checks the client-report keys.
func (c *ClientReportsConfig) Validate() error {
	if c.Enabled && c.Interval <= 0 {
		return errors.New("`interval` must be positive")
	}
	return nil
}

// minStreamBytes holds a few streams per shard of the stream state.
const minStreamBytes = 64 << 10

// Validate checks the metrics keys.
func (m *MetricsConfig) Validate() error {
	if m.MaxStreamBytes < minStreamBytes {
		return fmt.Errorf("`max_stream_bytes` must be at least %d (64 KiB)", minStreamBytes)
	}
	return nil
}

// ProfilesConfig says which frames are the application's, as the SDKs'
// in-app includes and excludes do; both win over each runtime's own rule
// (docs/mapping.md, "Profiles"), an include over an exclude.
type ProfilesConfig struct {
	// InAppInclude: module prefixes (com.acme., github.com/acme/) or, with
	// a `*`, path globs (/srv/app/**) of application code.
	InAppInclude []string `mapstructure:"in_app_include"`
	// InAppExclude: the same, of library code.
	InAppExclude []string `mapstructure:"in_app_exclude"`
	// AllProcessesProfiledBy: one of profilechunk.SharedIdentities, set
	// when every process whose traces carry it is profiled and its
	// profiles carry it too (the eBPF profiler on every node). A chunk's
	// profiler_id is then derived from it alone, and a transaction whose
	// resource carries it names that profiler on every replica, seen its
	// chunks or not. "" (default): only profilers whose chunks this
	// replica sent are named.
	AllProcessesProfiledBy string `mapstructure:"all_processes_profiled_by"`

	_ struct{}
}

// Validate checks that every entry is a prefix or a valid glob, and the
// shared identity.
func (p *ProfilesConfig) Validate() error {
	if _, err := profilechunk.NewInApp(p.InAppInclude, p.InAppExclude); err != nil {
		return err
	}
	if p.AllProcessesProfiledBy != "" && !slices.Contains(profilechunk.SharedIdentities[:], p.AllProcessesProfiledBy) {
		return fmt.Errorf("`all_processes_profiled_by` must be one of %v, not %q", profilechunk.SharedIdentities, p.AllProcessesProfiledBy)
	}
	return nil
}

// Validate checks the assembly keys.
func (a *AssemblyConfig) Validate() error {
	var p problems
	if a.Wait < 0 {
		p.add("`wait` must not be negative (0 turns assembly off)")
	}
	if a.Wait > 0 && a.MaxBytes < 1 {
		p.add("`max_bytes` must be at least 1 when `wait` is set")
	}
	return p.err()
}

// Validate checks the routing keys; how many projects routing and `dsn`
// make together is checked by Config.Validate.
func (r *RoutingConfig) Validate() error {
	var p problems
	if r.Attribute == "" {
		p.add("`attribute` must not be empty")
	}
	if r.MaxProjects < 1 {
		p.add("`max_projects` must be at least 1")
	}
	if r.IdleTimeout < time.Second {
		p.add("`idle_timeout` must be at least 1s")
	}
	for _, value := range slices.Sorted(maps.Keys(r.DSNs)) {
		if _, err := dsn.Parse(string(r.DSNs[value])); err != nil {
			// name the table key, never the DSN's key
			why := "it does not parse"
			if de, ok := errors.AsType[*dsn.Error](err); ok {
				why = de.Problem
			}
			p.add(fmt.Sprintf("`dsns::%s` is not a valid Sentry DSN: %s", value, why))
		}
	}
	return p.err()
}

// Validate checks the discovery keys (only when discovery is configured).
func (d *DiscoveryConfig) Validate() error {
	var p problems
	if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add("`url` must be an http or https URL")
	} else if u.Scheme == "http" && !d.AllowInsecureHTTP {
		p.add("`url` is plain http: the auth token would cross the network in clear (use https, or set `allow_insecure_http: true`)")
	}
	if d.ClientConfig.Endpoint != "" {
		p.add("`endpoint` is not used by discovery: set `url`")
	}
	if d.OrgSlug == "" {
		p.add("`org_slug` is required")
	}
	if d.AuthToken == "" {
		p.add("`auth_token` is required")
	}
	if d.CacheTTL <= 0 {
		p.add("`cache_ttl` must be positive")
	}
	if d.LookupsPerMinute < 1 || d.MaxCreatedPerHour < 0 || d.MaxCreated < 0 {
		p.add("`lookups_per_minute` must be at least 1, `max_created_per_hour` and `max_created` not negative")
	}
	return p.err()
}

// countProjects refuses more static projects than max_projects: one per
// routing::dsns entry, plus the `dsn` project only when `dsn` is set. Entries
// sharing a DSN share a project at run time; here each entry counts, so that
// the bound never depends on comparing keys.
func (r *RoutingConfig) countProjects(withDefault bool) error {
	n := len(r.DSNs)
	if withDefault {
		n++
	}
	if n <= r.MaxProjects {
		return nil
	}
	if withDefault {
		return fmt.Errorf("`routing::dsns` has %d entries and `dsn` adds one project: %d projects, more than `routing::max_projects` (%d) allows", len(r.DSNs), n, r.MaxProjects)
	}
	return fmt.Errorf("`routing::dsns` has %d entries: %d projects, more than `routing::max_projects` (%d) allows", len(r.DSNs), n, r.MaxProjects)
}

// Validate checks the request budget and the drain.
func (c *PendingConfig) Validate() error {
	var p problems
	if c.DrainTimeout < 0 {
		p.add("`drain_timeout` must not be negative")
	}
	if c.MaxRequestsInFlight < 1 {
		p.add("`max_requests_in_flight` must be at least 1")
	}
	return p.err()
}

// problems are what one sub-config's Validate found: one error of one line,
// the problems joined by "; ", so that confmap's key-path prefix
// ("pending: ...") stands before every one of them.
type problems []string

func (p *problems) add(problem string) { *p = append(*p, problem) }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return errors.New(strings.Join(p, "; "))
}

// minMemoryBytes is the smallest memory budget that still lets a project
// hold a few envelopes: below it, nearly every envelope would be dropped.
const minMemoryBytes = 1 << 20

// Validate checks the memory budget.
func (m *MemoryConfig) Validate() error {
	if m.MaxBytes < minMemoryBytes {
		return fmt.Errorf("`max_bytes` must be at least %d (1 MiB)", minMemoryBytes)
	}
	return nil
}
