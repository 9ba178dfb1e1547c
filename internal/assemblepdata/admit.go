package assemblepdata

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/assemble"
)

// scratch is what one Admit call needs for its batch's references and
// verdicts, reused across calls.
type scratch struct {
	refs    []assemble.Ref
	verdict []assemble.Verdict
}

// Admit passes td, a batch of owner p, through assembly. out is what of p's
// spans goes now: td itself when none of it is held and nothing held joins
// it (no copy), else a new batch of the spans that go now (passing,
// late, and held ones released with a root of this batch); some is false
// when none does. others are the held spans of other owners that a root of
// this batch released, a batch per owner. Fragments are counted to their
// owners.
func (a *Assembly[P]) Admit(ctx context.Context, now time.Time, p P, td ptrace.Traces) (out ptrace.Traces, some bool, others map[P]ptrace.Traces) {
	sc, _ := a.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer a.scratch.Put(sc)
	rss := td.ResourceSpans()
	refs, verdict := sc.refsOf(rss, a.idOf(p))
	cur := cursor{rss: rss}
	rel := a.asm.Admit(now, refs, verdict, func(i int) (heldSpan[P], int64) { return a.hold(p, &cur, i) })
	held, late := tally(verdict)
	if late > 0 {
		p.CountFragments(ctx, assemble.AfterRoot, late)
	}
	if held == 0 && len(rel) == 0 {
		return td, true, nil // late spans go on with their batch: nothing joins it
	}
	out = ptrace.NewTraces()
	if held > 0 {
		appendPassing(out, rss, verdict)
	} else {
		td.CopyTo(out)
	}
	others = place(ctx, p, out, rel)
	return out, out.SpanCount() > 0, others
}

// hold copies the i-th span of the batch under cur for owner p, and charges
// p its estimated size (with its resource and scope, when it is the first
// span held with them).
func (a *Assembly[P]) hold(p P, cur *cursor, i int) (heldSpan[P], int64) {
	sp, from, fresh := cur.at(i)
	h := heldSpan[P]{owner: p, from: from, span: ptrace.NewSpan()}
	sp.CopyTo(h.span)
	h.size = heldSpanSize(a.sizer.SpanSize(h.span))
	if fresh {
		h.size += heldScopeSize(a.sizer.ResourceSpansSize(from.rs))
	}
	p.HoldAssembled(h.size)
	return h, h.size
}

// refsOf is the assembler's reference of each span of rss, of owner, in
// order, and a verdict slice of the same length.
func (sc *scratch) refsOf(rss ptrace.ResourceSpansSlice, owner uint32) ([]assemble.Ref, []assemble.Verdict) {
	refs := sc.refs[:0]
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			refs = appendRefs(refs, sss.At(j).Spans(), owner)
		}
	}
	sc.refs = refs
	if cap(sc.verdict) < len(refs) {
		sc.verdict = make([]assemble.Verdict, len(refs))
	}
	return refs, sc.verdict[:len(refs)]
}

func appendRefs(refs []assemble.Ref, sps ptrace.SpanSlice, owner uint32) []assemble.Ref {
	for k := range sps.Len() {
		sp := sps.At(k)
		parent := [8]byte(sp.ParentSpanID())
		kind := sp.Kind()
		refs = append(refs, assemble.Ref{
			Owner: owner, Trace: sp.TraceID(), ID: sp.SpanID(), Parent: parent,
			Root: assemble.LocalRoot(parent, sp.Flags(), kind == ptrace.SpanKindServer || kind == ptrace.SpanKindConsumer),
		})
	}
	return refs
}

// tally counts the held and the late spans of a batch's verdicts.
func tally(verdict []assemble.Verdict) (held, late int64) {
	for _, v := range verdict {
		switch v {
		case assemble.Held:
			held++
		case assemble.Late:
			late++
		}
	}
	return held, late
}
