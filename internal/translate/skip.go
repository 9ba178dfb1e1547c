package translate

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The skip path: when nothing of a Traces call is serialized (the category is
// rate limited), only spans, segments and exception events are counted. It
// gives the counts collect and group would, without semantics, pre-rendered
// resources or maps: the span ids go into a reused open-addressing table, and
// the segments are counted from parent indexes. Ids are repaired exactly as
// collect and group repair them (same NewID calls in the same order), so a
// generated id can collide with an input id here exactly as it would there.

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
	sk := s.skip[:0]
	svc := s.skipSvc[:0]
	var zeroTrace [16]byte
	haveZero := false
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		service := ""
		for k, v := range rs.Resource().Attributes().All() {
			if k == "service.name" {
				service = v.AsString()
			}
		}
		svc = append(svc, service)
		ri := int32(len(svc) - 1)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			sps := sss.At(j).Spans()
			for k := range sps.Len() {
				sp := sps.At(k)
				tid := sp.TraceID()
				if tid == ([16]byte{}) {
					if !haveZero {
						zeroTrace, haveZero = s.newTraceID(), true
					}
					tid = zeroTrace
				}
				id := sp.SpanID()
				if id == ([8]byte{}) {
					id = s.newSpanID()
				}
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
					evs := sp.Events()
					for e := range evs.Len() {
						if evs.At(e).Name() == "exception" {
							excs++
						}
					}
				}
			}
		}
	}
	s.skip, s.skipSvc = sk, svc
	n := len(sk)
	if n == 0 {
		return 0, 0, excs
	}

	// Span ids: the first occurrence in a trace keeps its id, later ones get a
	// generated one (which is inserted like any other).
	size := 1
	for size < 2*n {
		size <<= 1
	}
	shift := uint(64)
	for m := size; m > 1; m >>= 1 {
		shift--
	}
	tab := grow(s.skipTab, size)
	clear(tab)
	mask := uint64(size - 1)
	for i := range sk {
		r := &sk[i]
		for {
			h := skipHash(r.t0, r.t1, r.id) >> shift
			dup := false
			for {
				e := tab[h]
				if e == 0 {
					break
				}
				if q := &sk[e-1]; q.id == r.id && q.t0 == r.t0 && q.t1 == r.t1 {
					dup = true
					break
				}
				h = (h + 1) & mask
			}
			if !dup {
				tab[h] = int32(i + 1)
				break
			}
			id := s.newSpanID()
			r.id = binary.LittleEndian.Uint64(id[:])
		}
	}
	s.skipTab = tab

	// Parents: in this batch, in the same trace, not itself, same resource or
	// same service.
	for i := range sk {
		r := &sk[i]
		if r.parent == 0 {
			continue
		}
		h := skipHash(r.t0, r.t1, r.parent) >> shift
		p := int32(-1)
		for {
			e := tab[h]
			if e == 0 {
				break
			}
			if q := &sk[e-1]; q.id == r.parent && q.t0 == r.t0 && q.t1 == r.t1 {
				p = e - 1
				break
			}
			h = (h + 1) & mask
		}
		if p < 0 || p == int32(i) {
			continue
		}
		if r.res != sk[p].res && svc[r.res] != svc[sk[p].res] {
			continue
		}
		r.parentIdx = p
	}

	// Every span with no parent is a segment. The others are below a segment
	// or on (or below) a cycle of parents: st is -1 for the former, -2 for
	// the latter, and i+1 while on the chain being followed from span i.
	st := grow(s.skipSt, n)
	clear(st)
	unrooted := 0
	for i := range sk {
		if sk[i].parentIdx < 0 {
			segs++
			st[i] = -1
		}
	}
	for i := range sk {
		if st[i] != 0 {
			continue
		}
		mark := int32(i + 1)
		j := int32(i)
		for st[j] == 0 {
			st[j] = mark
			j = sk[j].parentIdx // never -1: those are marked already
		}
		res := st[j]
		if res == mark {
			res = -2 // the chain closed on itself: a cycle
		}
		for k := int32(i); st[k] == mark; k = sk[k].parentIdx {
			st[k] = res
			if res == -2 {
				unrooted++
			}
		}
	}
	s.skipSt = st
	if unrooted > 0 {
		segs += s.countCycles(sk, st)
	}
	return n, segs, excs
}

// countCycles counts the segments group makes of the spans that no segment
// reaches (st -2): in input order, each one not yet visited becomes a segment
// and its descendants are visited. Child lists are those group builds.
func (s *state) countCycles(sk []skipRef, st []int32) int {
	n := len(sk)
	child := grow(s.tspans, n)
	next := grow(s.order, n)
	for i := range child {
		child[i] = -1
	}
	for i := range sk {
		if st[i] == -2 {
			p := sk[i].parentIdx
			next[i] = child[p]
			child[p] = int32(i)
		}
	}
	cuts := 0
	stack := s.stack[:0]
	for i := range sk {
		if st[i] != -2 {
			continue
		}
		cuts++
		st[i] = -3 // visited
		stack = append(stack[:0], int32(i))
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for c := child[j]; c >= 0; c = next[c] {
				if st[c] == -2 {
					st[c] = -3
					stack = append(stack, c)
				}
			}
		}
	}
	s.tspans, s.order, s.stack = child, next, stack
	return cuts
}

// skipHash mixes a trace id and a span id; the top bits index the table.
func skipHash(t0, t1, id uint64) uint64 {
	return (id ^ t0*0x9E3779B97F4A7C15 ^ t1*0xC2B2AE3D27D4EB4F) * 0xFF51AFD7ED558CCD
}
