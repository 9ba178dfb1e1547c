package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"encoding/hex"
	"slices"
	"strings"
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
	cur, old map[[16]byte]traceEntry
	curSpans int
	names    map[string]string // interned segment names and sample rates of the current generation
}

// traceEntry is held by value in the maps: the usual trace, one segment per
// push, costs no allocation of its own.
type traceEntry struct {
	head  int32 // index of the head segment (see seg); -1 until seen
	n     int32 // segments recorded
	spans int
	first indexedSegment
	rest  []indexedSegment
}

func (e *traceEntry) seg(i int32) *indexedSegment {
	if i == 0 {
		return &e.first
	}
	return &e.rest[i-1]
}

// segmentInfo is what the DSC takes from a segment.
type segmentInfo struct {
	name, source, sampleRate string
	sampled                  bool
}

// indexedSegment keeps up to len(inline) span ids without an allocation of
// their own (most segments are small).
type indexedSegment struct {
	segmentInfo
	n      int
	inline [4][8]byte
	more   [][8]byte // all the ids, when more than len(inline)
}

func (s *indexedSegment) ids() [][8]byte {
	if s.more != nil {
		return s.more
	}
	return s.inline[:s.n]
}

// maxInternedNames bounds the interning table of one generation.
const maxInternedNames = 10_000

func newTraceIndex() *traceIndex {
	return &traceIndex{cur: map[[16]byte]traceEntry{}, old: map[[16]byte]traceEntry{}, names: map[string]string{}}
}

// intern returns a copy of s that the index owns (the translator's strings
// share one buffer per push), shared by the segments of the same name.
func (x *traceIndex) intern(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := x.names[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(x.names) < maxInternedNames {
		x.names[v] = v
	}
	return v
}

// add records the segments of one push and returns the DSC facts of each
// (its own name where the head is not known yet is for the caller to add).
// The translator lists the segments of a trace together, so each trace
// costs one look-up and one store.
func (x *traceIndex) add(segs []translate.Segment) []dscFacts {
	if len(segs) == 0 {
		return nil
	}
	facts := make([]dscFacts, len(segs))
	x.mu.Lock()
	defer x.mu.Unlock()
	for a := 0; a < len(segs); {
		id := segs[a].TraceID
		b := a + 1
		for b < len(segs) && segs[b].TraceID == id {
			b++
		}
		e := x.take(id)
		for i := a; i < b; i++ {
			x.record(&e, &segs[i])
		}
		x.cur[id] = e
		f := e.facts("")
		for i := a; i < b; i++ {
			facts[i] = f
		}
		a = b
	}
	if len(x.cur) >= traceIndexTraces || x.curSpans >= traceIndexSpans {
		x.old, x.cur, x.curSpans = x.cur, make(map[[16]byte]traceEntry, len(x.cur)), 0
		x.names = map[string]string{}
	}
	return facts
}

// take returns the trace's entry for an update, moving it out of the old
// generation (the caller stores it in the current one).
func (x *traceIndex) take(id [16]byte) traceEntry {
	if e, ok := x.cur[id]; ok {
		return e
	}
	if e, ok := x.old[id]; ok {
		delete(x.old, id)
		x.curSpans += e.spans
		return e
	}
	return traceEntry{head: -1}
}

// record adds one segment to e.
func (x *traceIndex) record(e *traceEntry, s *translate.Segment) {
	room := max(traceIndexSpansPerTrace-e.spans, 0)
	if room == 0 && !(s.Head && e.head < 0) {
		return // the trace is at its cap; only a head not yet seen still goes in
	}
	is := indexedSegment{segmentInfo: segmentInfo{
		name: x.intern(s.Name), source: s.Source, sampleRate: x.intern(s.SampleRate), sampled: s.Sampled,
	}}
	ids := s.SpanIDs[:min(len(s.SpanIDs), room)]
	if len(ids) <= len(is.inline) {
		is.n = copy(is.inline[:], ids)
	} else {
		is.more = slices.Clone(ids)
	}
	if s.Head && e.head < 0 {
		e.head = e.n
	}
	if e.n == 0 {
		e.first = is
	} else {
		e.rest = append(e.rest, is)
	}
	e.n++
	n := 1 + len(ids) // a segment costs at least one span's worth
	e.spans += n
	x.curSpans += n
}

func (x *traceIndex) lookup(id [16]byte) (traceEntry, bool) {
	if e, ok := x.cur[id]; ok {
		return e, true
	}
	e, ok := x.old[id]
	return e, ok
}

// dscFacts are the DSC members that describe the trace rather than the envelope.
type dscFacts struct {
	transaction, sampled, sampleRate string
	head                             bool // the facts are the head's
}

// or returns f with own as the transaction when the head is not known.
func (f dscFacts) or(own string) dscFacts {
	if !f.head {
		f.transaction = own
	}
	return f
}

// facts returns the DSC facts of a trace: the head segment's name, sampled
// flag and sample rate when the head has been seen; otherwise fallback (the
// envelope's own segment name, if any) and the first seen segment's
// sampling. As sentry-go and the JavaScript SDK do, a head named after its
// URL (source "url") leaves the transaction out of the DSC.
func (x *traceIndex) facts(traceID [16]byte, fallback string) dscFacts {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, _ := x.lookup(traceID)
	return e.facts(fallback)
}

func (e *traceEntry) facts(fallback string) dscFacts {
	switch {
	case e.n == 0:
		return dscFacts{transaction: fallback}
	case e.head >= 0:
		h := e.seg(e.head)
		f := dscFacts{sampled: boolString(h.sampled), sampleRate: h.sampleRate, head: true}
		if h.source != "url" {
			f.transaction = h.name
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
	e, ok := x.lookup(traceID)
	if !ok {
		return "", false
	}
	for i := range e.n {
		if s := e.seg(i); slices.Contains(s.ids(), spanID) {
			return s.name, true
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
