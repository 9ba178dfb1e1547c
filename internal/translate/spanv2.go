package translate

import "go.opentelemetry.io/collector/pdata/ptrace"

// Span v2 items (protocol notes §3.3), grouped per trace. Attributes: the
// sentry.* ones, otel.scope.*, the span's attributes, then the resource
// attributes that the span does not already have. The names follow Sentry's
// conventions (@sentry/conventions 0.33, as @sentry/core 11 writes them):
// sentry.segment.name and sentry.segment.id on every span,
// sentry.segment.name.source on segment spans only (it supersedes
// sentry.span.source / sentry.source), sentry.kind (supersedes otel.kind) and
// sentry.status.message. The span's own name is "name". Links with an
// all-zero id are left out. An item over MaxItemBytes is rendered smaller.

type groupRec struct {
	trace, segment span32
	ri             int32
	a, b           int // range of s.items
}

// spanGroups renders every span as a span v2 item, one group per trace.
func (s *state) spanGroups(r *TracesResult) {
	budget := s.t.o.MaxItemBytes
	for t := range s.traces {
		tr := &s.traces[t]
		if tr.segA == tr.segB {
			continue
		}
		first := &s.spans[s.segs[tr.segA].root]
		g := groupRec{
			trace: s.arenaHex(first.traceID[:]),
			ri:    first.res,
			a:     len(s.items),
		}
		// the group's segment name (the DSC's fallback transaction): the
		// first local root's; a fragment names none
		for _, seg := range s.segs[tr.segA:tr.segB] {
			if root := &s.spans[seg.root]; root.localRoot() {
				g.segment = s.arenaName(root.sem.name)
				break
			}
		}
		for _, seg := range s.segs[tr.segA:tr.segB] {
			root := &s.spans[seg.root]
			for _, i := range s.order[seg.a:seg.b] {
				a := s.out.len()
				ok := false
				for lvl := range levels {
					s.out.truncate(a)
					s.spanV2(&s.spans[i], root, lvl)
					if ok = s.fit(a, budget); ok {
						break
					}
				}
				if !ok {
					s.out.truncate(a)
					r.InvalidSpans++
					continue
				}
				s.items = append(s.items, frag{a, s.out.len()})
			}
		}
		g.b = len(s.items)
		s.groups = append(s.groups, g)
	}
}

func (s *state) spanV2(r, root *spanRef, lvl int) {
	l := s.t.limits(lvl)
	ri := &s.res[r.res]
	wv := s.out // a local writer: appends to it need no GC write barrier
	w := &wv
	defer func() { s.out = wv }()
	n := 0
	w.byte('{')
	s.spanIDs(w, &n, r, "trace_id")
	w.key(&n, "name")
	w.name(r.sem.name, l.value)
	w.strField(&n, "status", v2Status(r.sem.status), 0)
	// Only a local root is a segment: a span whose local parent is not
	// here (a fragment) claims no segment, and Sentry assembles it.
	claim := root.localRoot()
	w.key(&n, "is_segment")
	w.bool(r.parentIdx < 0 && claim)
	w.key(&n, "start_timestamp")
	w.ts(r.start)
	w.key(&n, "end_timestamp")
	w.ts(r.end)

	w.key(&n, "attributes")
	w.byte('{')
	s.seen.reset()
	m := 0
	s.typedStr(w, &m, "sentry.op", r.sem.op)
	s.sentryAttrs(w, &m, ri, blockSpan)
	if claim {
		s.seen.add("sentry.segment.name")
		w.key(&m, "sentry.segment.name")
		w.raw(`{"type":"string","value":`)
		w.name(root.sem.name, l.value)
		w.byte('}')
		s.seen.add("sentry.segment.id")
		w.key(&m, "sentry.segment.id")
		w.raw(`{"type":"string","value":`)
		w.hex(root.id[:])
		w.byte('}')
	}
	if r.parentIdx < 0 && claim {
		s.typedStr(w, &m, "sentry.segment.name.source", r.sem.source)
	}
	s.typedStr(w, &m, "sentry.kind", kindValue(r.sp.Kind()))
	s.copyBlock(w, &m, &s.scopes[r.scopeIdx].typed)
	s.typedStr(w, &m, "sentry.status.message", r.sp.Status().Message())
	dropped := int(r.sp.DroppedAttributesCount())
	s.scrub, s.server = r.sem.scrub, r.server()
	s.members(w, r.sp.Attributes(), true, &m, &l, &dropped)
	s.scrub, s.server = false, false
	s.typedResource(ri)
	s.resourceTyped(w, ri, &m, &l, &dropped, false)
	droppedMember(w, &m, dropped, true)
	w.byte('}')

	s.links(w, &n, r.sp.Links(), &l)
	w.byte('}')
}

// links writes "links" when the span has any link with valid ids.
func (s *state) links(w *jw, n *int, ls ptrace.SpanLinkSlice, l *limits) {
	k := 0
	for i := range min(ls.Len(), l.attrs) {
		lk := ls.At(i)
		tid, sid := lk.TraceID(), lk.SpanID()
		if tid == ([16]byte{}) || sid == ([8]byte{}) {
			continue
		}
		if k == 0 {
			w.key(n, "links")
			w.byte('[')
		}
		w.comma(&k)
		w.raw(`{"trace_id":`)
		w.hex(tid[:])
		w.raw(`,"span_id":`)
		w.hex(sid[:])
		w.raw(`,"sampled":`)
		w.bool(lk.Flags()&1 == 1)
		if lk.Attributes().Len() > 0 {
			w.raw(`,"attributes":{`)
			s.seen.reset()
			m, dropped := 0, int(lk.DroppedAttributesCount())
			s.members(w, lk.Attributes(), true, &m, l, &dropped)
			droppedMember(w, &m, dropped, true)
			w.byte('}')
		}
		w.byte('}')
	}
	if k > 0 {
		w.byte(']')
	}
}
