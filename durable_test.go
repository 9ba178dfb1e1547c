package sentryexporter

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
	"github.com/otel-sentry/sentryexporter/internal/settle"
)

// memStorage is a storage extension in memory, as file_storage is on disk:
// what exporterhelper's persistent queue keeps, for a test to look at.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

func newMemStorage() *memStorage { return &memStorage{data: map[string][]byte{}} }

func (s *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{s}, nil
}

// items is how many queue items (keys that are an index) it holds.
func (s *memStorage) items() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.data {
		if _, err := strconv.ParseUint(k, 10, 64); err == nil {
			n++
		}
	}
	return n
}

type memClient struct{ s *memStorage }

func (c memClient) Get(_ context.Context, key string) ([]byte, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.data[key], nil
}

func (c memClient) Set(ctx context.Context, key string, value []byte) error {
	return c.Batch(ctx, storage.SetOperation(key, value))
}

func (c memClient) Delete(ctx context.Context, key string) error {
	return c.Batch(ctx, storage.DeleteOperation(key))
}

func (c memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value = c.s.data[op.Key]
		case storage.Set:
			c.s.data[op.Key] = append([]byte(nil), op.Value...)
		case storage.Delete:
			delete(c.s.data, op.Key)
		}
	}
	return nil
}

func (memClient) Close(context.Context) error { return nil }

// durableTraces is a traces pipeline with a persistent queue in st (one
// consumer, no batcher), against sentry.
func durableTraces(t *testing.T, sentry *fakeSentry, st *memStorage) *harness {
	storageID := component.MustNewID("memstorage")
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.DSN = configopaque.String(sentry.dsn())
	cfg.Assembly.Wait = 0
	cfg.ErrorEvents.DedupeWindow = 0
	cfg.ClientReports.Enabled = false
	useMemNet(&cfg.ClientConfig)
	q := exporterhelper.NewDefaultQueueConfig()
	q.NumConsumers = 1
	q.StorageID = &storageID
	cfg.QueueConfig = configoptional.Some(q)
	require.NoError(t, cfg.Validate())

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.WithoutCancel(t.Context()))) })
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	te, err := f.CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	host := sendtest.HostWith(map[component.ID]component.Component{
		sendtest.ID: sentry.net.host().GetExtensions()[sendtest.ID],
		storageID:   st,
	})
	require.NoError(t, te.Start(t.Context(), host))
	return &harness{t: t, sentry: sentry, tel: tel, exp: exporterOf(te), traces: settlingTraces{Traces: te, settle: func() {}}}
}

// TestPersistentQueueKeepsABatchUntilItsLastItemSettles: with
// sending_queue::storage, a batch of two traces (two transaction envelopes)
// stays in the persistent queue while Sentry has not answered the first,
// and still after it stored the first: only the second's answer lets it go.
// A crash before then finds the batch on disk at the restart.
func TestPersistentQueueKeepsABatchUntilItsLastItemSettles(t *testing.T) {
	synctest.Test(t, testPersistentQueueKeepsABatchUntilItsLastItemSettles)
}

func testPersistentQueueKeepsABatchUntilItsLastItemSettles(t *testing.T) {
	sentry := newMemSentry(t)
	answer1 := make(chan answer)
	sentry.setRespond(func(*envelope.Envelope) answer { return <-answer1 })
	st := newMemStorage()
	h := durableTraces(t, sentry, st)

	h.consumeTraces(0, 2, false)
	synctest.Wait() // the first transaction is at Sentry, unanswered (a new project's limit is one request)
	require.Len(t, sentry.envelopes(), 1)
	assert.Equal(t, 1, st.items(), "nothing settled: the batch is in the queue")

	answer1 <- answer{status: http.StatusOK}
	synctest.Wait() // the second is at Sentry, unanswered
	require.Len(t, sentry.envelopes(), 2)
	assert.Equal(t, int64(1), h.sent("transaction"))
	assert.Equal(t, 1, st.items(), "one of two stored: the batch is still in the queue")

	answer1 <- answer{status: http.StatusOK}
	synctest.Wait()
	assert.Equal(t, int64(2), h.sent("transaction"))
	assert.Zero(t, st.items(), "both stored: the batch left the queue")
	require.NoError(t, h.traces.Shutdown(t.Context()))
}

// TestPersistentQueueLetsGoOfWhatARateLimitDrops: an item under an active
// rate limit is counted at once and never waits, so the batch leaves the
// queue without a request: a limit is a drop, never a queue.
func TestPersistentQueueLetsGoOfWhatARateLimitDrops(t *testing.T) {
	synctest.Test(t, testPersistentQueueLetsGoOfWhatARateLimitDrops)
}

func testPersistentQueueLetsGoOfWhatARateLimitDrops(t *testing.T) {
	sentry := newMemSentry(t)
	sentry.setRespond(func(*envelope.Envelope) answer {
		return answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "600:transaction:organization"}}
	})
	st := newMemStorage()
	h := durableTraces(t, sentry, st)

	h.consumeTraces(0, 1, false) // answered 429: the limit begins
	synctest.Wait()
	require.Len(t, sentry.envelopes(), 1)
	assert.Zero(t, st.items())

	h.consumeTraces(1, 3, false) // under the limit: counted, not sent, not kept
	synctest.Wait()
	assert.Len(t, sentry.envelopes(), 1, "nothing more was sent")
	assert.Equal(t, int64(3), h.dropped("transaction", "ratelimit_backoff"))
	assert.Equal(t, int64(4), h.droppedAll("transaction"), "the 429'd one too")
	assert.Zero(t, st.items(), "the limited batch left the queue at once")
	require.NoError(t, h.traces.Shutdown(t.Context()))
}

// TestPushSettlesWithBothHalvesOfASplit: a log container Sentry answers 413
// is sent again as two halves; the push that built it is settled only when
// the second half is.
func TestPushSettlesWithBothHalvesOfASplit(t *testing.T) {
	synctest.Test(t, testPushSettlesWithBothHalvesOfASplit)
}

func testPushSettlesWithBothHalvesOfASplit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false })
	hold := make(chan answer)
	h.sentry.setRespond(func(env *envelope.Envelope) answer {
		if env.Items[0].ItemCount > 30 {
			return answer{status: http.StatusRequestEntityTooLarge}
		}
		return <-hold
	})
	g := settle.NewGroup()
	require.NoError(t, h.exp.pushLogs(settle.With(t.Context(), g), makeLogs(40)))
	g.Close()
	synctest.Wait() // 40 → 413 → the first half of 20 at Sentry
	assert.Equal(t, 2, g.Pending(), "two halves in the container's place")
	hold <- answer{status: http.StatusOK}
	synctest.Wait()
	assert.Equal(t, 1, g.Pending())
	assert.False(t, isClosed(g.Settled()), "one half is still at Sentry")
	hold <- answer{status: http.StatusOK}
	synctest.Wait()
	assert.True(t, isClosed(g.Settled()))
	assert.EqualValues(t, 40, h.sent("log_item"))
	h.shutdown()
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
