package sentryexporter

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otel-sentry/sentryexporter/internal/metadata"
)

// TestUnmarshalKeepsDefaults: a config that sets only `dsn` unmarshals to
// the defaults with that DSN (no key it leaves out loses its default, lists
// and optional sections included), and validates; without a DSN the same
// config is invalid: there is nowhere to send to.
func TestUnmarshalKeepsDefaults(t *testing.T) {
	const dsn = "https://public@o1.ingest.sentry.io/42"
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"dsn": dsn}).Unmarshal(cfg))
	want := createDefaultConfig().(*Config)
	want.DSN = dsn
	assert.Equal(t, want, cfg)
	require.NoError(t, confmap.Validate(cfg))

	cfg = NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.New().Unmarshal(cfg))
	err := confmap.Validate(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "`dsn` is required")
}

func TestUnmarshalFullConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewID(metadata.Type).String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))

	// The expected value is a literal: a changed default cannot hide here.
	client := confighttp.NewDefaultClientConfig()
	client.Endpoint = "https://relay.internal:3000/prefix"
	client.Timeout = 10 * time.Second
	client.Compression = configcompression.TypeZstd
	client.Headers = configopaque.MapList{{Name: "x-team", Value: "gateway"}}
	q := exporterhelper.NewDefaultQueueConfig()
	q.NumConsumers = 4
	q.QueueSize = 50000
	q.Sizer = exporterhelper.RequestSizerTypeItems
	batch := exporterhelper.NewDefaultBatchConfig() // sending_queue::batch is not in the file: our default stays
	batch.Sizer = exporterhelper.RequestSizerTypeItems
	batch.MinSize, batch.MaxSize = 1_000, 2_000
	q.Batch = configoptional.Some(batch)
	want := &Config{
		DSN: "https://public:secret@o1.ingest.sentry.io/sentry/42",
		Routing: RoutingConfig{
			Attribute:   "k8s.namespace.name",
			MaxProjects: 10,
			IdleTimeout: 30 * time.Minute,
			DSNs:        map[string]configopaque.String{"payments": "https://key2@o1.ingest.sentry.io/2"},
			Discovery: configoptional.Some(DiscoveryConfig{
				URL: "https://sentry.example.com", OrgSlug: "my-org", AuthToken: "sntrys_token",
				AutoCreateProjects: true, Team: "platform", CacheTTL: 5 * time.Minute,
				ClientConfig: defaultDiscoveryClient(), LookupsPerMinute: 60, MaxCreatedPerHour: 10, MaxCreated: 100,
			}),
		},
		Environment:           "staging",
		Release:               "checkout@1.2.3",
		TracesAs:              TracesAsSpans,
		MaxConcurrentRequests: 32,
		SendDefaultPII:        true,
		Logs:                  LogsConfig{ResourceAttributes: []string{"service.name", "k8s.pod.name"}},
		Metrics:               MetricsConfig{ResourceAttributes: []string{"service.name", "k8s.deployment.name"}, MaxStreamBytes: 4 << 20},
		Memory:                MemoryConfig{MaxBytes: 80 << 20},
		Pending:               PendingConfig{DrainTimeout: 3 * time.Second, MaxRequestsInFlight: 64},
		ErrorEvents:           ErrorEventsConfig{DedupeWindow: 2 * time.Second},
		ClientReports:         ClientReportsConfig{Interval: 10 * time.Second},
		Assembly:              AssemblyConfig{Wait: 20 * time.Second, MaxBytes: 32 << 20},
		Profiles:              ProfilesConfig{InAppInclude: []string{"com.acme."}, InAppExclude: []string{"com.acme.gen.", "**/internal/gen/**"}, AllProcessesProfiledBy: "container.id"},
		ClientConfig:          client,
		QueueConfig:           configoptional.Some(q),
		RetryConfig: configretry.BackOffConfig{
			Enabled: true, InitialInterval: time.Second, MaxInterval: 10 * time.Second,
			MaxElapsedTime: time.Minute, Multiplier: 2, RandomizationFactor: 0.1,
		},
	}
	assert.Equal(t, want, cfg)
}

