package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
	"github.com/otel-sentry/sentryexporter/internal/profiletest"
)

// The profiles otlpgen sends (--profiles-interval) are what a CPU profiler running beside
// every service process exports, as the OpenTelemetry eBPF profiler does: each interval,
// one OTLP profile per service with the eBPF profiler's resource for the process
// (profilerResource: process.pid in the host's namespace, process.executable.*, the
// container.id its traces' resource carries too, the node's host.name, service.name as its
// Kubernetes metadata gives it, no language), sample type samples/count, and samples that
// carry their timestamps (20 Hz per busy thread, busy at least at the window's first two
// ticks), a thread.id and thread.name each, and
// mixed stacks: the service's own frames (go, jvm or cpython frame types with function,
// file and line, named as the eBPF profiler names them) over a frame of its runtime's
// library, its runtime's native library and the kernel's, native ones unsymbolized
// with an address in a mapping that carries a GNU build id. About half the samples link
// to a request span otlpgen sent for that service shortly before (trace and span id).
//
// The totals count the OTLP profiles and sample timestamps sent, and what the exporter
// makes of them (docs/mapping.md#profiles): otlpgen runs the exporter's own translator
// (internal/profilechunk, default options) over each profile it delivers, so the
// profile_chunk items, their samples and profile_duration milliseconds are known exactly.

// profileHz is how often a busy thread is sampled (the eBPF profiler's default is 20 Hz).
const profileHz = 20

// profileThreads are a service's threads and the share of samples each is busy for.
var profileThreads = []struct {
	name string
	busy float64
}{{"main", 0.3}, {"http-worker-1", 0.5}, {"http-worker-2", 0.5}, {"gc", 0.15}}

// recentSpans keeps the last root spans of each service, for the samples' links.
type recentSpans struct {
	mu    sync.Mutex
	by    map[string][]spanRef
	limit int
}

type spanRef struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

func newRecentSpans() *recentSpans { return &recentSpans{by: map[string][]spanRef{}, limit: 64} }

// add records a root span of service; nil r records nothing.
func (r *recentSpans) add(service string, trace pcommon.TraceID, span pcommon.SpanID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.by[service]
	if len(l) == r.limit {
		l = l[1:]
	}
	r.by[service] = append(l, spanRef{trace, span})
}

// of returns a copy of service's recent root spans.
func (r *recentSpans) of(service string) []spanRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]spanRef(nil), r.by[service]...)
}

// profiler builds the profiles of every service's process. It is not safe for concurrent use.
type profiler struct {
	rnd      *rand.Rand
	services []service
	recent   *recentSpans
	// depth is the number of the service's own frames per stack, stacks the number of
	// distinct stacks per service, hz the sampling rate: larger with --large, which also
	// sends one service's profile per request (perRequest) and only the first
	// --profile-services services profile.
	depth, stacks, hz, perRequest int
	tr                            *profilechunk.Translator
}

func newProfiler(seed uint64, nServices int, recent *recentSpans, large bool) *profiler {
	p := &profiler{
		rnd: rand.New(rand.NewPCG(seed, seed^0x7f4a7c15)), recent: recent,
		depth: 6, stacks: 12, hz: profileHz, perRequest: max(nServices, 1),
		tr: profilechunk.NewTranslator(profilechunk.Options{}),
	}
	if large { // MB profiles: deep, mostly distinct stacks sampled at 100 Hz, one a request
		p.depth, p.stacks, p.hz, p.perRequest = 48, 1500, 100, 1
	}
	for i := range max(nServices, 1) {
		p.services = append(p.services, serviceAt(i))
	}
	return p
}

// profileCounts is what one profiles export holds, and what the exporter makes of it.
type profileCounts struct {
	profiles, samples int
	chunks            int64 // profile_chunk items (or profiles counted as one, unrendered)
	chunkSamples      int64 // samples in the rendered chunks
	durationMs        int64 // profile_duration of the rendered chunks
	byService         map[string]serviceProfileCounts
}

type serviceProfileCounts struct{ chunks, chunkSamples int64 }

