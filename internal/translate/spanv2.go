package translate

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// Span v2 items (protocol notes §3.3), grouped per trace, as @sentry/core 11.12
// streams them (tracing/spans/captureSpan.js, spanJsonToStreamedSpan.js):
//
//   - "name" is the span's own name (a span named "SELECT users" stays so; the
//     semantic name the transaction form uses is only the fallback for an
//     unnamed span), except that an HTTP server span with a route is
//     "<method> <route>" (ownName);
//   - on every span: sentry.op, the resource's sentry.environment,
//     sentry.release, sentry.sdk.name/version, sentry.origin,
//     sentry.trace_lifecycle "stream", sentry.segment.name (the segment
//     span's own name) and sentry.segment.id, sentry.kind,
//     otel.scope.name/version, sentry.status.message (the OTel status message,
//     else the Sentry status of a failed span), then the span's own
//     attributes under the PII rules of scrub.go;
//   - on segment spans only: sentry.segment.name.source, sentry.profiler_id
//     when the process's profiler sends chunks (TracesWant.ProfilerOf; as
//     @sentry/profiling-node 11.1 writes it on a streamed segment), and the resource
//     attributes (host.*, process.*, telemetry.sdk.*, service.*, ...), which
//     the SDK has no per-span place for and adds to segments only (its
//     Context integration's processSegmentSpan). A child whose resource is
//     not its segment's (another instance of the same service) carries its
//     own, so nothing is lost;
//   - on HTTP server spans without url.full: url.full built from the parts
//     OTel records (serverURL), as @sentry/core's requestDataIntegration
//     writes it on server segments.
//
// The names follow Sentry's conventions (@sentry/conventions 0.32/0.33):
// sentry.segment.name.source supersedes sentry.span.source / sentry.source,
// sentry.kind supersedes otel.kind. Links with an all-zero id are left out.
// An item over MaxItemBytes is rendered smaller.

type groupRec struct {
	trace, segment span32
	ri             int32
	a, b           int  // range of s.items
	c              frag // the items framed as one container, in s.out
}

// spanGroups renders every span as a span v2 item, one group per trace. The
// items of a group are written inside the framing of one span v2 container
// (the head, a comma between items, "]}"), so that a group that fits one
// envelope is sent without copying its items again (SpanGroup.Container).
func (s *state) spanGroups(r *TracesResult) {
	for t := range s.traces {
		if tr := &s.traces[t]; tr.segA < tr.segB {
			s.spanGroup(r, s.segs[tr.segA:tr.segB])
		}
	}
}

// spanGroup renders the segments of one trace as one group; a span that
// fits MaxItemBytes at no rendering is counted invalid.
func (s *state) spanGroup(r *TracesResult, segs []segRef) {
	first := &s.spans[segs[0].root]
	g := groupRec{
		trace: s.arenaHex(first.traceID[:]),
		ri:    first.res,
		a:     len(s.items),
	}
	// the group's segment name (the DSC's fallback transaction): the
	// first local root's; a fragment names none
	for _, seg := range segs {
		if root := &s.spans[seg.root]; root.localRoot() {
			g.segment = s.arenaName(ownName(root))
			break
		}
	}
	g.c.a = s.out.len()
	s.out.raw(envelope.SpanContainerHead)
	for _, seg := range segs {
		root := &s.spans[seg.root]
		s.txProf = s.segmentProfiler(s.order[seg.a:seg.b])
		for _, i := range s.order[seg.a:seg.b] {
			if !s.spanItem(&s.spans[i], root, len(s.items) > g.a) {
				r.InvalidSpans++
			}
		}
	}
	g.b = len(s.items)
	s.out.raw("]}")
	g.c.b = s.out.len()
	s.groups = append(s.groups, g)
}

// spanItem writes one span v2 item, after a comma unless it is its group's
// first, at the largest rendering that fits MaxItemBytes, and reports
// whether one did (else it writes nothing).
func (s *state) spanItem(sp, root *spanRef, comma bool) bool {
	c := s.out.len()
	if comma {
		s.out.byte(',')
	}
	a := s.out.len()
	for lvl := range levels {
		s.out.truncate(a)
		s.spanV2(sp, root, lvl)
		if s.fit(a, s.t.o.MaxItemBytes) {
			s.items = append(s.items, frag{a, s.out.len()})
			return true
		}
	}
	s.out.truncate(c)
	return false
}

// ownName is the span's own name, or its semantic name when it has none. An
// HTTP server span with a route is named "<method> <route>", as the SDK names
// its server segments once the framework knows the route (and as the HTTP
// conventions name the span).
func ownName(r *spanRef) name {
	if r.sem.source == sourceRoute && r.sem.op == "http.server" {
		return r.sem.name
	}
	if nm := r.sp.Name(); nm != "" {
		return name{nm}
	}
	return r.sem.name
}

