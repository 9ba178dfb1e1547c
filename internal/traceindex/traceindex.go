package traceindex

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// Bounds of the trace index. A project's generation is retired when it holds
// traceIndexTraces traces, traceIndexSpans span ids or traceIndexRequestBytes
// of request objects; two generations are kept, so a project alone is
// remembered for at least its last traceIndexTraces traces (fewer when they
// are large). All projects together hold at most twice each bound: past it,
// the project holding most retires its generation. So the index holds at
// most about 2 × (20,000 × ~170 B + 200,000 × 8 B + 4 MiB) + interned names
// ≈ 18 MiB, and one project's churn retires its own traces, not another's.
const (
	traceIndexTraces       = 20_000
	traceIndexSpans        = 200_000
	traceIndexRequestBytes = 4 << 20
	// maxIndexedRequest bounds one segment's request object in the index; a
	// larger one (many or long headers) is not kept, and the log-derived
	// errors of that segment go without request and response.
	maxIndexedRequest = 4 << 10
	// traceIndexSpansPerTrace bounds the span ids remembered for one trace;
	// spans beyond it cannot attach a log-derived error to its transaction.
	traceIndexSpansPerTrace = 10_000
)

// Index remembers, per trace seen recently, its head segment (the one
// whose root span has no parent) and which segment each span belongs to. It
// makes every envelope of a trace carry the same DSC, even when the trace's
// segments arrive in different pushes, and gives log-derived error events the
// transaction, request and response status code of their span's segment. It
// holds copies only, never pdata.
//
// An Index is one project's view ([Index.NewProject]): it finds only what
// was added through it, so no project's segments (their URLs, queries,
// routes, transaction names) reach another's events or DSC, whatever trace
// and span ids a sender puts on its items. The views share one store and
// its bounds.
type Index struct {
	*store
	*generations // the project's own
}

// store is what the views of an index share.
type store struct {
	mu    sync.Mutex
	views []*generations
	// What no reader needs is not copied: span ids only serve error events'
	// segment look-ups, requests and status codes only log-derived ones.
	NoSpanIDs, NoRequests bool
}

// generations are one project's two generations.
type generations struct{ cur, old generation }

// generation is one half of the index. Span ids live in one pointer-free
// buffer per generation, so recording a trace allocates nothing of its own
// and the garbage collector never scans them.
type generation struct {
	traces map[[16]byte]traceEntry
	ids    []byte            // 8 bytes per span id
	reqs   []byte            // the segments' request objects, back to back
	names  map[string]string // interned segment names and sample rates
}

// newGeneration sizes a generation as the one it replaces ended: its buffers
// grow once, not by doubling through megabytes of fresh memory every
// generation (on request-shaped traffic that growth of reqs was 3 % of a
// push's CPU). It takes what that one held, not its room: a project made to
// retire a small generation gets small buffers, so what all projects' room
// adds up to follows what they hold.
func newGeneration(traces, ids, reqs int) generation {
	return generation{
		traces: make(map[[16]byte]traceEntry, traces),
		ids:    make([]byte, 0, ids),
		reqs:   make([]byte, 0, reqs),
		names:  map[string]string{},
	}
}

// traceEntry is held by value in the maps: the usual trace, one segment per
// push, costs no allocation of its own but its sample_rand, when known.
type traceEntry struct {
	head  int32 // index of the head segment (see seg); -1 until seen
	n     int32 // segments recorded
	spans int   // span ids recorded (plus one per segment)
	// sampleRand is the DSC's sample_rand, formatted once: the head
	// segment's once it is seen, else the first segment's ("" unknown).
	sampleRand string
	first      indexedSegment
	rest       []indexedSegment
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

// indexedSegment is a segment, the range of its span ids in its
// generation's buffer and that of its request object (reqA == reqB: none),
// with its response status code (0: none).
type indexedSegment struct {
	segmentInfo
	a, b       int32
	reqA, reqB int32
	code       int32
}

// maxInternedNames bounds the interning table of one generation.
const maxInternedNames = 10_000

// New returns an empty index, the view of its first project.
func New() *Index {
	s := &store{}
	return &Index{store: s, generations: s.newView()}
}

// NewProject is another project's view of x's store: it shares the store's
// bounds, and sees nothing added through any other view.
func (x *Index) NewProject() *Index {
	x.mu.Lock()
	defer x.mu.Unlock()
	return &Index{store: x.store, generations: x.newView()}
}

// Release forgets x's traces and takes its view out of the store (a
// retired project's): the others fit in the room it held. x must not be
// used again.
func (x *Index) Release() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.views = slices.DeleteFunc(x.views, func(g *generations) bool { return g == x.generations })
	x.cur, x.old = newGeneration(0, 0, 0), newGeneration(0, 0, 0)
}

