// The adapter between pdata batches and internal/assemble, which holds
// spans of any type and knows no pdata: it gives the assembler each span's
// reference, copies the spans it holds, rebuilds a batch per project from
// what comes out, and counts fragments. It is in the root because held spans
// of one project come out with another project's push, and go on through
// their own project's pipeline (project.go).

package sentryexporter

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otel-sentry/sentryexporter/internal/assemble"
)

// Trace assembly (docs/assembly.md). One assembler is shared by all projects,
// after routing and before translation: a trace's spans are held together
// whatever project they route to, assembly::max_bytes bounds them all, and
// each project's share is kept in the project (heldBytes) for the gauge. What
// comes out is translated at once by its project's pipeline, so rate limits,
// accounting and error extraction apply when a span is released.
type assembly struct {
	asm     *assemble.Assembler[heldSpan]
	scratch sync.Pool // *admitScratch
	sizer   ptrace.ProtoMarshaler
}

// heldSpan is one span held in assembly: a copy of the span, and the
// resource and scope it came with (shared by the spans of one batch's scope).
type heldSpan struct {
	p    *project
	from *heldScope
	span ptrace.Span
	size int64
}

// heldScope is a copy of a ResourceSpans' resource and one ScopeSpans' scope
// (with their schema URLs), without spans.
type heldScope struct{ rs ptrace.ResourceSpans }

// A held span's size is estimated from its protobuf size: heldSpanSize
// calibrates it against the heap a held span takes (the pdata structs, the
// node, the maps' entries). Measured live heap after GC, 30,000 held spans of
// 150 B to 3.4 KB protobuf: 1.4 × protobuf + ~460 B, within 1 %; 512 B keeps
// a margin for the smallest spans (TestAssemblyEstimateCoversTheHeap).
const heldSpanOverhead = 512

func heldSpanSize(protoBytes int) int64 { return int64(protoBytes)*7/5 + heldSpanOverhead }

// rememberSentIDs is how many sent span ids per generation assembly
// remembers, to send a late child at once: 2 × 100,000 × ~40 B ≈ 8 MiB.
const rememberSentIDs = 100_000

type admitScratch struct {
	refs    []assemble.Ref
	verdict []assemble.Verdict
}

func newAssembly(cfg AssemblyConfig) *assembly {
	if cfg.Wait <= 0 {
		return nil
	}
	return &assembly{asm: assemble.New[heldSpan](assemble.Config{Wait: cfg.Wait, MaxBytes: cfg.MaxBytes, Remember: rememberSentIDs})}
}

