package sentryexporter

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
)

// settlingProfiles returns from ConsumeProfiles once every envelope the
// call handed over is settled.
type settlingProfiles struct {
	xexporter.Profiles
	settle func()
}

func (s settlingProfiles) ConsumeProfiles(ctx context.Context, pd pprofile.Profiles) error {
	err := s.Profiles.ConsumeProfiles(ctx, pd)
	s.settle()
	return err
}

// checkProfileChunks holds the fake Sentry's profile chunks to what
// Relay's sample v2 parse and normalisation accept (profilechunk.CheckRelay),
// beyond the envelope's own checks.
func checkProfileChunks(env *envelope.Envelope) error {
	for _, it := range env.Items {
		if it.Type == envelope.ItemTypeProfileChunk {
			if err := profilechunk.CheckRelay(it.Payload, it.Platform); err != nil {
				return err
			}
		}
	}
	return nil
}

// profileOf is one process's CPU profile as an OTel profiler exports it:
// service svc (a Go process, pid 42, on host h1), n samples of one stack on
// thread 7, one every 10 ms from at: a chunk of (n-1)*10 ms.
func profileOf(svc string, at time.Time, n int) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("", "samples", "count", "main.work", "main.go", "thread.id", "thread.name", "main")
	d.MappingTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	fn := d.FunctionTable().AppendEmpty()
	fn.SetNameStrindex(3)
	fn.SetFilenameStrindex(4)
	d.LocationTable().AppendEmpty()
	loc := d.LocationTable().AppendEmpty()
	line := loc.Lines().AppendEmpty()
	line.SetFunctionIndex(1)
	line.SetLine(10)
	d.StackTable().AppendEmpty()
	d.StackTable().AppendEmpty().LocationIndices().Append(1)
	d.AttributeTable().AppendEmpty()
	tid := d.AttributeTable().AppendEmpty()
	tid.SetKeyStrindex(5)
	tid.Value().SetInt(7)
	tname := d.AttributeTable().AppendEmpty()
	tname.SetKeyStrindex(6)
	tname.Value().SetStr("main")

	rp := pd.ResourceProfiles().AppendEmpty()
	attrs := rp.Resource().Attributes()
	attrs.PutStr("service.name", svc)
	attrs.PutStr("host.name", "h1")
	attrs.PutInt("process.pid", 42)
	attrs.PutStr("telemetry.sdk.language", "go")
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(1)
	p.SampleType().SetUnitStrindex(2)
	p.SetTime(pcommon.NewTimestampFromTime(at))
	p.SetDurationNano(uint64(time.Duration(n) * 10 * time.Millisecond))
	s := p.Samples().AppendEmpty()
	s.SetStackIndex(1)
	s.AttributeIndices().Append(1, 2)
	for i := range n {
		s.TimestampsUnixNano().Append(uint64(at.Add(time.Duration(i) * 10 * time.Millisecond).UnixNano()))
	}
	return pd
}

func (h *harness) consumeProfiles(pd pprofile.Profiles) {
	require.NoError(h.t, h.profiles.ConsumeProfiles(context.Background(), pd))
}

// chunksOf are the profile chunk items the fake Sentry stored, decoded.
func (f *fakeSentry) chunksOf(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeProfileChunk {
				continue
			}
			var c map[string]any
			require.NoError(t, json.Unmarshal(it.Payload, &c))
			out = append(out, c)
		}
	}
	return out
}

// TestProfilesReachSentry: a process's profile becomes one profile_chunk
// envelope Relay accepts (platform in the item header), counted one chunk
// and its milliseconds.
func TestProfilesReachSentry(t *testing.T) { synctest.Test(t, testProfilesReachSentry) }

func testProfilesReachSentry(t *testing.T) {
	h := newHarness(t, nil)
	h.consumeProfiles(profileOf("checkout", time.Now(), 101))
	h.shutdown()
	h.sentry.requireNoInvalid()

	chunks := h.sentry.chunksOf(t)
	require.Len(t, chunks, 1)
	assert.Equal(t, "go", chunks[0]["platform"])
	for _, r := range h.sentry.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == envelope.ItemTypeProfileChunk {
				assert.Equal(t, "go", it.Platform)
			}
		}
	}
	assert.EqualValues(t, 1, h.sent("profile_chunk"))
	assert.EqualValues(t, 1000, h.sent("profile_duration"), "100 intervals of 10 ms")
	assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", nil))
}

// tracesOfProcess are makeTraces of the process profileOf("checkout", ...)
// profiles (host h1, pid), with OTel's thread attributes on the spans.
func tracesOfProcess(first int, pid int64) ptrace.Traces {
	td := makeTraces(first, 1, false)
	attrs := td.ResourceSpans().At(0).Resource().Attributes()
	attrs.PutStr("host.name", "h1")
	attrs.PutInt("process.pid", pid)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).Attributes().PutInt("thread.id", 7)
		spans.At(i).Attributes().PutStr("thread.name", "main")
	}
	return td
}

