package translate

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The skip path: when nothing of a Traces call is serialized (the category is
// rate limited), only spans, segments and exception events are counted. It
// gives the counts collect and group would, without semantics, pre-rendered
// resources or maps: the span ids go into a reused open-addressing table
// (skiptable.go), and the segments are counted from parent indexes
// (skipsegments.go). Ids are repaired exactly as collect and group repair
// them (same NewID calls in the same order), so a generated id can collide
// with an input id here exactly as it would there.

// skipRef is one span of the skip path; it holds no pointers, so filling the
// reused slice costs no GC write barriers.
type skipRef struct {
	t0, t1     uint64 // trace id
	id, parent uint64
	res        int32
	parentIdx  int32 // -1: a segment (or unresolved parent), else the parent's index
}

// countTraces returns the number of spans, segments (transactions) and
// exception span events of td.
func (s *state) countTraces(td ptrace.Traces, exceptions bool) (spans, segs, excs int) {
	excs = s.gatherSkipRefs(td, exceptions)
	n := len(s.skip)
	if n == 0 {
		return 0, 0, excs
	}
	tab := s.skipTable(n)
	s.dedupeSkipIDs(tab)
	s.linkSkipParents(tab)
	return n, s.countSkipSegments(), excs
}

// gatherSkipRefs fills s.skip with the spans of td, their ids repaired, and
// s.skipSvc with each resource's service.name; it returns the number of
// exception events when exceptions asks for them.
func (s *state) gatherSkipRefs(td ptrace.Traces, exceptions bool) (excs int) {
	sk, svc := s.skip[:0], s.skipSvc[:0]
	var ids batchIDs
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		svc = append(svc, lastServiceName(rs.Resource().Attributes()))
		ri := int32(len(svc) - 1)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			var n int
			sk, n = s.appendSkipRefs(sk, sss.At(j).Spans(), ri, &ids, exceptions)
			excs += n
		}
	}
	s.skip, s.skipSvc = sk, svc
	return excs
}

// appendSkipRefs appends the spans of one scope to sk and counts their
// exception events when exceptions asks for them.
func (s *state) appendSkipRefs(sk []skipRef, sps ptrace.SpanSlice, ri int32, ids *batchIDs, exceptions bool) ([]skipRef, int) {
	excs := 0
	for k := range sps.Len() {
		sp := sps.At(k)
		tid := ids.traceID(s, sp.TraceID())
		id := ids.spanID(s, sp.SpanID())
		r := skipRef{
			t0: binary.LittleEndian.Uint64(tid[:8]), t1: binary.LittleEndian.Uint64(tid[8:]),
			id: binary.LittleEndian.Uint64(id[:]), res: ri, parentIdx: -1,
		}
		if sp.Flags()&remoteParent != remoteParent {
			p := sp.ParentSpanID()
			r.parent = binary.LittleEndian.Uint64(p[:]) // 0: no parent
		}
		sk = append(sk, r)
		if exceptions {
			excs += exceptionEvents(sp.Events())
		}
	}
	return sk, excs
}

// lastServiceName is the resource's service.name (the last, should the
// attributes hold it twice), "" when it has none.
func lastServiceName(m pcommon.Map) string {
	service := ""
	for k, v := range m.All() {
		if k == "service.name" {
			service = v.AsString()
		}
	}
	return service
}

// exceptionEvents counts the span events named "exception".
func exceptionEvents(evs ptrace.SpanEventSlice) int {
	n := 0
	for e := range evs.Len() {
		if evs.At(e).Name() == "exception" {
			n++
		}
	}
	return n
}