// admit passes td through assembly for project p. It returns what to
// translate now: td itself when the batch is complete and nothing held joins
// it (no copy), else a new batch of the spans that go now (passing, late, and
// held ones released with a root of this batch). Held spans of other projects
// that come out are sent by their projects here; fragments are counted.
func (a *assembly) admit(ctx context.Context, p *project, td ptrace.Traces) (ptrace.Traces, bool) {
	sc, _ := a.scratch.Get().(*admitScratch)
	if sc == nil {
		sc = &admitScratch{}
	}
	defer a.scratch.Put(sc)
	refs := sc.refs[:0]
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			sps := sss.At(j).Spans()
			for k := range sps.Len() {
				sp := sps.At(k)
				parent := [8]byte(sp.ParentSpanID())
				kind := sp.Kind()
				refs = append(refs, assemble.Ref{
					Trace: sp.TraceID(), ID: sp.SpanID(), Parent: parent,
					Root: assemble.LocalRoot(parent, sp.Flags(), kind == ptrace.SpanKindServer || kind == ptrace.SpanKindConsumer),
				})
			}
		}
	}
	sc.refs = refs
	if cap(sc.verdict) < len(refs) {
		sc.verdict = make([]assemble.Verdict, len(refs))
	}
	verdict := sc.verdict[:len(refs)]

	cur := cursor{rss: rss}
	rel := a.asm.Admit(p.exp.clk.now(), refs, verdict, func(i int) (heldSpan, int64) {
		sp, from, fresh := cur.at(i)
		h := heldSpan{p: p, from: from, span: ptrace.NewSpan()}
		sp.CopyTo(h.span)
		h.size = heldSpanSize(a.sizer.SpanSize(h.span))
		if fresh { // the resource and scope are charged to the first span held with them
			h.size += int64(a.sizer.ResourceSpansSize(from.rs)) * 7 / 5
		}
		p.holdAssembled(h.size)
		return h, h.size
	})
	allPass := true
	late := int64(0)
	for _, v := range verdict {
		switch v {
		case assemble.Held:
			allPass = false
		case assemble.Late:
			allPass = false
			late++
		}
	}
	if allPass && len(rel) == 0 {
		return td, true
	}
	p.exp.countFragments(ctx, p, assemble.AfterRoot, late)

	// Some spans go now, some wait: a new batch of those that go.
	now := ptrace.NewTraces()
	if !allPass {
		i := 0
		for r := range rss.Len() {
			rs := rss.At(r)
			sss := rs.ScopeSpans()
			var dstRS ptrace.ResourceSpans
			haveRS := false
			for s := range sss.Len() {
				ss := sss.At(s)
				sps := ss.Spans()
				var dstSS ptrace.ScopeSpans
				haveSS := false
				for k := range sps.Len() {
					if verdict[i] != assemble.Held {
						if !haveRS {
							dstRS, haveRS = appendResource(now.ResourceSpans(), rs), true
						}
						if !haveSS {
							dstSS, haveSS = appendScope(dstRS, ss), true
						}
						sps.At(k).CopyTo(dstSS.Spans().AppendEmpty())
					}
					i++
				}
			}
		}
	} else {
		td.CopyTo(now)
	}
	others := a.place(ctx, p, now, rel)
	for q, otd := range others {
		q.translateTraces(ctx, otd)
	}
	return now, now.SpanCount() > 0
}

// place puts released groups into dst (p's) or into a batch per other
// project, counting fragments by reason. With p nil, every project's spans
// go into the batches returned.
func (*assembly) place(ctx context.Context, p *project, dst ptrace.Traces, rel []assemble.Released[heldSpan]) map[*project]ptrace.Traces {
	var others map[*project]ptrace.Traces
	type scopeKey struct {
		p    *project
		from *heldScope
	}
	type fragKey struct {
		p   *project
		why assemble.Reason
	}
	scopes := map[scopeKey]ptrace.ScopeSpans{}
	var frags map[fragKey]int64
	for _, g := range rel {
		for _, h := range g.Items {
			h.p.holdAssembled(-h.size)
			ss, ok := scopes[scopeKey{h.p, h.from}]
			if !ok {
				to := dst
				if h.p != p {
					if others == nil {
						others = map[*project]ptrace.Traces{}
					}
					if to, ok = others[h.p]; !ok {
						to = ptrace.NewTraces()
						others[h.p] = to
					}
				}
				rs := to.ResourceSpans().AppendEmpty()
				h.from.rs.CopyTo(rs)
				ss = rs.ScopeSpans().At(0)
				scopes[scopeKey{h.p, h.from}] = ss
			}
			h.span.MoveTo(ss.Spans().AppendEmpty())
			if g.Reason != assemble.WithRoot {
				if frags == nil {
					frags = map[fragKey]int64{}
				}
				frags[fragKey{h.p, g.Reason}]++
			}
		}
	}
	for k, n := range frags {
		k.p.exp.countFragments(ctx, k.p, k.why, n)
	}
	return others
}

// releaseHeld sends groups that came out of assembly without a push of theirs
// (expired, shutdown), each project's spans through its pipeline.
func (e *sentryExporter) releaseHeld(ctx context.Context, rel []assemble.Released[heldSpan]) {
	if len(rel) == 0 {
		return
	}
	for p, td := range e.asm.place(ctx, nil, ptrace.Traces{}, rel) {
		p.translateTraces(ctx, td)
	}
}

