package profilechunk

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/account"
)

var both = Want{Backend: true, UI: true}

// goProfile is a Go service's CPU profile: two stacks on thread 7, one
// sample linked to a span.
func goProfile() *pb {
	b := newPB()
	rp := b.resource(map[string]any{
		"service.name": "checkout", "service.instance.id": "i-1", "service.version": "1.2.3",
		"deployment.environment.name": "prod", "telemetry.sdk.language": "go", "process.pid": int64(42),
	})
	p := b.profile(rp, "samples")
	main := b.loc(0, 0, "", [2]int64{int64(b.fn("main.main", "/src/main.go")), 10})
	work := b.loc(0, 0, "", [2]int64{int64(b.fn("main.work", "/src/work.go")), 20}, [2]int64{int64(b.fn("main.inlined", "/src/work.go")), 25})
	s1 := b.Stack(work, main)
	s2 := b.Stack(main)
	b.sample(p, s1, 7, "worker", b.link(0xaa, 0xbb), ms(0), ms(10))
	b.sample(p, s2, 7, "", 0, ms(20))
	b.sample(p, s1, 7, "", 0, ms(30))
	return b
}

type parsed struct {
	Version, ChunkID, ProfilerID, Platform, Release, Environment string `json:"-"`
	Top                                                          map[string]json.RawMessage
	Profile                                                      struct {
		Samples []struct {
			StackID   int     `json:"stack_id"`
			ThreadID  string  `json:"thread_id"`
			Timestamp float64 `json:"timestamp"`
		} `json:"samples"`
		Stacks         [][]int                      `json:"stacks"`
		Frames         []map[string]any             `json:"frames"`
		ThreadMetadata map[string]map[string]string `json:"thread_metadata"`
	}
}

func parse(t *testing.T, c Chunk) parsed {
	t.Helper()
	require.NoError(t, CheckRelay(c.Payload, c.Platform), string(c.Payload))
	var p parsed
	require.NoError(t, json.Unmarshal(c.Payload, &p.Top))
	require.NoError(t, json.Unmarshal(p.Top["profile"], &p.Profile))
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(p.Top[k], &s)
		return s
	}
	p.Version, p.ChunkID, p.ProfilerID, p.Platform = str("version"), str("chunk_id"), str("profiler_id"), str("platform")
	p.Release, p.Environment = str("release"), str("environment")
	return p
}

func TestProfilesShape(t *testing.T) {
	tr := NewTranslator(Options{NewID: fixedIDs()})
	res := tr.Profiles(goProfile().pd, both)
	require.Len(t, res.Chunks, 1)
	c := res.Chunks[0]
	p := parse(t, c)
	assert.Equal(t, "2", p.Version)
	assert.Equal(t, "go", p.Platform)
	assert.Equal(t, "go", c.Platform)
	assert.False(t, c.UI)
	assert.Equal(t, "1.2.3", p.Release)
	assert.Equal(t, "prod", p.Environment)
	assert.Equal(t, c.ChunkID, p.ChunkID)
	assert.Equal(t, c.ProfilerID, p.ProfilerID)
	assert.JSONEq(t, `{"name":"sentry.otelcol.exporter","version":"0.1.0"}`, string(p.Top["client_sdk"]))
	assert.Equal(t, 4, c.Samples)
	assert.Len(t, p.Profile.Samples, 4)
	assert.Equal(t, int64(30), c.DurationMs)
	assert.Equal(t, []string{"7"}, c.Threads)
	assert.Equal(t, map[string]map[string]string{"7": {"name": "worker"}}, p.Profile.ThreadMetadata)
	// Leaf first; an inlined location gives its lines leaf first.
	first := p.Profile.Stacks[p.Profile.Samples[0].StackID]
	var names []any
	for _, f := range first {
		names = append(names, p.Profile.Frames[f]["function"])
	}
	assert.Equal(t, []any{"work", "inlined", "main"}, names)
	assert.Equal(t, map[string]any{"module": "main", "function": "work", "abs_path": "/src/work.go", "lineno": float64(20), "in_app": true},
		p.Profile.Frames[first[0]], "as sentry-go writes a frame")
	assert.Equal(t, float64(20), p.Profile.Frames[first[0]]["lineno"])
	assert.InDelta(t, 1_700_000_000.0, p.Profile.Samples[0].Timestamp, 1e-6)
	require.Len(t, c.Spans, 1)
	assert.Equal(t, [8]byte{0xbb, 1}, c.Spans[0].SpanID)
	assert.Equal(t, "7", c.Spans[0].Thread)
	assert.Equal(t, account.Counts{account.CatProfileChunk: 1, account.CatProfileDuration: 30}, c.Counts())
}

