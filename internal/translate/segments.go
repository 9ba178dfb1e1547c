package translate

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/assemble"
)

// Grouping spans into traces and segments.
//
// A segment is a span whose parent is not in this batch (a root, a missing
// parent, a parent in another trace), whose parent is marked remote in the span
// flags, or whose parent belongs to another service (service.name). A segment
// and its descendants form one transaction. The rules that make any input
// terminate and lose nothing:
//   - an all-zero trace id: all such spans share one generated trace id;
//   - an all-zero span id: a generated one;
//   - a span id seen twice in a trace: later spans get a generated id (children
//     stay with the first);
//   - a self-parent is a segment;
//   - a cycle of parents: the first span of the cycle (input order) becomes a
//     segment, keeping its parent_span_id, and the rest hang below it.

// spanRef is one input span with its repaired ids and derived facts.
type spanRef struct {
	sp          ptrace.Span
	scopeIdx    int32 // index into s.scopes
	res         int32
	trace       int32 // index into s.traces
	traceID     [16]byte
	id, parent  [8]byte
	hasParent   bool
	start, end  uint64
	parentIdx   int32 // -1 for a segment
	child, next int32 // child list, reverse input order
	seg         int32 // index into s.segs
	visited     bool
	otherSvc    bool // its parent is in the batch, in another service: a remote parent
	sem         semInfo
}

// server reports whether the span is a server span: its peer is the client.
func (r *spanRef) server() bool { return r.sp.Kind() == ptrace.SpanKindServer }

// localRoot reports whether the span starts its service's part of the trace
// (assemble.LocalRoot): no parent, a parent the span
// flags mark remote, or, where the flags do not say, a SERVER or CONSUMER
// span; or its parent is in the batch in another service. A segment of the
// batch that is no local root is a fragment: its parent is local but was not
// in the batch.
func (r *spanRef) localRoot() bool {
	k := r.sp.Kind()
	return r.otherSvc || assemble.LocalRoot(r.parent, r.sp.Flags(), k == ptrace.SpanKindServer || k == ptrace.SpanKindConsumer)
}

type spanKey struct {
	trace int32
	id    [8]byte
}

type traceRef struct {
	segA, segB int32 // range of s.segs
}

type segRef struct {
	root int32
	a, b int32 // range of s.order, root first

	// the request of an HTTP server segment (request.go), rendered once in s.frag
	reqDone, hasReq bool
	req             frag
	code            int
}

// remoteParent is the span flag pair HAS_IS_REMOTE | IS_REMOTE.
const remoteParent = 0x300

// collect flattens the batch into s.spans, repairing ids and timestamps.
func (s *state) collect(td ptrace.Traces, now uint64) {
	s.spans = s.spans[:0]
	var ids batchIDs
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		ri := s.resource(rs.Resource())
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			s.collectScope(sss.At(j), ri, &ids, now)
		}
	}
}

// collectScope appends the spans of one scope to s.spans.
func (s *state) collectScope(ss ptrace.ScopeSpans, ri int32, ids *batchIDs, now uint64) {
	sps := ss.Spans()
	if sps.Len() == 0 {
		return
	}
	si := s.scopeFrags(ss.Scope())
	for k := range sps.Len() {
		sp := sps.At(k)
		r := spanRef{sp: sp, scopeIdx: si, res: ri, parentIdx: -1, child: -1, next: -1}
		r.traceID = ids.traceID(s, sp.TraceID())
		r.id = ids.spanID(s, sp.SpanID())
		r.parent = sp.ParentSpanID()
		r.hasParent = r.parent != ([8]byte{})
		r.start, r.end = repairTimes(uint64(sp.StartTimestamp()), uint64(sp.EndTimestamp()), now)
		r.sem = semantics(sp)
		s.spans = append(s.spans, r)
	}
}

// repairTimes makes start ≤ end: a zero or early end becomes the start, a zero
// start the end, and both zero the current time.
func repairTimes(start, end, now uint64) (uint64, uint64) {
	if start == 0 {
		start = end
	}
	if start == 0 {
		start = now
	}
	if end < start {
		end = start
	}
	return start, end
}