// TestUnmarshalLogResourceAttributes checks that a list replaces the default
// one instead of merging into it, and that [] really means none.
func TestUnmarshalLogResourceAttributes(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  map[string]any
		want []string
	}{
		{"default", map[string]any{}, []string{"service.name", "service.namespace"}},
		{"shorter list", map[string]any{"logs": map[string]any{"resource_attributes": []any{"k8s.pod.name"}}}, []string{"k8s.pod.name"}},
		{"none", map[string]any{"logs": map[string]any{"resource_attributes": []any{}}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			require.NoError(t, confmap.NewFromStringMap(tt.raw).Unmarshal(cfg))
			assert.ElementsMatch(t, tt.want, cfg.Logs.ResourceAttributes)
		})
	}
}

func TestUnmarshalRoutingConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	load := func(name string) *Config {
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		require.NoError(t, err)
		cfg := NewFactory().CreateDefaultConfig().(*Config)
		require.NoError(t, sub.Unmarshal(cfg))
		require.NoError(t, confmap.Validate(cfg), "routing covers everything: no `dsn` needed")
		return cfg
	}
	r := load("routing").Routing
	assert.Equal(t, "k8s.namespace.name", r.Attribute)
	assert.Equal(t, 10, r.MaxProjects)
	assert.Equal(t, map[string]configopaque.String{
		"payments": "https://key2@o1.ingest.sentry.io/2", "search": "https://key3@o1.ingest.sentry.io/3",
	}, r.DSNs)
	d := load("discovery").Routing
	require.True(t, d.Discovery.HasValue())
	assert.Equal(t, DiscoveryConfig{
		URL: "https://sentry.io", OrgSlug: "my-org", AuthToken: "sntrys_token",
		AutoCreateProjects: true, Team: "platform", CacheTTL: 5 * time.Minute,
		ClientConfig: defaultDiscoveryClient(), LookupsPerMinute: 60, MaxCreatedPerHour: 10, MaxCreated: 100,
	}, *d.Discovery.Get())
	insecure := load("discovery_insecure").Routing.Discovery.Get()
	assert.Equal(t, "http://sentry.internal", insecure.URL, "plain http, explicitly allowed")
	assert.Equal(t, configopaque.MapList{{Name: "X-Org-Gate", Value: "discovery-only"}}, insecure.ClientConfig.Headers,
		"discovery's own headers, not the envelopes'")
	assert.Equal(t, "service.name", d.Attribute, "default attribute")
}

func TestConfigRejected(t *testing.T) {
	tests := []struct {
		file, id, wantErr string
	}{
		{"config.yaml", "no_dsn", "`dsn` is required"},
		{"config.yaml", "bad_traces_as", "`traces_as` must be"},
		{"bad_dsn.yaml", "scheme", "`dsn` is not a valid Sentry DSN: the scheme must be http or https"},
		{"bad_dsn.yaml", "no_public_key", "`dsn` is not a valid Sentry DSN: it has no public key"},
		{"bad_dsn.yaml", "project_not_numeric", "`dsn` is not a valid Sentry DSN: the project id (last path segment) must be numeric"},
		{"bad_dsn.yaml", "no_project", "`dsn` is not a valid Sentry DSN: it has no project id"},
		{"bad_dsn.yaml", "not_a_url", "`dsn` is not a valid Sentry DSN"},
		{"bad_dsn.yaml", "concurrency", "`max_concurrent_requests` must be at least 1"},
		{"bad_dsn.yaml", "client_reports", "client_reports: `interval` must be positive"},
		{"bad_dsn.yaml", "dedupe_window", "error_events: `dedupe_window` must not be negative"},
		{"bad_dsn.yaml", "assembly_wait", "assembly: `wait` must not be negative (0 turns assembly off)"},
		{"bad_dsn.yaml", "assembly_max_bytes", "assembly: `max_bytes` must be at least 1 when `wait` is set"},
		{"bad_dsn.yaml", "in_app_empty", "profiles: `in_app_exclude[0]` \"\": must not be empty"},
		{"bad_dsn.yaml", "profiled_by", "profiles: `all_processes_profiled_by` must be one of [container.id k8s.pod.uid host.name host.id], not \"service.name\""},
		{"bad_dsn.yaml", "endpoint", "`endpoint` must be an http or https URL"},
		{"bad_dsn.yaml", "routing_bad_dsn", "routing: `dsns::payments` is not a valid Sentry DSN: the project id (last path segment) must be numeric"},
		{"bad_dsn.yaml", "routing_too_many", "`routing::dsns` has 1 entries and `dsn` adds one project: 2 projects, more than `routing::max_projects` (1) allows"},
		{"bad_dsn.yaml", "idle_timeout_too_short", "routing: `idle_timeout` must be at least 1s"},
		{"bad_dsn.yaml", "discovery_incomplete", "routing::discovery: `url` must be an http or https URL"},
		{"bad_dsn.yaml", "discovery_incomplete", "`org_slug` is required"},
		{"bad_dsn.yaml", "discovery_incomplete", "`auth_token` is required"},
		{"bad_dsn.yaml", "discovery_plain_http", "routing::discovery: `url` is plain http: the auth token would cross the network in clear (use https, or set `allow_insecure_http: true`)"},
		{"bad_dsn.yaml", "discovery_endpoint", "routing::discovery: `endpoint` is not used by discovery: set `url`"},
		{"bad_dsn.yaml", "pending_zero", "pending: `drain_timeout` must not be negative; `max_requests_in_flight` must be at least 1"},
		{"bad_dsn.yaml", "stream_state_too_small", "metrics: `max_stream_bytes` must be at least 65536 (64 KiB)"},
		{"bad_dsn.yaml", "memory_too_small", "memory: `max_bytes` must be at least 1048576 (1 MiB)"},
		{"bad_dsn.yaml", "assembly_over_half_memory", "`assembly::max_bytes` (67108864) must be at most half of `memory::max_bytes` (67108864)"},
		{"bad_dsn.yaml", "durable_with_assembly", "`sending_queue::storage` needs `assembly::wait: 0`: held spans live only in memory"},
		{"bad_dsn.yaml", "durable_with_dedupe", "`sending_queue::storage` needs `error_events::dedupe_window: 0` (it is 5s): held error events live only in memory"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			cm, err := confmaptest.LoadConf(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.id).String())
			require.NoError(t, err)
			cfg := NewFactory().CreateDefaultConfig()
			err = sub.Unmarshal(&cfg)
			if err == nil {
				err = confmap.Validate(cfg)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.NotContains(t, err.Error(), "secretkey123", "an error must never echo the DSN key")
		})
	}
}