// profileContexts are the contexts.profile of the transactions Sentry
// stored, in order (nil for one without).
func (f *fakeSentry) profileContexts(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeTransaction {
				continue
			}
			var tx struct {
				Contexts map[string]map[string]any `json:"contexts"`
			}
			require.NoError(t, json.Unmarshal(it.Payload, &tx))
			out = append(out, tx.Contexts["profile"])
		}
	}
	return out
}

// TestTransactionLinksItsProcessProfile: once a process has sent a chunk,
// its transactions name the chunk's profiler (contexts.profile.profiler_id)
// and keep their spans' thread.id; another process's do not, nor does any
// while that profile type is rate limited, nor once its last chunk is
// older than profilerTTL: a transaction never names a profiler that sends
// nothing.
func TestTransactionLinksItsProcessProfile(t *testing.T) {
	synctest.Test(t, testTransactionLinksItsProcessProfile)
}

func testTransactionLinksItsProcessProfile(t *testing.T) {
	h := newHarness(t, noDedupe)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), tracesOfProcess(0, 42))) // before any chunk
	h.consumeProfiles(profileOf("checkout", time.Now(), chunkSamples))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), tracesOfProcess(1, 42)))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), tracesOfProcess(2, 43))) // another process

	h.sentry.setRespond(func(env *envelope.Envelope) answer {
		if env.Items[0].Type == envelope.ItemTypeProfileChunk {
			return answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "60:profile_duration"}}
		}
		return answer{status: http.StatusOK}
	})
	h.consumeProfiles(profileOf("checkout", time.Now(), chunkSamples))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), tracesOfProcess(3, 42))) // its profiles are limited
	time.Sleep(61 * time.Second)
	h.sentry.setRespond(nil)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), tracesOfProcess(4, 42))) // the limit is over, the chunk recent
	time.Sleep(profilerTTL)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), tracesOfProcess(5, 42))) // its last chunk is too old
	h.shutdown()
	h.sentry.requireNoInvalid()

	chunks := h.sentry.chunksOf(t)
	require.NotEmpty(t, chunks)
	linked := map[string]any{"profiler_id": chunks[0]["profiler_id"]}
	assert.Equal(t, []map[string]any{nil, linked, nil, nil, linked, nil}, h.sentry.profileContexts(t))
}

// TestProfilesPipelineStoppingFirst: the profiles pipeline shuts down while
// the others go on: the exporter, shared, does not stop with it, so its
// chunk in flight is stored, and the logs pipeline still retries a 503
// afterwards; the exporter stops with the last pipeline.
func TestProfilesPipelineStoppingFirst(t *testing.T) {
	synctest.Test(t, testProfilesPipelineStoppingFirst)
}

func testProfilesPipelineStoppingFirst(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(func(*envelope.Envelope) answer {
		time.Sleep(100 * time.Millisecond) // an answer that takes a while
		return answer{status: http.StatusOK}
	})
	raw := h.profiles.(settlingProfiles)
	require.NoError(t, raw.Profiles.ConsumeProfiles(t.Context(), profileOf("checkout", time.Now(), 101)))
	require.NoError(t, h.profiles.Shutdown(t.Context()))
	h.profiles = nil // shut down already
	h.exp.settleInBubble()
	assert.EqualValues(t, 1, h.sent("profile_chunk"), "the chunk in flight was stored, not cut")

	h.sentry.setRespond(firstThenOK(answer{status: http.StatusServiceUnavailable}))
	h.consumeLogs(3)
	assert.EqualValues(t, 3, h.sent("log_item"), "the logs pipeline still retries")
	h.shutdown()
	assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", nil))
}

// TestProfilesNotSplitByTheQueue: with the default sending queue, a profile
// of more samples than a batch holds becomes one chunk of all its samples.
func TestProfilesNotSplitByTheQueue(t *testing.T) { synctest.Test(t, testProfilesNotSplitByTheQueue) }

func testProfilesNotSplitByTheQueue(t *testing.T) {
	h := newHarness(t, func(cfg *Config) {
		cfg.QueueConfig = createDefaultConfig().(*Config).QueueConfig
	})
	pd := profileOf("checkout", time.Now(), 1)
	p := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	first := p.Samples().At(0)
	start := first.TimestampsUnixNano().At(0)
	for i := 1; i < 2*defaultBatchMaxItems; i++ { // one timestamp a sample, 10 ms apart: 40 s
		s := p.Samples().AppendEmpty()
		first.CopyTo(s)
		s.TimestampsUnixNano().FromRaw([]uint64{start + uint64(i)*uint64(10*time.Millisecond)})
	}
	h.consumeProfiles(pd)
	time.Sleep(5 * time.Second) // the bubble's clock: past the batcher's flush timeout
	synctest.Wait()
	h.shutdown()
	h.sentry.requireNoInvalid()
	chunks := h.sentry.chunksOf(t)
	require.Len(t, chunks, 1, "one profile of 40 s is one chunk")
	assert.Len(t, chunks[0]["profile"].(map[string]any)["samples"], 2*defaultBatchMaxItems)
}
