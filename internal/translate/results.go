package translate

// The results of a call: the records of s.txs, s.groups and s.errs, whose
// payloads are ranges of the output buffer and whose strings are ranges of
// the string arena, become slices of out and substrings of arena.

func (s *state) transactionsOut(out []byte, arena string) []Transaction {
	if len(s.txs) == 0 {
		return nil
	}
	txs := make([]Transaction, len(s.txs))
	for i, x := range s.txs {
		ri := &s.res[x.ri]
		txs[i] = Transaction{
			EventID: x.ev.in(arena), TraceID: x.trace.in(arena), Name: x.name.in(arena),
			SegmentSpanID: x.segSpan.in(arena),
			Environment:   ri.env, Release: ri.release, Spans: x.spans, Payload: out[x.a:x.b:x.b],
			StatusCode: x.code, Segment: int(x.seg),
		}
		if x.reqB > x.reqA {
			txs[i].Request = out[x.reqA:x.reqB:x.reqB]
		}
	}
	return txs
}

func (s *state) spanGroupsOut(out []byte, arena string) []SpanGroup {
	if len(s.groups) == 0 {
		return nil
	}
	items := make([][]byte, len(s.items))
	for i, f := range s.items {
		items[i] = out[f.a:f.b:f.b]
	}
	groups := make([]SpanGroup, len(s.groups))
	for i, g := range s.groups {
		ri := &s.res[g.ri]
		groups[i] = SpanGroup{
			TraceID: g.trace.in(arena), Segment: g.segment.in(arena),
			Environment: ri.env, Release: ri.release, Items: items[g.a:g.b:g.b],
			Container: out[g.c.a:g.c.b:g.c.b],
		}
	}
	return groups
}

func (s *state) errorEvents(out []byte, arena string) []ErrorEvent {
	if len(s.errs) == 0 {
		return nil
	}
	evs := make([]ErrorEvent, len(s.errs))
	for i, x := range s.errs {
		ri := &s.res[x.ri]
		evs[i] = ErrorEvent{
			EventID: x.ev.in(arena), TraceID: x.trace.in(arena),
			Environment: ri.env, Release: ri.release, Payload: out[x.a:x.b:x.b],
			ErrorRef: x.ref.export(arena),
		}
	}
	return evs
}
