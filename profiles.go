// A project's profiles pipeline: gated on its profile types' categories
// before translating (internal/gate), translated into profile chunks
// (internal/profilechunk), each chunk's profiler remembered for its
// process's transactions (internal/profilers), encoded one chunk per
// envelope (internal/encode) and offered to the project's lane.

package sentryexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
	"github.com/otel-sentry/sentryexporter/internal/profilers"
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
	res := e.profiles.Profiles(pd, profilechunk.Want{
		Backend: !gate.GateProfileChunk.Limited(limits, now),
		UI:      !gate.GateProfileChunkUI.Limited(limits, now),
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
		e.profilers.Seen(processKey(rps.At(c.Resource).Resource()), profilers.Profiler{ID: c.ProfilerID, UI: c.UI}, now)
	}
	p.lane.Offer(ctx, out, nil)
	return nil
}

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
// unit (deduplicated: nothing is lost).
func (p *project) accountUnsent(ctx context.Context, res *profilechunk.Result) {
	p.acct.Dropped(ctx, account.ReasonRateLimitBackoff, res.Skipped)
	for _, c := range []account.Counts{res.Invalid, res.NoTimestamps, res.Unsupported} {
		p.acct.Dropped(ctx, account.ReasonInvalid, c)
	}
	p.acct.Dropped(ctx, account.ReasonDeduplicated, res.Duplicate)
}

// processIdentity are the resource attributes that tell one process from
// another, as internal/profilechunk derives a profiler_id from them, with
// process.pid.
var processIdentity = [...]string{
	"service.namespace", "service.name", "service.instance.id",
	"host.id", "host.name", "k8s.pod.uid", "container.id", "process.pid",
}

// processKey is the key of a resource's process in the profilers seen:
// the same for the resource of a process's profiles and of its spans when
// they carry the same identity; "" (never remembered) for a resource with
// none of it.
func processKey(r pcommon.Resource) string {
	var b []byte
	for _, k := range processIdentity {
		if v, ok := r.Attributes().Get(k); ok {
			b = append(b, k...)
			b = append(b, '=')
			b = append(b, v.AsString()...)
			b = append(b, '\n')
		}
	}
	return string(b)
}

// profilerOf is what names a transaction's profiler (translate's
// TracesWant.ProfilerOf) at now: the profiler its process's last chunk
// named within profilerTTL, unless chunks of that profile type are rate
// limited (Relay removes the profile context then too: a transaction never
// names a profiler whose chunks cannot arrive). nil when no process has
// sent a chunk (no profiles pipeline): nothing is asked.
func (p *project) profilerOf(limits ratelimit.Limits, now time.Time) func(pcommon.Resource) string {
	reg := p.exp.profilers
	if reg.Len() == 0 {
		return nil
	}
	return func(r pcommon.Resource) string {
		pr, ok := reg.Of(processKey(r), now)
		if !ok {
			return ""
		}
		g := gate.GateProfileChunk
		if pr.UI {
			g = gate.GateProfileChunkUI
		}
		if g.Limited(limits, now) {
			return ""
		}
		return pr.ID
	}
}