// newView adds a project's generations; s.mu is held (or s is new).
func (s *store) newView() *generations {
	g := &generations{cur: newGeneration(0, 0, 0), old: newGeneration(0, 0, 0)}
	s.views = append(s.views, g)
	return g
}

// size is what a generation holds against each bound: traces, span id
// bytes, request bytes.
func (g *generation) size() [3]int { return [3]int{len(g.traces), len(g.ids), len(g.reqs)} }

// bounds are a generation's, in size's order.
var bounds = [3]int{traceIndexTraces, 8 * traceIndexSpans, traceIndexRequestBytes}

// held is what a project's two generations hold, in size's order.
func (g *generations) held() [3]int {
	c, o := g.cur.size(), g.old.size()
	return [3]int{c[0] + o[0], c[1] + o[1], c[2] + o[2]}
}

// retire makes cur the old generation, dropping the old one.
func (g *generations) retire() {
	g.old, g.cur = g.cur, newGeneration(len(g.cur.traces), len(g.cur.ids), len(g.cur.reqs))
}

// fit keeps all projects together within twice each bound: past one, the
// project holding most of it retires its generation, until they fit. s.mu
// is held.
func (s *store) fit() {
	for {
		var total [3]int
		for _, v := range s.views {
			h := v.held()
			for d := range total {
				total[d] += h[d]
			}
		}
		d := slices.IndexFunc([]int{0, 1, 2}, func(d int) bool { return total[d] > 2*bounds[d] })
		if d < 0 {
			return
		}
		most := s.views[0]
		for _, v := range s.views[1:] {
			if v.held()[d] > most.held()[d] {
				most = v
			}
		}
		most.retire()
	}
}

// intern returns a copy of s that the index owns (the translator's strings
// share one buffer per push), shared by the segments of the same name.
func (g *generation) intern(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := g.names[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(g.names) < maxInternedNames {
		g.names[v] = v
	}
	return v
}

// Add records the segments of one push and returns the DSC facts of each
// (its own name where the head is not known yet is for the caller to add).
// The translator lists the segments of a trace together, so each trace
// costs one look-up and one store.
// The facts are appended to dst[:0].
func (x *Index) Add(segs []translate.Segment, dst []Facts) []Facts {
	if len(segs) == 0 {
		return dst[:0]
	}
	facts := slices.Grow(dst[:0], len(segs))[:len(segs)]
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
		x.cur.traces[id] = e
		f := x.cur.facts(&e, "")
		for i := a; i < b; i++ {
			facts[i] = f
		}
		a = b
	}
	if len(x.cur.traces) >= traceIndexTraces || len(x.cur.ids) >= 8*traceIndexSpans || len(x.cur.reqs) >= traceIndexRequestBytes {
		x.retire()
	}
	x.fit()
	return facts
}

// take returns the trace's entry for an update, moving it out of the old
// generation (its span ids are copied into the current one's buffer; the
// caller stores the entry in the current generation).
func (x *Index) take(id [16]byte) traceEntry {
	if e, ok := x.cur.traces[id]; ok {
		return e
	}
	e, ok := x.old.traces[id]
	if !ok {
		return traceEntry{head: -1}
	}
	delete(x.old.traces, id)
	for i := range e.n {
		s := e.seg(i)
		a := int32(len(x.cur.ids))
		x.cur.ids = append(x.cur.ids, x.old.ids[s.a:s.b]...)
		s.a, s.b = a, int32(len(x.cur.ids))
		r := int32(len(x.cur.reqs))
		x.cur.reqs = append(x.cur.reqs, x.old.reqs[s.reqA:s.reqB]...)
		s.reqA, s.reqB = r, int32(len(x.cur.reqs))
		s.name, s.sampleRate = x.cur.intern(s.name), x.cur.intern(s.sampleRate)
	}
	if e.rest != nil {
		e.rest = slices.Clone(e.rest) // the copy in the old map must not see the new ranges
	}
	return e
}

// record adds one segment to e, in the current generation.
func (x *Index) record(e *traceEntry, s *translate.Segment) {
	room := max(traceIndexSpansPerTrace-e.spans, 0)
	newHead := s.Head && e.head < 0
	if room == 0 && !newHead {
		return // the trace is at its cap; only a head not yet seen still goes in
	}
	g := &x.cur
	n := min(s.SpanCount(), room)
	if x.NoSpanIDs {
		n = 0
	}
	a := int32(len(g.ids))
	g.ids = append(g.ids, s.SpanIDs[:8*n]...)
	is := indexedSegment{
		segmentInfo: segmentInfo{name: g.intern(s.Name), source: s.Source, sampleRate: g.intern(s.SampleRate), sampled: s.Sampled},
		a:           a, b: int32(len(g.ids)),
	}
	if !x.NoRequests && len(s.Request) <= maxIndexedRequest {
		is.reqA = int32(len(g.reqs))
		g.reqs = append(g.reqs, s.Request...)
		is.reqB = int32(len(g.reqs))
	}
	if !x.NoRequests && s.StatusCode > 0 && s.StatusCode < 1000 {
		is.code = int32(s.StatusCode)
	}
	if s.Head && e.head < 0 {
		e.head = e.n
		e.sampleRand = formatRand(s)
	} else if e.n == 0 {
		e.sampleRand = formatRand(s)
	}
	if e.n == 0 {
		e.first = is
	} else {
		e.rest = append(e.rest, is)
	}
	e.n++
	e.spans += 1 + n // a segment costs at least one span's worth
}

