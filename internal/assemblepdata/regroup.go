package assemblepdata

import (
	"context"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/assemble"
)

// appendPassing appends to dst the spans of rss whose verdict is not Held,
// in order, each ResourceSpans and ScopeSpans copied (without their spans)
// at their first span that passes.
func appendPassing(dst ptrace.Traces, rss ptrace.ResourceSpansSlice, verdict []assemble.Verdict) {
	i := 0
	for r := range rss.Len() {
		rs := rss.At(r)
		var to ptrace.ResourceSpans
		haveRS := false
		sss := rs.ScopeSpans()
		for s := range sss.Len() {
			ss := sss.At(s)
			n := ss.Spans().Len()
			if anyPasses(verdict[i : i+n]) {
				if !haveRS {
					to, haveRS = appendResource(dst.ResourceSpans(), rs), true
				}
				copyPassing(appendScope(to, ss), ss.Spans(), verdict[i:i+n])
			}
			i += n
		}
	}
}

func anyPasses(verdict []assemble.Verdict) bool {
	for _, v := range verdict {
		if v != assemble.Held {
			return true
		}
	}
	return false
}

// copyPassing appends to dst copies of the spans of sps whose verdict is not Held.
func copyPassing(dst ptrace.ScopeSpans, sps ptrace.SpanSlice, verdict []assemble.Verdict) {
	for k := range sps.Len() {
		if verdict[k] != assemble.Held {
			sps.At(k).CopyTo(dst.Spans().AppendEmpty())
		}
	}
}

// place moves released groups into dst (p's batch) or into a batch per
// other owner, tells each owner of the bytes no longer held, and counts
// fragments by owner and reason. With p the zero P, which owns no span,
// every owner's spans go into the batches returned.
func place[P Owner](ctx context.Context, p P, dst ptrace.Traces, rel []assemble.Released[heldSpan[P]]) map[P]ptrace.Traces {
	if len(rel) == 0 {
		return nil
	}
	g := regroup[P]{p: p, dst: dst, scopes: map[scopeKey[P]]ptrace.ScopeSpans{}}
	for _, grp := range rel {
		for i := range grp.Items {
			h := &grp.Items[i]
			h.owner.HoldAssembled(-h.size)
			h.span.MoveTo(g.scope(h).Spans().AppendEmpty())
			if grp.Reason != assemble.WithRoot {
				g.fragment(h.owner, grp.Reason)
			}
		}
	}
	for k, n := range g.frags {
		k.owner.CountFragments(ctx, k.why, n)
	}
	return g.others
}

type scopeKey[P Owner] struct {
	owner P
	from  *heldScope
}

type fragKey[P Owner] struct {
	owner P
	why   assemble.Reason
}

// regroup is one place call's batches: p's (dst), the other owners', and
// the scope in them of each held scope, and the fragments counted.
type regroup[P Owner] struct {
	p      P
	dst    ptrace.Traces
	others map[P]ptrace.Traces
	scopes map[scopeKey[P]]ptrace.ScopeSpans
	frags  map[fragKey[P]]int64
}

// scope is the ScopeSpans that h goes into: a copy of its held resource and
// scope in its owner's batch, made at the first of its spans.
func (g *regroup[P]) scope(h *heldSpan[P]) ptrace.ScopeSpans {
	k := scopeKey[P]{h.owner, h.from}
	if ss, ok := g.scopes[k]; ok {
		return ss
	}
	rs := g.batch(h.owner).ResourceSpans().AppendEmpty()
	h.from.rs.CopyTo(rs)
	ss := rs.ScopeSpans().At(0)
	g.scopes[k] = ss
	return ss
}

// batch is owner's batch: dst for p, else one of others, made on first use.
func (g *regroup[P]) batch(owner P) ptrace.Traces {
	if owner == g.p {
		return g.dst
	}
	if g.others == nil {
		g.others = map[P]ptrace.Traces{}
	}
	td, ok := g.others[owner]
	if !ok {
		td = ptrace.NewTraces()
		g.others[owner] = td
	}
	return td
}

func (g *regroup[P]) fragment(owner P, why assemble.Reason) {
	if g.frags == nil {
		g.frags = map[fragKey[P]]int64{}
	}
	g.frags[fragKey[P]{owner, why}]++
}