// expireHeld sends the held spans whose wait is over.
func (e *sentryExporter) expireHeld(ctx context.Context) {
	if e.asm == nil {
		return
	}
	e.releaseHeld(ctx, e.asm.asm.Expire(e.clk.now()))
}

// flushHeld sends everything held (shutdown); from then on nothing is held.
func (e *sentryExporter) flushHeld(ctx context.Context) {
	if e.asm == nil {
		return
	}
	e.releaseHeld(ctx, e.asm.asm.Flush())
}

// heldInAssembly reports whether span (trace, id) is held in assembly.
func (e *sentryExporter) heldInAssembly(traceID [16]byte, id [8]byte) bool {
	return e.asm.asm.Held(traceID, id) // only asked when assembly is on (exporter.go)
}

// holdAssembled counts n more bytes of p's spans held in assembly (fewer
// when negative): in the project's gauge and in the memory budget.
func (p *project) holdAssembled(n int64) {
	p.heldBytes.Add(n)
	p.exp.asmMem.Add(n)
}

// countFragments counts n spans of p sent without their local root.
func (e *sentryExporter) countFragments(ctx context.Context, p *project, why assemble.Reason, n int64) {
	if n <= 0 {
		return
	}
	e.tb.ExporterSentryAssemblyFragments.Add(ctx, n, metric.WithAttributes(p.acct.Project, attribute.String("assembly_reason", why.String())))
}

// assemblyTick is how often expired spans are looked for when no push
// comes by: a fragment goes out at most this long after its wait is over.
func (e *sentryExporter) assemblyTick() time.Duration {
	return min(max(e.cfg.Assembly.Wait/10, 100*time.Millisecond), time.Second)
}

// cursor finds the i-th span of a batch for Admit's hold callback, which
// asks in increasing order: it walks the batch once, and makes one heldScope
// per ScopeSpans that has a held span.
type cursor struct {
	rss     ptrace.ResourceSpansSlice
	r, s, k int // position of span i
	i       int
	started bool
	scope   *heldScope
	scopeAt [2]int
}

func (c *cursor) at(i int) (ptrace.Span, *heldScope, bool) {
	if !c.started {
		c.started = true
		c.skipEmpty()
	}
	for c.i < i {
		c.k++
		c.i++
		c.skipEmpty()
	}
	rs := c.rss.At(c.r)
	ss := rs.ScopeSpans().At(c.s)
	fresh := false
	if c.scope == nil || c.scopeAt != [2]int{c.r, c.s} {
		h := &heldScope{rs: ptrace.NewResourceSpans()}
		copyResource(h.rs, rs)
		appendScope(h.rs, ss)
		c.scope, c.scopeAt, fresh = h, [2]int{c.r, c.s}, true
	}
	return ss.Spans().At(c.k), c.scope, fresh
}

// skipEmpty moves (r, s, k) forward to the next existing span.
func (c *cursor) skipEmpty() {
	for c.r < c.rss.Len() {
		sss := c.rss.At(c.r).ScopeSpans()
		for c.s < sss.Len() {
			if c.k < sss.At(c.s).Spans().Len() {
				return
			}
			c.s++
			c.k = 0
		}
		c.r++
		c.s, c.k = 0, 0
	}
}

// appendResource appends to dst a ResourceSpans with src's resource and
// schema URL, without its scopes.
func appendResource(dst ptrace.ResourceSpansSlice, src ptrace.ResourceSpans) ptrace.ResourceSpans {
	rs := dst.AppendEmpty()
	copyResource(rs, src)
	return rs
}

func copyResource(dst, src ptrace.ResourceSpans) {
	src.Resource().CopyTo(dst.Resource())
	dst.SetSchemaUrl(src.SchemaUrl())
}

// appendScope appends to dst a ScopeSpans with src's scope and schema URL,
// without its spans.
func appendScope(dst ptrace.ResourceSpans, src ptrace.ScopeSpans) ptrace.ScopeSpans {
	ss := dst.ScopeSpans().AppendEmpty()
	src.Scope().CopyTo(ss.Scope())
	ss.SetSchemaUrl(src.SchemaUrl())
	return ss
}