func TestProfilerIDStableAndDistinct(t *testing.T) {
	a := NewTranslator(Options{}).Profiles(goProfile().pd, both).Chunks[0].ProfilerID
	b := NewTranslator(Options{}).Profiles(goProfile().pd, both).Chunks[0].ProfilerID
	assert.Equal(t, a, b, "same process, another exporter run")
	assert.Len(t, a, 32)
	salted := NewTranslator(Options{ProfilerSalt: func() string { return "s" }}).Profiles(goProfile().pd, both).Chunks[0].ProfilerID
	assert.NotEqual(t, a, salted)
	assert.Equal(t, "d991107825e9a66b4dccd8497f521800", ProfilerID("", []byte("service.name=x\n"), "1"), "sha256(salt NUL identity process.pid=pid)[:16], computed independently")
	assert.NotEqual(t, ProfilerID("", []byte("service.name=x\n"), "1"), ProfilerID("", []byte("service.name=x\n"), "2"))
}

// TestSharedProfilerID: with a SharedIdentity, a resource carrying it gets
// the profiler_id of that attribute alone (and its pid, for a host), what a
// trace's resource sharing it derives too; without it, the whole identity's.
func TestSharedProfilerID(t *testing.T) {
	withContainer := func() *pb {
		b := goProfile()
		b.pd.ResourceProfiles().At(0).Resource().Attributes().PutStr("container.id", "c0ffee")
		b.pd.ResourceProfiles().At(0).Resource().Attributes().PutStr("host.name", "node-1")
		return b
	}
	whole := NewTranslator(Options{}).Profiles(withContainer().pd, both).Chunks[0].ProfilerID
	byContainer := NewTranslator(Options{SharedIdentity: "container.id"}).Profiles(withContainer().pd, both).Chunks[0].ProfilerID
	byHost := NewTranslator(Options{SharedIdentity: "host.name"}).Profiles(withContainer().pd, both).Chunks[0].ProfilerID
	assert.Equal(t, SharedProfilerID("container.id", "c0ffee", "9"), byContainer, "the container alone: any pid, any other attribute")
	assert.Equal(t, SharedProfilerID("host.name", "node-1", "42"), byHost, "the host with the pid")
	assert.NotEqual(t, SharedProfilerID("host.name", "node-1", "43"), byHost)
	assert.NotEqual(t, whole, byContainer)
	assert.Equal(t, whole, NewTranslator(Options{SharedIdentity: "k8s.pod.uid"}).Profiles(withContainer().pd, both).Chunks[0].ProfilerID,
		"a resource without the shared identity keeps its whole identity's")
	assert.Empty(t, SharedProfilerID("host.name", "node-1", ""), "a host without a pid names no process")
	assert.Equal(t, ProfilerID("", []byte("container.id=c0ffee\n"), ""), byContainer)
}

func TestEnvironmentReleaseOptions(t *testing.T) {
	c := NewTranslator(Options{Environment: "staging", Release: "r9"}).Profiles(goProfile().pd, both).Chunks[0]
	p := parse(t, c)
	assert.Equal(t, "staging", p.Environment)
	assert.Equal(t, "r9", p.Release)
}

// longProfile has samples every 100 ms for span, on two threads.
func longProfile(spanMs uint64) *pb {
	b := newPB()
	rp := b.resource(map[string]any{"service.name": "svc", "telemetry.sdk.language": "python"})
	p := b.profile(rp, "samples")
	st := b.Stack(b.loc(0, 0, "", [2]int64{int64(b.fn("f", "app.py")), 1}))
	for m := uint64(0); m <= spanMs; m += 100 {
		b.sample(p, st, int64(m/100%2), "", 0, ms(m))
	}
	return b
}

func TestCutByTime(t *testing.T) {
	res := NewTranslator(Options{}).Profiles(longProfile(150_000).pd, both)
	require.Len(t, res.Chunks, 3)
	total := 0
	for _, c := range res.Chunks {
		parse(t, c)
		assert.LessOrEqual(t, c.End.Sub(c.Start), MaxChunkSpan)
		total += c.Samples
	}
	assert.Equal(t, 1501, total, "every sample in a chunk")
	assert.Equal(t, res.Chunks[0].ProfilerID, res.Chunks[2].ProfilerID)
	assert.NotEqual(t, res.Chunks[0].ChunkID, res.Chunks[1].ChunkID)
}

func TestCutBySize(t *testing.T) {
	res := NewTranslator(Options{MaxChunkBytes: 2000}).Profiles(longProfile(10_000).pd, both)
	require.Greater(t, len(res.Chunks), 2)
	total := 0
	for _, c := range res.Chunks {
		parse(t, c)
		assert.LessOrEqual(t, len(c.Payload), 2000)
		total += c.Samples
	}
	assert.Equal(t, 101, total)
	assert.Zero(t, res.Samples.Lonely)
}