// collect returns one export: a profile of each of services [first, first+n) of the
// samples in [from, to).
func (p *profiler) collect(from, to time.Time, first, n int) (pprofile.Profiles, profileCounts) {
	b := newProfileBuilder()
	pd := b.Profiles
	pc := profileCounts{byService: map[string]serviceProfileCounts{}}
	for i := first; i < min(first+n, len(p.services)); i++ {
		s := &p.services[i]
		rp := pd.ResourceProfiles().AppendEmpty()
		profilerResource(rp.Resource(), s, i)
		sp := rp.ScopeProfiles().AppendEmpty()
		sp.Scope().SetName("go.opentelemetry.io/ebpf-profiler")
		prof := sp.Profiles().AppendEmpty()
		prof.SampleType().SetTypeStrindex(b.Str("samples"))
		prof.SampleType().SetUnitStrindex(b.Str("count"))
		prof.PeriodType().SetTypeStrindex(b.Str("cpu"))
		prof.PeriodType().SetUnitStrindex(b.Str("nanoseconds"))
		prof.SetPeriod(int64(time.Second) / int64(p.hz))
		prof.SetTime(pcommon.NewTimestampFromTime(from))
		prof.SetDurationNano(uint64(to.Sub(from)))
		pc.profiles++
		pc.samples += p.samples(b, s, prof, from, to)
	}
	res := p.tr.Profiles(pd, profilechunk.Want{Backend: true, UI: true})
	for i := range res.Chunks {
		c := &res.Chunks[i]
		name, _ := pd.ResourceProfiles().At(c.Resource).Resource().Attributes().Get("service.name")
		sc := pc.byService[name.Str()]
		sc.chunks++
		sc.chunkSamples += int64(c.Samples)
		pc.byService[name.Str()] = sc
		pc.chunks++
		pc.chunkSamples += int64(c.Samples)
		pc.durationMs += c.DurationMs
	}
	for _, n := range []account.Counts{res.Invalid, res.NoTimestamps, res.Unsupported, res.Duplicate} {
		pc.chunks += n[account.CatProfileChunk] // none expected: each is one profile_chunk the exporter counts dropped
	}
	return pd, pc
}

// samples appends the samples of service s's threads in [from, to) and returns how many
// timestamps they carry.
func (p *profiler) samples(b *profileBuilder, s *service, prof pprofile.Profile, from, to time.Time) int {
	stacks := b.stacks(s, p.stacks, p.depth)
	spans := p.recent.of(s.name)
	n := 0
	for t, th := range profileThreads {
		tid := b.Attr("thread.id", int64(1000+t))
		tname := b.Attr("thread.name", th.name)
		step := time.Second / time.Duration(p.hz)
		k := 0
		for at := from; at.Before(to); at = at.Add(step) {
			k++
			// busy at random, and at the first two ticks: a thread Sentry shows needs two
			// samples in a chunk (Relay removes the others)
			if k > 2 && p.rnd.Float64() >= th.busy {
				continue
			}
			smp := prof.Samples().AppendEmpty()
			smp.SetStackIndex(stacks[p.rnd.IntN(len(stacks))])
			smp.AttributeIndices().FromRaw([]int32{tid, tname})
			smp.TimestampsUnixNano().Append(uint64(at.Add(time.Duration(p.rnd.IntN(int(step)))).UnixNano()))
			smp.Values().Append(1)
			if len(spans) > 0 && p.rnd.IntN(2) == 0 {
				ref := spans[p.rnd.IntN(len(spans))]
				smp.SetLinkIndex(b.link(ref))
			}
			n++
		}
	}
	return n
}

// profileBuilder fills one export's dictionary on profiletest's start (each string once,
// every table opened with its zero entry as OTLP producers write them).
type profileBuilder struct {
	*profiletest.Dict
	d          pprofile.ProfilesDictionary
	frameTypes map[string]int32 // the profile.frame.type attribute of each frame type
}