// TestConfigMaxProjectsCount: routing::max_projects counts one project per
// routing::dsns entry, and the `dsn` project only when `dsn` is set; the
// error says what it counted.
func TestConfigMaxProjectsCount(t *testing.T) {
	dsns := func(n int) map[string]configopaque.String {
		m := make(map[string]configopaque.String, n)
		for i := range n {
			m[fmt.Sprintf("svc-%d", i)] = configopaque.String(fmt.Sprintf("https://secretkey123@o1.ingest.sentry.io/%d", i+1))
		}
		return m
	}
	tests := []struct {
		name    string
		entries int
		dsn     bool
		wantErr string // "" when accepted
	}{
		{"exactly max_projects entries, no dsn", 100, false, ""},
		{"one under, with dsn", 99, true, ""},
		{"exactly max_projects entries and dsn", 100, true, "`routing::dsns` has 100 entries and `dsn` adds one project: 101 projects, more than `routing::max_projects` (100) allows"},
		{"one over, no dsn", 101, false, "`routing::dsns` has 101 entries: 101 projects, more than `routing::max_projects` (100) allows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			cfg.Routing.DSNs = dsns(tt.entries)
			cfg.Routing.MaxProjects = 100
			if tt.dsn {
				cfg.DSN = "https://secretkey123@o1.ingest.sentry.io/999"
			}
			err := cfg.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.NotContains(t, err.Error(), "secretkey123")
		})
	}
}

// TestConfigPrintsDSNRedacted: a config printed or marshaled (as the
// collector does for its effective config) shows no DSN key, neither the
// `dsn`'s nor a routing entry's.
func TestConfigPrintsDSNRedacted(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.DSN = "https://secretkey123@o1.ingest.sentry.io/1"
	cfg.Routing.DSNs = map[string]configopaque.String{"payments": "https://routedkey456@o1.ingest.sentry.io/2"}
	conf := confmap.New()
	require.NoError(t, conf.Marshal(cfg))
	for _, printed := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", *cfg), fmt.Sprint(conf.ToStringMap())} {
		assert.NotContains(t, printed, "secretkey123")
		assert.NotContains(t, printed, "routedkey456")
	}
	assert.Contains(t, conf.ToStringMap(), "dsn", "the marshaled config has the key, redacted")
}