func TestWantSkipsUnwantedType(t *testing.T) {
	b := longProfile(1000)
	b.pd.ResourceProfiles().At(0).Resource().Attributes().PutStr("telemetry.sdk.language", "webjs")
	res := NewTranslator(Options{}).Profiles(b.pd, Want{Backend: true})
	assert.Empty(t, res.Chunks)
	assert.Equal(t, account.Counts{account.CatProfileChunkUI: 1, account.CatProfileDurationUI: 1000}, res.Skipped)
	res = NewTranslator(Options{}).Profiles(b.pd, Want{UI: true})
	require.Len(t, res.Chunks, 1)
	assert.True(t, res.Chunks[0].UI)
	assert.Equal(t, "javascript", res.Chunks[0].Platform)
}

func TestNoTimestampsCounted(t *testing.T) {
	b := newPB()
	p := b.profile(b.resource(map[string]any{"service.name": "svc"}), "samples")
	st := b.Stack(b.loc(0x10, 0, "native"))
	b.sample(p, st, 1, "", 0)
	b.sample(p, st, 1, "", 0)
	res := NewTranslator(Options{}).Profiles(b.pd, both)
	assert.Empty(t, res.Chunks)
	assert.Equal(t, account.Counts{account.CatProfileChunk: 1}, res.NoTimestamps)
}

func TestSampleTypes(t *testing.T) {
	b := goProfile()
	rp := b.pd.ResourceProfiles().At(0)
	cpu := b.profile(rp, "cpu")
	alloc := b.profile(rp, "alloc_space")
	st := b.Stack(b.loc(0, 0, "", [2]int64{int64(b.fn("g", "g.go")), 1}))
	b.sample(cpu, st, 1, "", 0, ms(1), ms(2))
	b.sample(alloc, st, 1, "", 0, ms(1), ms(2))
	res := NewTranslator(Options{}).Profiles(b.pd, both)
	require.Len(t, res.Chunks, 1)
	assert.Equal(t, 4, res.Chunks[0].Samples, "only the samples/count profile")
	assert.Equal(t, account.Counts{account.CatProfileChunk: 1}, res.Duplicate)
	assert.Equal(t, account.Counts{account.CatProfileChunk: 1}, res.Unsupported)
}

func TestDanglingIndexesCounted(t *testing.T) {
	b := goProfile()
	p := b.pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	badLoc := b.Stack(9999)
	badFn := b.Stack(b.loc(0, 0, "", [2]int64{5000, 1}))
	badMap := b.Stack(b.loc(1, 777, "native"))
	b.sample(p, 12345, 7, "", 0, ms(1))
	b.sample(p, badLoc, 7, "", 0, ms(2), ms(3))
	b.sample(p, badFn, 7, "", 0, ms(4))
	b.sample(p, badMap, 7, "", 0, ms(5))
	b.sample(p, 1, 7, "", 0, 0, 1<<63, ms(6))
	b.sample(p, 1, 7, "", 0)
	res := NewTranslator(Options{}).Profiles(b.pd, both)
	require.Len(t, res.Chunks, 1)
	parse(t, res.Chunks[0])
	assert.Equal(t, 5, res.Chunks[0].Samples)
	assert.Equal(t, SampleDrops{Invalid: 7, NoTimestamp: 1}, res.Samples)

	only := newPB()
	op := only.profile(only.resource(nil), "samples")
	only.sample(op, 77, 1, "", 0, ms(1))
	res = NewTranslator(Options{}).Profiles(only.pd, both)
	assert.Empty(t, res.Chunks)
	assert.Equal(t, account.Counts{account.CatProfileChunk: 1}, res.Invalid)
}

func TestLonelyThreadCounted(t *testing.T) {
	b := goProfile()
	p := b.pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	b.sample(p, 1, 99, "", 0, ms(5)) // thread 99: one non-idle sample
	res := NewTranslator(Options{}).Profiles(b.pd, both)
	require.Len(t, res.Chunks, 1)
	assert.Equal(t, 4, res.Chunks[0].Samples)
	assert.Equal(t, int64(1), res.Samples.Lonely)
}