// lookup finds a trace of x's project in either generation.
func (x *Index) lookup(id [16]byte) (traceEntry, *generation, bool) {
	if e, ok := x.cur.traces[id]; ok {
		return e, &x.cur, true
	}
	e, ok := x.old.traces[id]
	return e, &x.old, ok
}

// Facts are the DSC members that describe the trace rather than the envelope.
type Facts struct {
	Transaction, Sampled, SampleRate string
	SampleRand                       string // the trace's, from any of its segments
	head                             bool   // the facts are the head's
}

// Or returns f with own as the transaction when the head is not known.
func (f Facts) Or(own string) Facts {
	if !f.head {
		f.Transaction = own
	}
	return f
}

// Facts returns the DSC facts of a trace: the head segment's name, sampled
// flag and sample rate when the head has been seen; otherwise fallback (the
// envelope's own segment name, if any) and the first seen segment's
// sampling. As sentry-go and the JavaScript SDK do, a head named after its
// URL (source "url") leaves the Transaction out of the DSC.
func (x *Index) Facts(traceID [16]byte, fallback string) Facts {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, g, _ := x.lookup(traceID)
	return g.facts(&e, fallback)
}

func (*generation) facts(e *traceEntry, fallback string) Facts {
	switch {
	case e.n == 0:
		return Facts{Transaction: fallback}
	case e.head >= 0:
		h := e.seg(e.head)
		f := Facts{Sampled: strconv.FormatBool(h.sampled), SampleRate: h.sampleRate, SampleRand: e.sampleRand, head: true}
		if h.source != "url" {
			f.Transaction = h.name
		}
		return f
	default:
		return Facts{Transaction: fallback, Sampled: strconv.FormatBool(e.first.sampled), SampleRate: e.first.sampleRate, SampleRand: e.sampleRand}
	}
}

// formatRand writes a segment's sample_rand as the JS SDK does (the shortest
// decimal that reads back the same), "" when unknown.
func formatRand(s *translate.Segment) string {
	if r := s.SampleRand; s.HasSampleRand && r >= 0 && r < 1 {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return ""
}

// SpanSegment is what an error event takes from the segment of its span.
type SpanSegment struct {
	Name       string
	Request    []byte // the request object; nil: none. Never written to.
	StatusCode int    // 0: none
}

// SegmentOf returns the transaction name, request object and response
// status code of the segment that holds the span, when the trace and the
// span have been seen. The request shares the generation's buffer, which is
// only ever appended to.
func (x *Index) SegmentOf(traceID [16]byte, spanID [8]byte) (SpanSegment, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, g, ok := x.lookup(traceID)
	if !ok {
		return SpanSegment{}, false
	}
	for i := range e.n {
		s := e.seg(i)
		for off := s.a; off < s.b; off += 8 {
			if [8]byte(g.ids[off:off+8]) == spanID {
				out := SpanSegment{Name: s.name, StatusCode: int(s.code)}
				if s.reqB > s.reqA {
					out.Request = g.reqs[s.reqA:s.reqB:s.reqB]
				}
				return out, true
			}
		}
	}
	return SpanSegment{}, false
}

// TraceIDOf decodes a 32-hex trace id as written by the translator; a
// malformed one gives the zero id, which no segment has.
func TraceIDOf(s string) (id [16]byte) {
	if len(s) == 32 {
		if _, err := hex.Decode(id[:], []byte(s)); err != nil {
			return [16]byte{}
		}
	}
	return id
}

// FactsPool reuses the DSC facts buffers of pushes.
type FactsPool struct{ pool sync.Pool }

func (p *FactsPool) Get() *[]Facts {
	if f, ok := p.pool.Get().(*[]Facts); ok {
		return f
	}
	return new([]Facts)
}

// put takes f back; its strings are the index's, so keeping them is harmless,
// but a huge buffer is let go.
func (p *FactsPool) Put(f *[]Facts) {
	if cap(*f) > 1<<14 {
		*f = nil
	}
	p.pool.Put(f)
}