// spanV2 writes span r of the segment rooted at root as one span v2 item,
// at rendering level lvl.
func (s *state) spanV2(r, root *spanRef, lvl int) {
	l := s.t.limits(lvl)
	wv := s.out // a local writer: appends to it need no GC write barrier
	w := &wv
	defer func() { s.out = wv }()
	// Only a local root is a segment: a span whose local parent is not
	// here (a fragment) claims no segment, and Sentry assembles it.
	claim := root.localRoot()
	n := 0
	w.byte('{')
	s.spanIDs(w, &n, r, "trace_id")
	w.key(&n, "name")
	w.name(ownName(r), l.value)
	w.strField(&n, "status", v2Status(r.sem.status), 0)
	w.key(&n, "is_segment")
	w.bool(r.parentIdx < 0 && claim)
	w.key(&n, "start_timestamp")
	w.ts(r.start)
	w.key(&n, "end_timestamp")
	w.ts(r.end)
	w.key(&n, "attributes")
	s.spanV2Attributes(w, r, root, claim, &l)
	s.links(w, &n, r.sp.Links(), &l)
	w.byte('}')
}

// spanV2Attributes writes the attributes object of span r: the Sentry
// attributes, the segment it claims (claim: its segment is a local root's),
// the scope's, the span's own, and the resource's on a segment or a
// fragment's top span.
func (s *state) spanV2Attributes(w *jw, r, root *spanRef, claim bool, l *limits) {
	ri := &s.res[r.res]
	w.byte('{')
	s.seen.reset()
	m := 0
	s.typedStr(w, &m, "sentry.op", r.sem.op)
	s.sentryAttrs(w, &m, ri, blockSpan)
	if claim {
		s.segmentClaim(w, &m, root, l)
	}
	if r.parentIdx < 0 && claim {
		s.typedStr(w, &m, "sentry.segment.name.source", r.sem.source)
		s.typedStr(w, &m, "sentry.profiler_id", s.txProf.id) // as @sentry/profiling-node 11.1 links a streamed segment
		s.typedStr(w, &m, "thread.id", s.txProf.thread)      // before the span's own, which it replaces
	}
	s.typedStr(w, &m, "sentry.kind", kindValue(r.sp.Kind()))
	s.copyBlock(w, &m, &s.scopes[r.scopeIdx].typed)
	// The SDK's status message of a failed span is its Sentry status
	// ("internal_error" for an HTTP 500) unless the program set one.
	msg := r.sp.Status().Message()
	if msg == "" && r.sem.status != "ok" {
		msg = r.sem.status
	}
	s.typedStr(w, &m, "sentry.status.message", msg)
	if serverRequest(r.sp, &r.sem) {
		s.serverURL(w, &m, r.sp.Attributes(), l) // before the span's own: never cut by the cap
	}
	dropped := int(r.sp.DroppedAttributesCount())
	s.scrub, s.server = r.sem.scrub, r.server()
	s.members(w, r.sp.Attributes(), true, &m, l, &dropped)
	s.scrub, s.server = false, false
	// A fragment's top span (its local root never came) carries the
	// resource too: Sentry assembles such spans without a segment span.
	if r.parentIdx < 0 || r.res != root.res {
		s.typedResource(ri)
		s.resourceTyped(w, ri, &m, l, &dropped, false)
	}
	droppedMember(w, &m, dropped, true)
	w.byte('}')
}

// segmentClaim writes sentry.segment.name and sentry.segment.id: those of
// the local root the span belongs to.
func (s *state) segmentClaim(w *jw, m *int, root *spanRef, l *limits) {
	s.seen.add("sentry.segment.name")
	w.key(m, "sentry.segment.name")
	w.raw(`{"type":"string","value":`)
	w.name(ownName(root), l.value)
	w.byte('}')
	s.seen.add("sentry.segment.id")
	w.key(m, "sentry.segment.id")
	w.raw(`{"type":"string","value":`)
	w.hex(root.id[:])
	w.byte('}')
}

// serverURL writes url.full on an HTTP server span that has none: the URL of
// the request object (http.url, else hostURL: url.scheme, server.address,
// server.port, url.path, or their older names) with the request's query
// (reqAttrs.queryString, as the request's query_string) under filterQuery, as @sentry/node writes
// it. Without a host there is no url.full, as @sentry/core's getAbsoluteUrl.
func (s *state) serverURL(w *jw, n *int, m pcommon.Map, l *limits) {
	if _, ok := m.Get("url.full"); ok {
		return // the span's own, written with its attributes
	}
	var a reqAttrs
	a.scan(m)
	pii := s.t.o.SendDefaultPII
	var u name
	if a.urlFull != "" { // http.url, the older name
		u = name{stripURL(a.urlFull)}
	} else {
		host := a.anyHost()
		if host == "" {
			return
		}
		u = a.hostURL(host, a.anyPath())
	}
	q := a.queryString()
	s.seen.add("url.full")
	w.key(n, "url.full")
	w.raw(`{"type":"string","value":`)
	if q == "" {
		w.name(u, l.value)
	} else {
		w.name(name{u[0] + u[1] + u[2], "?", filterQuery(q, pii)}, l.value)
	}
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