// ebpfProfile is what the eBPF profiler sends: no language, a Python
// process with native and kernel frames below the interpreter's.
func ebpfProfile() *pb {
	b := newPB()
	rp := b.resource(map[string]any{"host.name": "node-1", "process.pid": int64(311), "process.executable.name": "python3"})
	p := b.profile(rp, "samples")
	libc := b.mapping("/usr/lib/x86_64-linux-gnu/libc.so.6", "f1c3bcc0279865fe3058404b2831d9e64135386c")
	app := b.mapping("/opt/app/bin/worker", "")
	py := b.loc(0, 0, "cpython", [2]int64{int64(b.fn("handle", "/opt/app/handler.py")), 12})
	native := b.loc(0x401234, libc, "native")
	kernel := b.loc(0xffffffff81000000, 0, "kernel", [2]int64{int64(b.fn("do_syscall_64", "")), 0})
	own := b.loc(0x402000, app, "native")
	st := b.Stack(kernel, native, own, py)
	b.sample(p, st, 311, "python3", 0, ms(0), ms(10), ms(20))
	return b
}

func TestMixedFramesAndDebugImages(t *testing.T) {
	res := NewTranslator(Options{}).Profiles(ebpfProfile().pd, both)
	require.Len(t, res.Chunks, 1)
	c := res.Chunks[0]
	p := parse(t, c)
	assert.Equal(t, "python", c.Platform, "the interpreted frames' platform")
	st := p.Profile.Stacks[0]
	kernel, libc, own, py := p.Profile.Frames[st[0]], p.Profile.Frames[st[1]], p.Profile.Frames[st[2]], p.Profile.Frames[st[3]]
	assert.Equal(t, map[string]any{"function": "do_syscall_64", "instruction_addr": "0xffffffff81000000", "in_app": false, "platform": "native"}, kernel)
	assert.Equal(t, map[string]any{"instruction_addr": "0x401234", "in_app": false, "platform": "native"}, libc)
	assert.Equal(t, map[string]any{"instruction_addr": "0x402000", "in_app": true, "platform": "native"}, own)
	assert.Equal(t, "handle", py["function"])
	assert.NotContains(t, py, "platform")
	assert.JSONEq(t, `{"images":[{"type":"symbolic","debug_id":"c0bcc3f1-9827-fe65-3058-404b2831d9e6",
		"code_file":"/usr/lib/x86_64-linux-gnu/libc.so.6","image_addr":"0x400000","image_size":1048576}]}`, string(p.Top["debug_meta"]))
}

func TestDebugIDFromBuildID(t *testing.T) {
	for in, want := range map[string]string{
		// Sentry's documented example of an ELF build ID and its debug ID.
		"f1c3bcc0279865fe3058404b2831d9e64135386c": "c0bcc3f1-9827-fe65-3058-404b2831d9e6",
		"0102": "00000201-0000-0000-0000-000000000000",
		"":     "",
		"zz":   "",
	} {
		got, ok := DebugIDFromBuildID(in)
		assert.Equal(t, want, got, in)
		assert.Equal(t, want != "", ok, in)
	}
}

func TestHalve(t *testing.T) {
	tr := NewTranslator(Options{NewID: fixedIDs()})
	c := tr.Profiles(longProfile(2000).pd, both).Chunks[0]
	a, b, ok := tr.Halve(c)
	require.True(t, ok)
	pa, pb := parse(t, a), parse(t, b)
	assert.Equal(t, c.Samples, a.Samples+b.Samples)
	assert.Equal(t, c.ProfilerID, pa.ProfilerID)
	assert.Equal(t, c.ProfilerID, pb.ProfilerID)
	assert.NotEqual(t, pa.ChunkID, pb.ChunkID)
	assert.NotEqual(t, c.ChunkID, pa.ChunkID)
	assert.False(t, a.End.After(b.Start), "halves by time")
	assert.Less(t, len(a.Payload), len(c.Payload))

	small := tr.Profiles(goProfile().pd, both).Chunks[0]
	small.Payload = small.Payload[:10]
	_, _, ok = tr.Halve(small)
	assert.False(t, ok)
}

func TestInvalidUTF8Repaired(t *testing.T) {
	b := newPB()
	p := b.profile(b.resource(map[string]any{"service.name": "svc", "service.version": "v\xff1"}), "samples")
	st := b.Stack(b.loc(0, 0, "", [2]int64{int64(b.fn("bad\xffname\x00", "f\xfe.go")), 1}))
	b.sample(p, st, 1, "th\xff", 0, ms(1), ms(2))
	res := NewTranslator(Options{}).Profiles(b.pd, both)
	require.Len(t, res.Chunks, 1)
	pr := parse(t, res.Chunks[0])
	assert.Equal(t, "bad\ufffdname\ufffd", pr.Profile.Frames[0]["function"])
	assert.Equal(t, "v\ufffd1", pr.Release)
	assert.Equal(t, "th\ufffd", pr.Profile.ThreadMetadata["1"]["name"])
}
