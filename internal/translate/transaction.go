package translate

// Transactions.
//
// A segment with its descendants is one transaction: the segment is
// contexts.trace, the descendants are spans[] in depth-first order. When the
// payload would exceed MaxEventBytes, the child that does not fit starts a new
// (continuation) transaction as its contexts.trace, keeping its real
// parent_span_id and the original transaction name, and the following children
// go there. A contexts.trace that alone is over the budget is rendered smaller
// (see Translator.limits); if even that fails the span counts as invalid.
// Span events, links and dropped counts other than attributes are not written
// into transactions.

// txTail closes spans[] and the event; spans[] is always the last member.
const txTail = "]}"

// txRec is a transaction whose strings and payload are still ranges.
type txRec struct {
	ev, trace, name, segSpan span32
	ri, seg                  int32 // seg: index in s.segs (and TracesResult.Segments)
	spans                    int
	a, b                     int
	reqA, reqB, code         int // the request object in s.out (reqA == reqB: none); the response status code
}

// transactions renders every segment as one or more transactions.
func (s *state) transactions(r *TracesResult) {
	for si := range s.segs {
		s.segmentTransactions(r, int32(si))
	}
}

// segmentTransactions renders segment si as one transaction, or as several
// when its spans do not fit MaxEventBytes: the first span that did not fit
// heads the next. A head that does not fit even at the smallest rendering
// is counted invalid, and the span after it heads the next.
func (s *state) segmentTransactions(r *TracesResult, si int32) {
	seg := &s.segs[si]
	members := s.order[seg.a:seg.b]
	root := &s.spans[members[0]]
	nm := s.arenaName(root.sem.name)
	trace := s.arenaHex(root.traceID[:])
	segSpan := s.arenaHex(root.id[:])
	req, code, _ := s.segmentRequest(si)
	s.txProf = s.segmentProfiler(members)
	head, i := members[0], 1
	for {
		a := s.out.len()
		ev := s.derivedEventID(&eventSeed{kind: seedTransaction, trace: root.traceID, span: s.spans[head].id})
		if ra, rb, ok := s.fitTxHeader(head, root, ev, req, code); ok {
			var n int
			i, n = s.txChildren(members, i, s.spans[head].scopeIdx, a)
			s.out.raw(txTail)
			s.txs = append(s.txs, txRec{
				ev: ev, trace: trace, name: nm, segSpan: segSpan, ri: s.spans[head].res, seg: si, spans: 1 + n,
				a: a, b: s.out.len(), reqA: ra, reqB: rb, code: code,
			})
		} else {
			r.InvalidSpans++
		}
		if i >= len(members) {
			break
		}
		head, i = members[i], i+1
	}
}

// fitTxHeader writes the header of a transaction headed by head at the
// largest rendering that leaves room for its tail within MaxEventBytes;
// it writes nothing and reports false when none does.
func (s *state) fitTxHeader(head int32, root *spanRef, ev span32, req frag, code int) (reqA, reqB int, ok bool) {
	a := s.out.len()
	budget := s.t.o.MaxEventBytes - len(txTail)
	for lvl := range levels {
		s.out.truncate(a)
		reqA, reqB = s.txHeader(head, root, ev, lvl, req, code)
		if s.fit(a, budget) {
			return reqA, reqB, true
		}
	}
	s.out.truncate(a)
	return 0, 0, false
}

// txChildren writes members[i:] as the child spans of the transaction that
// starts at a in s.out, as many as fit MaxEventBytes with its tail; it
// returns the index of the first that did not fit (len(members): all did)
// and how many it wrote.
func (s *state) txChildren(members []int32, i int, headScope int32, a int) (next, n int) {
	budget := s.t.o.MaxEventBytes - len(txTail)
	for ; i < len(members); i++ {
		c := s.out.len()
		if n > 0 {
			s.out.byte(',')
		}
		s.childSpan(members[i], 0, headScope)
		if !s.fit(a, budget) {
			s.out.truncate(c)
			break
		}
		n++
	}
	return i, n
}