func newProfileBuilder() *profileBuilder {
	x := profiletest.NewDict()
	return &profileBuilder{Dict: x, d: x.Profiles.Dictionary(), frameTypes: map[string]int32{}}
}

func (b *profileBuilder) link(ref spanRef) int32 {
	l := b.d.LinkTable().AppendEmpty()
	l.SetTraceID(ref.trace)
	l.SetSpanID(ref.span)
	return int32(b.d.LinkTable().Len() - 1)
}

// profilerResource is the eBPF profiler's resource for service s's process (the i-th): it
// shares with the traces' resource (setResource) only service.name and container.id.
func profilerResource(r pcommon.Resource, s *service, i int) {
	a := r.Attributes()
	a.PutStr("service.name", s.name)
	a.PutInt("process.pid", int64(31000+i))
	a.PutStr("process.executable.name", runtimeOf[s.lang].exe)
	a.PutStr("process.executable.path", "/usr/bin/"+runtimeOf[s.lang].exe)
	a.PutStr("container.id", containerID(s))
	a.PutStr("host.name", "node-1")
}

// runtimeOf is what runs each language's code: the frame type of its own frames, the
// native library beside them, their source file, the executable, and the runtime's or a
// library's frame under them.
var runtimeOf = map[string]struct{ frameType, lib, file, exe, libFn, libFile string }{
	"go": {
		"go", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/app/server/handlers.go", "server",
		"net/http.(*conn).serve", "/usr/local/go/src/net/http/server.go",
	},
	"java": {
		"jvm", "/usr/lib/jvm/java-21-openjdk/lib/server/libjvm.so", "StockController.java", "java",
		"void java.lang.Thread.run()", "Thread.java",
	},
	"python": {
		"cpython", "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0", "/app/payments/views.py", "python3.12",
		"WSGIHandler.__call__", "/usr/local/lib/python3.12/site-packages/django/core/handlers/wsgi.py",
	},
}

// ownFunction is the name the eBPF profiler gives one of service s's functions: Go's
// package-qualified name, a JVM method's signature, a Python function's name.
func ownFunction(s *service, fn string) string {
	pkg := strings.ReplaceAll(s.name, "-", "_")
	switch s.lang {
	case "go":
		return "github.com/example/" + pkg + "/server.(*Handler)." + fn
	case "java":
		return "void com.example." + pkg + ".StockController." + fn + "(java.util.List)"
	}
	return fn
}

// stacks adds n stacks for service s, each depth of its own frames over its runtime's
// library frame, a native and a kernel frame, leaf first, and returns their indexes.
func (b *profileBuilder) stacks(s *service, n, depth int) []int32 {
	rt := runtimeOf[s.lang]
	lib := b.mapping(rt.lib, "3f2a9c41d07e5b8866a1f0c2d4e6b8a0c1e3f5a7")
	kernel := b.mapping("[kernel.kallsyms]", "")
	out := make([]int32, n)
	for i := range out {
		locs := []int32{
			b.location(0xffffffff81000000+uint64(i%7)*0x40, kernel, "kernel", "", "", 0),
			b.location(0x7f3a1c000000+uint64(i%11)*0x120, lib, "native", "", "", 0),
		}
		for d := range depth {
			fn := fmt.Sprintf("%s%d", []string{"handle", "query", "render", "encode"}[d%4], (i*depth+d)%(n*depth/4+1))
			locs = append(locs, b.location(0, 0, rt.frameType, ownFunction(s, fn), rt.file, int64(20+d*7)))
		}
		locs = append(locs, b.location(0, 0, rt.frameType, rt.libFn, rt.libFile, 1000))
		out[i] = b.Stack(locs...)
	}
	return out
}

func (b *profileBuilder) mapping(file, buildID string) int32 {
	m := b.d.MappingTable().AppendEmpty()
	m.SetFilenameStrindex(b.Str(file))
	m.SetMemoryStart(0x7f3a1c000000)
	m.SetMemoryLimit(0x7f3a1c400000)
	if buildID != "" {
		m.AttributeIndices().Append(b.Attr("process.executable.build_id.gnu", buildID))
	}
	return int32(b.d.MappingTable().Len() - 1)
}

