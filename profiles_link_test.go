package sentryexporter

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/profiletest"
)

// ebpfProfileOf is what the eBPF profiler sends for one containerised Go
// process: a resource of process.pid (the host's pid namespace),
// process.executable.*, container.id and host.name (the node), no
// service.* and no language; 10 samples every 10 ms from at on OS thread
// tid, the first two on thread tid+1; samples from the third on linked to
// the span `linked` of trace `trace` when trace > 0.
func ebpfProfileOf(container string, pid int64, at time.Time, tid int64, trace int) pprofile.Profiles {
	b := profiletest.NewDict()
	d := b.Profiles.Dictionary()
	fn := d.FunctionTable().AppendEmpty()
	fn.SetNameStrindex(b.Str("github.com/acme/shop/cart.(*Cart).Total"))
	fn.SetFilenameStrindex(b.Str("/src/cart/cart.go"))
	loc := d.LocationTable().AppendEmpty()
	loc.AttributeIndices().Append(b.Attr("profile.frame.type", "go"))
	l := loc.Lines().AppendEmpty()
	l.SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
	l.SetLine(10)
	st := b.Stack(int32(d.LocationTable().Len() - 1))
	link := int32(0)
	if trace > 0 {
		lk := d.LinkTable().AppendEmpty()
		lk.SetTraceID(traceID(trace))
		lk.SetSpanID(spanID(trace, 1)) // the transaction's db span was running
		link = int32(d.LinkTable().Len() - 1)
	}
	rp := b.Profiles.ResourceProfiles().AppendEmpty()
	a := rp.Resource().Attributes()
	a.PutInt("process.pid", pid)
	a.PutStr("process.executable.name", "shop")
	a.PutStr("process.executable.path", "/app/shop")
	a.PutStr("container.id", container)
	a.PutStr("host.name", "node-1")
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(b.Str("samples"))
	for i := range 10 {
		s := p.Samples().AppendEmpty()
		s.SetStackIndex(st)
		th := tid
		if i < 2 {
			th = tid + 1
		} else {
			s.SetLinkIndex(link)
		}
		s.AttributeIndices().Append(b.Attr("thread.id", th))
		s.TimestampsUnixNano().Append(uint64(at.Add(time.Duration(i) * 10 * time.Millisecond).UnixNano()))
	}
	return b.Profiles
}

// sdkTraces are makeTraces(first) from an SDK in container `container`: its
// resource names the service, the SDK and the container; its process.pid
// and host.name are the container's own (pid 1, the pod's name), as the
// SDK sees them; its spans carry the runtime's thread.id (not an OS one).
func sdkTraces(first int, container string) ptrace.Traces {
	td := makeTraces(first, 1, false)
	a := td.ResourceSpans().At(0).Resource().Attributes()
	a.PutStr("service.instance.id", "5b7c")
	a.PutStr("telemetry.sdk.language", "go")
	a.PutStr("telemetry.sdk.name", "opentelemetry")
	a.PutStr("container.id", container)
	a.PutStr("host.name", "shop-7d9f")
	a.PutInt("process.pid", 1)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).Attributes().PutInt("thread.id", 3)
	}
	return td
}

// txProfiles are, per transaction Sentry stored, its trace id,
// contexts.profile.profiler_id and contexts.trace.data["thread.id"].
func (f *fakeSentry) txProfiles(t *testing.T) map[string][2]any {
	out := map[string][2]any{}
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeTransaction {
				continue
			}
			var tx struct {
				Contexts struct {
					Trace struct {
						TraceID string         `json:"trace_id"`
						Data    map[string]any `json:"data"`
					} `json:"trace"`
					Profile map[string]any `json:"profile"`
				} `json:"contexts"`
			}
			require.NoError(t, json.Unmarshal(it.Payload, &tx))
			out[tx.Contexts.Trace.TraceID] = [2]any{tx.Contexts.Profile["profiler_id"], tx.Contexts.Trace.Data["thread.id"]}
		}
	}
	return out
}

// TestTransactionFindsTheEBPFProfiler: a transaction names the profiler of
// an eBPF-shaped profile whose resource shares only container.id with the
// SDK's: the profiler of a span its samples ran in, with the OS thread
// that ran it as the chunk's thread_id string; else its container's; a
// process of another container names none, and a container two profiled
// processes share names neither.
func TestTransactionFindsTheEBPFProfiler(t *testing.T) {
	synctest.Test(t, testTransactionFindsTheEBPFProfiler)
}