// txHeader writes a transaction up to and including `"spans":[`, with head as
// contexts.trace and the name and source of the segment root. req is the
// segment's request object in s.frag (empty: none), left out at the smallest
// rendering; txHeader returns where it was copied in s.out.
func (s *state) txHeader(head int32, root *spanRef, ev span32, lvl int, req frag, code int) (reqA, reqB int) {
	r := &s.spans[head]
	ri := &s.res[r.res]
	l := s.t.limits(lvl)
	wv := s.out // a local writer: appends to it need no GC write barrier
	w := &wv
	defer func() { s.out = wv }()
	n := 0
	w.raw(`{"type":"transaction"`)
	n++
	w.key(&n, "event_id")
	w.b = append(w.b, '"')
	w.b = append(w.b, s.arenaBytes(ev)...)
	w.b = append(w.b, '"')
	w.key(&n, "transaction")
	w.name(root.sem.name, l.value)
	w.key(&n, "transaction_info")
	w.raw(`{"source":"`)
	w.raw(root.sem.source)
	w.raw(`"}`)
	w.key(&n, "start_timestamp")
	w.ts(r.start)
	w.key(&n, "timestamp")
	w.ts(r.end)
	s.eventCommon(w, &n, ri)
	if req.b > req.a && lvl < levels-1 {
		w.key(&n, "request")
		reqA = w.len()
		w.b = append(w.b, s.frag.b[req.a:req.b]...)
		reqB = w.len()
	}
	w.key(&n, "contexts")
	w.raw(`{"trace":{`)
	m := 0
	s.spanIDs(w, &m, r, "trace_id")
	w.strField(&m, "op", r.sem.op, 128)
	w.strField(&m, "status", r.sem.status, 0)
	w.raw(`,"origin":"auto.otel","data":`)
	s.txThread = s.txProf.thread // the profile's thread of this transaction, as the chunk's thread_id
	s.spanData(w, r, &l, false)
	s.txThread = ""
	w.byte('}')
	responseContext(w, code)
	s.resourceContexts(w, ri)
	if s.txProf.id != "" {
		w.raw(`,"profile":{"profiler_id":`)
		w.str(s.txProf.id, 0)
		w.byte('}')
	}
	w.raw(`,"otel":{"resource":`)
	s.resourcePlain(w, ri, lvl)
	w.raw(`}}`)
	w.key(&n, "spans")
	w.byte('[')
	return reqA, reqB
}

// responseContext writes contexts.response when there is a status code.
func responseContext(w *jw, code int) {
	if code > 0 {
		w.raw(`,"response":{"status_code":`)
		w.int(int64(code))
		w.byte('}')
	}
}

// spanIDs writes trace_id, span_id and (when set) parent_span_id.
func (*state) spanIDs(w *jw, n *int, r *spanRef, traceKey string) {
	w.key(n, traceKey)
	w.hex(r.traceID[:])
	w.key(n, "span_id")
	w.hex(r.id[:])
	if r.hasParent {
		w.key(n, "parent_span_id")
		w.hex(r.parent[:])
	}
}

// childSpan writes one element of spans[].
func (s *state) childSpan(i int32, lvl int, headScope int32) {
	r := &s.spans[i]
	l := s.t.limits(lvl)
	wv := s.out
	w := &wv
	defer func() { s.out = wv }()
	n := 0
	w.byte('{')
	s.spanIDs(w, &n, r, "trace_id")
	w.strField(&n, "op", r.sem.op, 128)
	w.key(&n, "description")
	w.name(r.sem.name, l.value)
	w.strField(&n, "status", r.sem.status, 0)
	w.raw(`,"origin":"auto.otel","start_timestamp":`)
	w.ts(r.start)
	w.raw(`,"timestamp":`)
	w.ts(r.end)
	w.raw(`,"data":`)
	s.spanData(w, r, &l, r.scopeIdx == headScope)
	w.byte('}')
}

// spanData writes the span's attributes as a plain object, after otel.kind,
// otel.scope.name/version and otel.status_message.
// A child whose scope is that of its transaction's contexts.trace (inherit)
// leaves otel.scope.* out: it is the bulk of the repeated bytes.
func (s *state) spanData(w *jw, r *spanRef, l *limits, inherit bool) {
	s.seen.reset()
	n := 0
	w.byte('{')
	if k := kindName(r.sp.Kind()); k != "" {
		s.plainStr(w, &n, "otel.kind", k, l)
	}
	s.plainStr(w, &n, "thread.id", s.txThread, l) // before the span's own, which it replaces
	switch {
	case inherit:
	case l.attrs == MaxAttributes: // level 0: the pre-rendered copy
		s.copyBlock(w, &n, &s.scopes[r.scopeIdx].plain)
	default:
		sc := s.scopes[r.scopeIdx].sc
		s.plainStr(w, &n, "otel.scope.name", sc.Name(), l)
		s.plainStr(w, &n, "otel.scope.version", sc.Version(), l)
	}
	s.plainStr(w, &n, "otel.status_message", r.sp.Status().Message(), l)
	dropped := int(r.sp.DroppedAttributesCount())
	s.scrub, s.server = r.sem.scrub, r.server()
	s.members(w, r.sp.Attributes(), false, &n, l, &dropped)
	s.scrub, s.server = false, false
	droppedMember(w, &n, dropped, false)
	w.byte('}')
}

func (s *state) plainStr(w *jw, n *int, k, v string, l *limits) {
	if v == "" {
		return
	}
	s.seen.add(k)
	w.strField(n, k, v, l.value)
}

// arenaName copies a name into the string arena.
func (s *state) arenaName(nm name) span32 {
	a, limit := len(s.arena), s.t.o.MaxValueBytes
	for _, p := range nm {
		p, _ = cutAt(p, limit)
		limit -= len(p)
		s.arena = append(s.arena, p...)
	}
	return span32{int32(a), int32(len(s.arena))}
}