// group assigns traces, resolves parents and orders every segment depth first.
func (s *state) group() {
	if s.byTrace == nil {
		s.byTrace = make(map[[16]byte]int32)
		s.byID = make(map[spanKey]int32)
	}
	clear(s.byTrace)
	clear(s.byID)
	s.traces = s.traces[:0]
	s.segs = s.segs[:0]
	s.order = s.order[:0]
	s.groupByTrace()
	s.dedupeSpanIDs()
	s.linkParents()
	a := int32(0) // where the trace's spans start in s.tspans
	for t := range s.traces {
		a = s.segmentTrace(int32(t), a)
	}
}

// groupByTrace numbers the traces in order of first appearance and lists
// each trace's spans together in s.tspans, in input order (a counting sort).
func (s *state) groupByTrace() {
	counts := s.stack[:0]
	for i := range s.spans {
		r := &s.spans[i]
		t, ok := s.byTrace[r.traceID]
		if !ok {
			t = int32(len(s.traces))
			s.byTrace[r.traceID] = t
			s.traces = append(s.traces, traceRef{})
			counts = append(counts, 0)
		}
		r.trace = t
		counts[t]++
	}
	off := int32(0)
	for t := range counts {
		c := counts[t]
		counts[t] = off
		off += c
	}
	s.tspans = grow(s.tspans, len(s.spans))
	for i := range s.spans {
		t := s.spans[i].trace
		s.tspans[counts[t]] = int32(i)
		counts[t]++
	}
	s.stack = counts[:0]
}

// dedupeSpanIDs indexes the spans by id: the first occurrence in a trace
// keeps its id, later ones get a generated one.
func (s *state) dedupeSpanIDs() {
	for i := range s.spans {
		r := &s.spans[i]
		for {
			k := spanKey{r.trace, r.id}
			if _, dup := s.byID[k]; !dup {
				s.byID[k] = int32(i)
				break
			}
			r.id = s.newSpanID()
		}
	}
}

// linkParents resolves each span's parent and builds the child lists
// (pushed in input order, so reversed). A parent in another service makes
// the span a segment, as a remote parent does.
func (s *state) linkParents() {
	for i := range s.spans {
		r := &s.spans[i]
		if !r.hasParent || r.sp.Flags()&remoteParent == remoteParent {
			continue
		}
		p, ok := s.byID[spanKey{r.trace, r.parent}]
		if !ok || p == int32(i) {
			continue
		}
		if r.res != s.spans[p].res && s.res[r.res].service != s.res[s.spans[p].res].service {
			r.otherSvc = true
			continue
		}
		r.parentIdx = p
		r.next = s.spans[p].child
		s.spans[p].child = int32(i)
	}
}

// segmentTrace walks the segments of trace t, whose spans start at a in
// s.tspans: its roots in input order, then whatever a cycle left unvisited,
// each span of a cycle becoming a segment in input order. It returns where
// the next trace's spans start.
func (s *state) segmentTrace(t, a int32) int32 {
	b := a
	for b < int32(len(s.spans)) && s.spans[s.tspans[b]].trace == t {
		b++
	}
	s.traces[t].segA = int32(len(s.segs))
	for _, i := range s.tspans[a:b] {
		if s.spans[i].parentIdx < 0 {
			s.walk(i)
		}
	}
	for _, i := range s.tspans[a:b] {
		if !s.spans[i].visited {
			s.spans[i].parentIdx = -1 // a cycle: this span becomes a segment
			s.walk(i)
		}
	}
	s.traces[t].segB = int32(len(s.segs))
	return b
}

// walk appends the segment rooted at root to s.order, depth first, children in
// input order.
func (s *state) walk(root int32) {
	seg := int32(len(s.segs))
	a := int32(len(s.order))
	st := s.stack[:0]
	st = append(st, root)
	for len(st) > 0 {
		i := st[len(st)-1]
		st = st[:len(st)-1]
		r := &s.spans[i]
		if r.visited {
			continue
		}
		r.visited, r.seg = true, seg
		s.order = append(s.order, i)
		for c := r.child; c >= 0; c = s.spans[c].next {
			if !s.spans[c].visited {
				st = append(st, c)
			}
		}
	}
	s.stack = st
	s.segs = append(s.segs, segRef{root: root, a: a, b: int32(len(s.order))})
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