// location adds a frame: native ones (fn "") an address in mapping, interpreted ones a
// function, file and line.
func (b *profileBuilder) location(addr uint64, mapping int32, frameType, fn, file string, line int64) int32 {
	l := b.d.LocationTable().AppendEmpty()
	l.SetAddress(addr)
	l.SetMappingIndex(mapping)
	ft, ok := b.frameTypes[frameType]
	if !ok {
		ft = b.Attr("profile.frame.type", frameType)
		b.frameTypes[frameType] = ft
	}
	l.AttributeIndices().Append(ft)
	if fn != "" {
		f := b.d.FunctionTable().AppendEmpty()
		f.SetNameStrindex(b.Str(fn))
		f.SetFilenameStrindex(b.Str(file))
		ln := l.Lines().AppendEmpty()
		ln.SetFunctionIndex(int32(b.d.FunctionTable().Len() - 1))
		ln.SetLine(line)
	}
	return int32(b.d.LocationTable().Len() - 1)
}

// profileTotals are the sender's profile counters.
type profileTotals struct {
	profiles, profileSamples, failedProfiles, rejectedProfiles atomic.Int64
	profileChunks, profileChunkSamples, profileDurationMs      atomic.Int64
}

// sendProfiles POSTs one profiles export and counts it.
func (s *sender) sendProfiles(ctx context.Context, pd pprofile.Profiles, pc profileCounts) {
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		s.fail("profiles marshal error")
		return
	}
	rb, ok := s.post(ctx, "profiles", s.profilesURL, b)
	if !ok {
		s.failedProfiles.Add(int64(pc.profiles))
		return
	}
	s.profiles.Add(int64(pc.profiles))
	s.profileSamples.Add(int64(pc.samples))
	s.profileChunks.Add(pc.chunks)
	s.profileChunkSamples.Add(pc.chunkSamples)
	s.profileDurationMs.Add(pc.durationMs)
	resp := pprofileotlp.NewExportResponse()
	if resp.UnmarshalProto(rb) == nil {
		s.rejectedProfiles.Add(resp.PartialSuccess().RejectedProfiles())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byService == nil {
		s.byService = map[string]ServiceTotals{}
	}
	for name, c := range pc.byService {
		t := s.byService[name]
		t.ProfileChunks += c.chunks
		t.ProfileChunkSamples += c.chunkSamples
		s.byService[name] = t
	}
}

// runProfilesEvery exports one profile per service each interval until ctx ends, then
// the last part-interval once more, as a profiler's shutdown does.
func (s *sender) runProfilesEvery(ctx context.Context, p *profiler, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	from := time.Now()
	for {
		select {
		case <-ctx.Done():
			if now := time.Now(); now.Sub(from) >= 2*time.Second/time.Duration(p.hz) { // two ticks at least
				s.exportProfiles(context.WithoutCancel(ctx), p, from, now)
			}
			return
		case now := <-t.C:
			s.exportProfiles(ctx, p, from, now)
			from = now
		}
	}
}

// exportProfiles sends the profiles of every service for [from, to), perRequest services a request.
func (s *sender) exportProfiles(ctx context.Context, p *profiler, from, to time.Time) {
	for first := 0; first < len(p.services); first += p.perRequest {
		pd, pc := p.collect(from, to, first, p.perRequest)
		s.sendProfiles(ctx, pd, pc)
	}
}

// profilesAtRate exports the profiler's services' CPU samples as fast as --rate samples a
// second allow (--signals profiles): each export is the next 5 s of every service's samples.
func (s *sender) profilesAtRate(ctx context.Context, lim *limiter, p *profiler) {
	from := time.Now()
	for ctx.Err() == nil {
		to := from.Add(5 * time.Second)
		pd, pc := p.collect(from, to, 0, len(p.services))
		if !lim.wait(ctx, pc.samples) {
			return
		}
		s.sendProfiles(ctx, pd, pc)
		from = to
	}
}