func testTransactionFindsTheEBPFProfiler(t *testing.T) {
	h := newHarness(t, noDedupe)
	h.consumeProfiles(ebpfProfileOf("c0ffee", 91234, time.Now(), 91240, 1))
	h.consumeProfiles(ebpfProfileOf("5ide", 700, time.Now(), 701, 0))
	h.consumeProfiles(ebpfProfileOf("5ide", 800, time.Now(), 801, 0)) // a sidecar in the same container
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), sdkTraces(1, "c0ffee")))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), sdkTraces(2, "c0ffee")))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), sdkTraces(3, "other")))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), sdkTraces(4, "5ide")))
	h.shutdown()
	h.sentry.requireNoInvalid()

	chunks := h.sentry.chunksOf(t)
	require.Len(t, chunks, 3)
	id := chunks[0]["profiler_id"]
	got := h.sentry.txProfiles(t)
	hexTrace := func(i int) string { return traceID(i).String() }
	assert.Equal(t, [2]any{id, "91240"}, got[hexTrace(1)], "its span ran on OS thread 91240")
	assert.Equal(t, [2]any{id, float64(3)}, got[hexTrace(2)], "its container's profiler; the span's own thread.id is not an OS one")
	assert.Equal(t, [2]any{nil, float64(3)}, got[hexTrace(3)], "no profiled process in its container")
	assert.Equal(t, [2]any{nil, float64(3)}, got[hexTrace(4)], "two profiled processes in its container")

	samples := chunks[0]["profile"].(map[string]any)["samples"].([]any)
	on := 0
	for _, s := range samples {
		if s.(map[string]any)["thread_id"] == "91240" {
			on++
		}
	}
	assert.Equal(t, 8, on, "Sentry's rule (the samples of thread.id) selects the samples that ran the transaction")
}

// TestTransactionOnAnotherReplicaNamesTheProfiler: behind the loadbalancing
// exporter a process's chunks reach one replica and its traces any. With
// profiles.all_processes_profiled_by: container.id, a replica that never
// saw the chunks names the profiler_id they carry (derived from the
// container alone, no salt), without a thread (no samples seen); the
// replica of the chunks still names the linked span's OS thread. Without
// the option, or while profile chunks are rate limited, it names none.
func TestTransactionOnAnotherReplicaNamesTheProfiler(t *testing.T) {
	synctest.Test(t, testTransactionOnAnotherReplicaNamesTheProfiler)
}

func testTransactionOnAnotherReplicaNamesTheProfiler(t *testing.T) {
	byContainer := func(c *Config) { noDedupe(c); c.Profiles.AllProcessesProfiledBy = "container.id" }
	chunksAt, other, unset := newHarness(t, byContainer), newHarness(t, byContainer), newHarness(t, noDedupe)
	chunksAt.consumeProfiles(ebpfProfileOf("c0ffee", 91234, time.Now(), 91240, 1))
	require.NoError(t, chunksAt.traces.ConsumeTraces(t.Context(), sdkTraces(1, "c0ffee")))
	require.NoError(t, other.traces.ConsumeTraces(t.Context(), sdkTraces(2, "c0ffee")))
	require.NoError(t, other.traces.ConsumeTraces(t.Context(), makeTraces(3, 1, false))) // no container.id
	require.NoError(t, unset.traces.ConsumeTraces(t.Context(), sdkTraces(4, "c0ffee")))
	other.sentry.setRespond(func(*envelope.Envelope) answer { // a transaction's answer limits profile chunks
		return answer{status: http.StatusOK, headers: map[string]string{"X-Sentry-Rate-Limits": "60:profile_chunk"}}
	})
	require.NoError(t, other.traces.ConsumeTraces(t.Context(), sdkTraces(5, "c0ffee")))
	require.NoError(t, other.traces.ConsumeTraces(t.Context(), sdkTraces(6, "c0ffee")))
	for _, h := range []*harness{chunksAt, other, unset} {
		h.shutdown()
		h.sentry.requireNoInvalid()
	}

	chunks := chunksAt.sentry.chunksOf(t)
	require.Len(t, chunks, 1)
	id := chunks[0]["profiler_id"]
	assert.Equal(t, [2]any{id, "91240"}, chunksAt.sentry.txProfiles(t)[traceID(1).String()], "the replica of the chunks: the linked span's OS thread")
	got := other.sentry.txProfiles(t)
	assert.Equal(t, [2]any{id, float64(3)}, got[traceID(2).String()], "another replica: the chunks' profiler_id, the span's own thread.id untouched")
	assert.Equal(t, [2]any{nil, nil}, got[traceID(3).String()], "a resource without the container names none")
	assert.Equal(t, [2]any{nil, float64(3)}, got[traceID(6).String()], "never a profiler whose chunks are rate limited")
	assert.Equal(t, [2]any{nil, float64(3)}, unset.sentry.txProfiles(t)[traceID(4).String()], "without the option a replica names only profilers it saw")
}
