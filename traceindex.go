package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"encoding/hex"
	"slices"
	"sync"

	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// Bounds of the trace index. A generation is retired when it holds
// traceIndexTraces traces or traceIndexSpans span ids; two generations are
// kept, so the index remembers at least the last traceIndexTraces traces
// (fewer when they are large) in at most about 2 × (20,000 × ~300 B +
// 200,000 × 8 B) ≈ 15 MiB.
const (
	traceIndexTraces = 20_000
	traceIndexSpans  = 200_000
	// traceIndexSpansPerTrace bounds the span ids remembered for one trace;
	// spans beyond it cannot attach a log-derived error to its transaction.
	traceIndexSpansPerTrace = 10_000
)

// traceIndex remembers, per trace seen recently, its head segment (the one
// whose root span has no parent) and which segment each span belongs to. It
// makes every envelope of a trace carry the same DSC, even when the trace's
// segments arrive in different pushes, and gives log-derived error events the
// transaction of their span's segment. It holds copies only, never pdata.
type traceIndex struct {
	mu       sync.Mutex
	cur, old map[[16]byte]*traceEntry
	curSpans int
}

type traceEntry struct {
	head  *segmentInfo // nil until the head has been seen
	first segmentInfo  // the first segment seen: sampling when the head is unknown
	segs  []indexedSegment
	spans int
}

// segmentInfo is what the DSC takes from a segment.
type segmentInfo struct {
	name, source, sampleRate string
	sampled                  bool
}

type indexedSegment struct {
	info    *segmentInfo
	spanIDs [][8]byte
}

func newTraceIndex() *traceIndex {
	return &traceIndex{cur: map[[16]byte]*traceEntry{}, old: map[[16]byte]*traceEntry{}}
}

// add records the segments of one push.
func (x *traceIndex) add(segs []translate.Segment) {
	if len(segs) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range segs {
		s := &segs[i]
		e := x.entry(s.TraceID)
		info := &segmentInfo{name: s.Name, source: s.Source, sampleRate: s.SampleRate, sampled: s.Sampled}
		if e.spans == 0 {
			e.first = *info
		}
		if s.Head && e.head == nil {
			e.head = info
		}
		room := traceIndexSpansPerTrace - e.spans
		if room <= 0 {
			continue // the trace is at its cap: only its head is still recorded
		}
		ids := s.SpanIDs[:min(len(s.SpanIDs), room)]
		e.segs = append(e.segs, indexedSegment{info: info, spanIDs: slices.Clone(ids)})
		n := 1 + len(ids) // a segment costs at least one span's worth
		e.spans += n
		x.curSpans += n
	}
	if len(x.cur) >= traceIndexTraces || x.curSpans >= traceIndexSpans {
		x.old, x.cur, x.curSpans = x.cur, make(map[[16]byte]*traceEntry, len(x.cur)), 0
	}
}

// entry returns the trace's entry in the current generation, moving it there
// from the old one or creating it.
func (x *traceIndex) entry(id [16]byte) *traceEntry {
	if e, ok := x.cur[id]; ok {
		return e
	}
	e, ok := x.old[id]
	if ok {
		delete(x.old, id)
		x.curSpans += e.spans
	} else {
		e = &traceEntry{}
	}
	x.cur[id] = e
	return e
}

func (x *traceIndex) lookup(id [16]byte) *traceEntry {
	if e, ok := x.cur[id]; ok {
		return e
	}
	return x.old[id]
}

// dscFacts are the DSC members that describe the trace rather than the envelope.
type dscFacts struct {
	transaction, sampled, sampleRate string
}

// facts returns the DSC facts of a trace: the head segment's name, sampled
// flag and sample rate when the head has been seen; otherwise fallback (the
// envelope's own segment name, if any) and the first seen segment's
// sampling. As sentry-go and the JavaScript SDK do, a head named after its
// URL (source "url") leaves the transaction out of the DSC.
func (x *traceIndex) facts(traceID [16]byte, fallback string) dscFacts {
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.lookup(traceID)
	switch {
	case e == nil:
		return dscFacts{transaction: fallback}
	case e.head != nil:
		f := dscFacts{sampled: boolString(e.head.sampled), sampleRate: e.head.sampleRate}
		if e.head.source != "url" {
			f.transaction = e.head.name
		}
		return f
	default:
		return dscFacts{transaction: fallback, sampled: boolString(e.first.sampled), sampleRate: e.first.sampleRate}
	}
}

// segmentName returns the transaction name of the segment that holds the
// span, when the trace and the span have been seen.
func (x *traceIndex) segmentName(traceID [16]byte, spanID [8]byte) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.lookup(traceID)
	if e == nil {
		return "", false
	}
	for _, s := range e.segs {
		if slices.Contains(s.spanIDs, spanID) {
			return s.info.name, true
		}
	}
	return "", false
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// traceIDOf decodes a 32-hex trace id as written by the translator; a
// malformed one gives the zero id, which no segment has.
func traceIDOf(s string) (id [16]byte) {
	if len(s) == 32 {
		if _, err := hex.Decode(id[:], []byte(s)); err != nil {
			return [16]byte{}
		}
	}
	return id
}
