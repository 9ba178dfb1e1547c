// A project's profiles pipeline: gated on its profile types' categories
// before translating (internal/gate), translated into profile chunks
// (internal/profilechunk), each chunk's profiler remembered for its
// process's transactions (internal/profilers), encoded one chunk per
// envelope (internal/encode) and offered to the project's lane.

package sentryexporter

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
	"github.com/otel-sentry/sentryexporter/internal/profilers"
	"github.com/otel-sentry/sentryexporter/internal/send"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// pushProfiles translates a push's profiles into profile chunks, unless
// the chunks' profile type is rate limited (profile_chunk or
// profile_duration, their _ui pair for a UI platform, or everything): then
// they are only counted, ratelimit_backoff, in every category they would
// have counted in. What cannot become a chunk is counted invalid.
func (p *project) pushProfiles(ctx context.Context, pd pprofile.Profiles) error {
	e := p.exp
	now := time.Now()
	limits := p.limits.Load()
	room := &chunkRoom{lane: p.lane}
	defer room.release()
	res := e.profiles.Profiles(pd, profilechunk.Want{
		Backend: !gate.GateProfileChunk.Limited(limits, now),
		UI:      !gate.GateProfileChunkUI.Limited(limits, now),
		Room:    room,
	})
	p.accountUnsent(ctx, &res)
	if len(res.Chunks) == 0 {
		return nil
	}
	out := make([]encode.Outgoing, 0, len(res.Chunks))
	rps := pd.ResourceProfiles()
	for i := range res.Chunks {
		c := &res.Chunks[i]
		out = append(out, p.enc.ProfileChunk(&encode.ProfileChunk{
			Payload: c.Payload, Platform: c.Platform, UI: c.UI, DurationMs: c.DurationMs, Halvable: c.Samples >= minHalvableSamples,
		}, e.halveChunk))
		p.rememberProfiler(rps.At(c.Resource).Resource(), c, now)
	}
	room.release() // from here each chunk's envelope is counted by the lane's own room check
	p.lane.Offer(ctx, out, nil)
	return nil
}

// chunkRoom reserves the project's profile chunks in the memory budget, in
// the project's lane, while they are rendered: what a push's chunks hold
// before they are offered is within the budget, the project's share of it
// when the budget is full.
type chunkRoom struct {
	lane *send.Lane
	held int64
}

func (r *chunkRoom) Take(n int64) bool {
	if !r.lane.Reserve(n) {
		return false
	}
	r.held += n
	return true
}

func (r *chunkRoom) Give(n int64) {
	r.lane.Unreserve(n)
	r.held -= n
}

// release gives back all the room holds.
func (r *chunkRoom) release() { r.Give(r.held) }

// minHalvableSamples: profilechunk's Halve cuts no chunk of fewer samples
// (each half keeps every thread's two non-idle samples Relay requires).
const minHalvableSamples = 4

// halveChunk is encode's ChunkHalver: the translator's cut of a chunk by
// time, from its payload alone (what a detached envelope still holds).
func (e *sentryExporter) halveChunk(payload []byte) (a, b []byte, aMs, bMs int64, ok bool) {
	first, second, ok := e.profiles.Halve(profilechunk.Chunk{Payload: payload})
	return first.Payload, second.Payload, first.DurationMs, second.DurationMs, ok
}

// accountUnsent counts what res did not render: its profile types' limited
// chunks (ratelimit_backoff); profiles no chunk can carry (no sample
// representable, samples without timestamps, a sample type other than CPU
// or wall time: invalid); a profile repeating another's samples in another
// unit (deduplicated: nothing is lost); chunks the memory budget had no room
// for (queue_overflow).
func (p *project) accountUnsent(ctx context.Context, res *profilechunk.Result) {
	p.acct.Dropped(ctx, account.ReasonRateLimitBackoff, res.Skipped)
	p.acct.Dropped(ctx, account.ReasonQueueOverflow, res.NoRoom)
	for _, c := range []account.Counts{res.Invalid, res.NoTimestamps, res.Unsupported} {
		p.acct.Dropped(ctx, account.ReasonInvalid, c)
	}
	p.acct.Dropped(ctx, account.ReasonDeduplicated, res.Duplicate)
}

// processIdentity are the resource attributes internal/profilechunk
// derives a process's profiler_id from (profilerid.go), in its order.
var processIdentity = [...]string{
	"service.namespace", "service.name", "service.instance.id",
	"host.id", "host.name", "k8s.pod.uid", "container.id",
}

// hasIdentity reports whether r names its process by any identity
// attribute: the chunks of a resource without are never linked by its
// whole identity (every such process would share one).
func hasIdentity(r pcommon.Resource) bool {
	for _, k := range processIdentity {
		if _, ok := r.Attributes().Get(k); ok {
			return true
		}
	}
	return false
}

// wholeIdentityID is profilechunk.ProfilerID over r's identity attributes
// and pid, as the translator derives it from a profile's resource without
// a shared identity: a trace's resource and its own process's profile's
// meet on it (TestTransactionLinksItsProcessProfile); "" for a resource
// without identity.
func wholeIdentityID(r pcommon.Resource, pid string) string {
	if !hasIdentity(r) {
		return ""
	}
	attrs := r.Attributes()
	var identity []byte
	for _, k := range processIdentity {
		if v, ok := attrs.Get(k); ok {
			identity = append(identity, k...)
			identity = append(identity, '=')
			identity = append(identity, v.AsString()...)
			identity = append(identity, '\n')
		}
	}
	return profilechunk.ProfilerID("", identity, pid)
}

// pidOf is r's process.pid as profilechunk writes it; "" without one.
func pidOf(r pcommon.Resource) string {
	v, ok := r.Attributes().Get("process.pid")
	if !ok {
		return ""
	}
	return profilechunk.PIDString(v)
}

