package sentryexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otel-sentry/sentryexporter/internal/metadata"
)

// TestCreateDefaultConfig compares the whole default config with a literal:
// every default of ours is a number here, so a changed default fails this
// test and is a decision, not a side effect. The library constructors give
// the collector's own defaults, which we keep where a field is not listed.
func TestCreateDefaultConfig(t *testing.T) {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 30 * time.Second               // one envelope, its answer included
	client.Compression = configcompression.TypeZstd // Relay takes zstd; gzip per project as a fallback
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.Sizer = exporterhelper.RequestSizerTypeItems // bounded by items, so memory is bounded
	queue.QueueSize = 50_000
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.Sizer = exporterhelper.RequestSizerTypeItems
	batch.MinSize, batch.MaxSize = 1_000, 2_000
	queue.Batch = configoptional.Some(batch)
	retry := configretry.NewDefaultBackOffConfig()
	retry.InitialInterval = time.Second // a waiting envelope holds no worker: retry early

	want := &Config{
		Routing: RoutingConfig{
			Attribute:   "service.name",
			MaxProjects: 100,
			IdleTimeout: time.Hour,
			Discovery: configoptional.Default(DiscoveryConfig{
				URL: "https://sentry.io", CacheTTL: 10 * time.Minute, ClientConfig: defaultDiscoveryClient(),
				LookupsPerMinute: 60, MaxCreatedPerHour: 10, MaxCreated: 100,
			}),
		},
		TracesAs:              TracesAsTransactions, // accepted by every Sentry
		MaxConcurrentRequests: 128,
		Logs:                  LogsConfig{ResourceAttributes: []string{"service.name", "service.namespace"}}, // billed by bytes
		Metrics:               MetricsConfig{ResourceAttributes: []string{"service.name", "service.namespace"}, MaxStreamBytes: 8 << 20},
		Memory:                MemoryConfig{MaxBytes: 96 << 20}, // a 100-project gateway under 512 MiB RSS
		Pending:               PendingConfig{DrainTimeout: 5 * time.Second, MaxRequestsInFlight: 512},
		ErrorEvents:           ErrorEventsConfig{FromSpanExceptions: true, FromLogs: true, DedupeWindow: 5 * time.Second},
		ClientReports:         ClientReportsConfig{Enabled: true, Interval: 30 * time.Second}, // sentry-go's tick
		Assembly:              AssemblyConfig{Wait: 30 * time.Second, MaxBytes: 48 << 20},
		ClientConfig:          client,
		QueueConfig:           configoptional.Some(queue),
		RetryConfig:           retry,
	}
	got := createDefaultConfig().(*Config)
	assert.Equal(t, want, got)
	// What the literal leaves at the zero value, said of the default itself:
	assert.Empty(t, got.DSN, "no DSN: the user must name a project")
	assert.False(t, got.SendDefaultPII, "as in the SDKs: no cookies, IP addresses or user data by default")
	assert.False(t, got.QueueConfig.Get().BlockOnOverflow, "a full queue refuses data, it never blocks the receivers")
	assert.Error(t, got.Validate(), "invalid until a DSN is given")
}

func TestCreateExporters(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.DSN = "https://public@testing.invalid/1"
	set := exportertest.NewNopSettings(metadata.Type)
	te, err := f.CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	le, err := f.CreateLogs(t.Context(), set, cfg)
	require.NoError(t, err)
	me, err := f.CreateMetrics(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Shutdown(t.Context()))
	require.NoError(t, le.Shutdown(t.Context()))
	require.NoError(t, me.Shutdown(t.Context()))

	cfg.DSN = "https://secretkey123@o1.ingest.sentry.io/notanumber"
	_, err = f.CreateTraces(t.Context(), set, cfg)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secretkey123")
}
