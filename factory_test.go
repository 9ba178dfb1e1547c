package sentryexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otel-sentry/sentryexporter/internal/metadata"
)

func TestCreateDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Empty(t, cfg.DSN, "no DSN: the user must name a project")
	assert.Equal(t, TracesAsTransactions, cfg.TracesAs, "transactions are accepted by every Sentry")
	assert.Equal(t, 128, cfg.MaxConcurrentRequests)
	assert.True(t, cfg.ErrorEvents.FromSpanExceptions)
	assert.True(t, cfg.ErrorEvents.FromLogs)
	assert.False(t, cfg.SendDefaultPII, "as in the SDKs: no cookies, IP addresses or user data by default")
	assert.Equal(t, []string{"service.name", "service.namespace"}, cfg.Logs.ResourceAttributes,
		"logs are billed by bytes: a small set, never the command line")
	assert.Equal(t, 5*time.Second, cfg.ErrorEvents.DedupeWindow, "a span event and its log record become one error event when their pipelines flush within 5 s")
	assert.True(t, cfg.ClientReports.Enabled)
	assert.Equal(t, 30*time.Second, cfg.ClientReports.Interval, "sentry-go's client report tick")
	assert.Equal(t, 30*time.Second, cfg.ClientConfig.Timeout)
	assert.Equal(t, configcompression.TypeZstd, cfg.ClientConfig.Compression)
	require.True(t, cfg.QueueConfig.HasValue())
	q := cfg.QueueConfig.Get()
	assert.Equal(t, exporterhelper.RequestSizerTypeItems, q.Sizer, "the queue is bounded by items, so memory is bounded")
	assert.EqualValues(t, 50_000, q.QueueSize)
	assert.False(t, q.BlockOnOverflow, "a full queue refuses data, it never blocks the receivers")
	require.True(t, q.Batch.HasValue())
	assert.EqualValues(t, 2_000, q.Batch.Get().MaxSize, "a batch is bounded too")
	assert.True(t, cfg.RetryConfig.Enabled)
	assert.EqualValues(t, 128<<20, cfg.Memory.MaxBytes, "keeps a 100-project gateway under 512 MiB RSS")
	assert.Equal(t, 5*time.Second, cfg.Pending.DrainTimeout, "with the 2 s final report, the exporter stops within 10 s")
}

func TestCreateExporters(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.DSN = "https://public@testing.invalid/1"
	set := exportertest.NewNopSettings(metadata.Type)
	te, err := f.CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	le, err := f.CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Shutdown(context.Background()))
	require.NoError(t, le.Shutdown(context.Background()))

	cfg.DSN = "https://secretkey123@o1.ingest.sentry.io/notanumber"
	_, err = f.CreateTraces(context.Background(), set, cfg)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secretkey123")
}