// sharedKeys are the registry keys of the identities an SDK's resource and
// a profiler's (the eBPF profiler's: process.pid, process.executable.*,
// container.id, host.*) both carry for one process, strongest first: the
// container, the pid on its host (outside containers: inside one, the SDK
// sees its namespace's pid and the profiler the host's), the pod. pid is
// the chunk's process.pid, or the resource's for a transaction.
func sharedKeys(r pcommon.Resource, pid string, dst []string) []string {
	a := r.Attributes()
	if v, ok := a.Get("container.id"); ok && v.AsString() != "" {
		dst = append(dst, "container.id="+v.AsString())
	}
	if pid != "" {
		for _, k := range [...]string{"host.id", "host.name"} {
			if v, ok := a.Get(k); ok && v.AsString() != "" {
				dst = append(dst, k+"="+v.AsString()+" process.pid="+pid)
			}
		}
	}
	if v, ok := a.Get("k8s.pod.uid"); ok && v.AsString() != "" {
		dst = append(dst, "k8s.pod.uid="+v.AsString())
	}
	return dst
}

// spanKey is the registry key of a span some samples ran in.
func spanKey(trace [16]byte, span [8]byte) string {
	return "span=" + string(trace[:]) + string(span[:])
}

// rememberProfiler records chunk c of resource r in the project's share of
// the profilers registry under every key a transaction may find it by: its
// profiler_id (the same resource's), the identities an SDK's resource
// shares with it (sharedKeys), and each span its samples ran in, with
// their thread.
func (p *project) rememberProfiler(r pcommon.Resource, c *profilechunk.Chunk, now time.Time) {
	reg, proj := p.exp.profilers, p.dsn.ProjectID
	pr := profilers.Profiler{ID: c.ProfilerID, UI: c.UI}
	if id := wholeIdentityID(r, c.PID); id != "" {
		reg.Seen(proj, "id="+id, pr, now)
	}
	var keys [4]string
	for _, k := range sharedKeys(r, c.PID, keys[:0]) {
		reg.Seen(proj, k, pr, now)
	}
	for _, l := range c.Spans {
		reg.Seen(proj, spanKey(l.TraceID, l.SpanID), profilers.Profiler{ID: c.ProfilerID, UI: c.UI, Thread: l.Thread}, now)
	}
}

// profilerOf is what names a transaction's profiler (translate's
// TracesWant.ProfilerOf) at now: the profiler its process's chunks named
// within profilerTTL, found by the resource's whole identity (then its
// thread ids are the spans' kind) or by an identity the profiler's
// resource shares (sharedKeys); else, with profiles.all_processes_profiled_by,
// the profiler_id that identity derives (assumedProfiler). Never one whose
// chunks are rate limited (Relay removes the profile context then too: a
// transaction never names a profiler whose chunks cannot arrive). nil when
// nothing can be named: nothing is asked.
func (p *project) profilerOf(limits ratelimit.Limits, now time.Time) func(pcommon.Resource) translate.Profiler {
	reg, proj, assumeBy := p.exp.profilers, p.dsn.ProjectID, p.exp.cfg.Profiles.AllProcessesProfiledBy
	if reg.Len(proj) == 0 && assumeBy == "" {
		return nil
	}
	return func(r pcommon.Resource) translate.Profiler {
		var keys [5]string
		ks := keys[:0]
		pid := pidOf(r)
		if id := wholeIdentityID(r, pid); id != "" {
			ks = append(ks, "id="+id)
		}
		for _, k := range sharedKeys(r, pid, ks) {
			if pr, ok := reg.Of(proj, k, now); ok && !chunksLimited(pr, limits, now) {
				return translate.Profiler{ID: pr.ID, OwnThreads: strings.HasPrefix(k, "id=")}
			}
		}
		return assumedProfiler(r, assumeBy, pid, limits, now)
	}
}

// assumedProfiler is the profiler a process whose resource carries the
// identity key names when every such process is profiled (the operator's
// profiles.all_processes_profiled_by): the profiler_id the translator
// derives from that identity alone, on a replica that never saw its
// chunks too, the profiles' loadbalancing having no pipeline. Its chunks'
// platform is unknown here, so neither profile type may be limited.
func assumedProfiler(r pcommon.Resource, key, pid string, limits ratelimit.Limits, now time.Time) translate.Profiler {
	if key == "" {
		return translate.Profiler{}
	}
	v, ok := r.Attributes().Get(key)
	if !ok || gate.GateProfileChunk.Limited(limits, now) || gate.GateProfileChunkUI.Limited(limits, now) {
		return translate.Profiler{}
	}
	return translate.Profiler{ID: profilechunk.SharedProfilerID(key, v.AsString(), pid)}
}

// spanProfilerOf is translate's TracesWant.SpanProfilerOf: the profiler
// whose samples ran in a span, and their thread, as the project's chunks'
// sample links said (nil when the project holds no profiler).
func (p *project) spanProfilerOf(limits ratelimit.Limits, now time.Time) translate.SpanProfilerOf {
	reg, proj := p.exp.profilers, p.dsn.ProjectID
	if reg.Len(proj) == 0 {
		return nil
	}
	return func(trace [16]byte, span [8]byte) (string, string, bool) {
		pr, ok := reg.Of(proj, spanKey(trace, span), now)
		if !ok || chunksLimited(pr, limits, now) {
			return "", "", false
		}
		return pr.ID, pr.Thread, true
	}
}

func chunksLimited(pr profilers.Profiler, limits ratelimit.Limits, now time.Time) bool {
	g := gate.GateProfileChunk
	if pr.UI {
		g = gate.GateProfileChunkUI
	}
	return g.Limited(limits, now)
}
