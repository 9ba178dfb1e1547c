package traceindex

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/translate"
)

func seg(trace byte, name string, head bool, spans ...byte) translate.Segment {
	s := translate.Segment{TraceID: [16]byte{trace}, Name: name, Source: "route", Head: head, Sampled: true}
	for _, b := range spans {
		s.SpanIDs = append(s.SpanIDs, b, 0, 0, 0, 0, 0, 0, 0)
	}
	return s
}

func TestTraceIndexFacts(t *testing.T) {
	urlHead := seg(4, "/checkout/123", true, 1)
	urlHead.Source = "url"
	rated := seg(5, "GET /rated", true, 1)
	rated.SampleRate = "0.25"
	unsampledChild := seg(6, "consume", false, 2)
	unsampledChild.Sampled = false
	for _, tt := range factsCases(urlHead, rated, unsampledChild) {
		t.Run(tt.name, func(t *testing.T) {
			x := New()
			for _, p := range tt.pushes {
				x.Add(p, nil)
			}
			got := x.Facts([16]byte{tt.trace}, tt.own)
			assert.Equal(t, tt.want.Sampled != "" && tt.want.Transaction != tt.own || tt.trace == 4, got.head, "the facts are the head's")
			got.head = false
			assert.Equal(t, tt.want, got)
		})
	}
}

// factsCase is one case of TestTraceIndexFacts: the segments pushed, in
// order, and the facts of one trace then.
type factsCase struct {
	name   string
	pushes [][]translate.Segment
	trace  byte
	own    string
	want   Facts
}

// factsCases are TestTraceIndexFacts' cases; urlHead, rated and
// unsampledChild are segments with a URL name, a sample rate, and unsampled.
func factsCases(urlHead, rated, unsampledChild translate.Segment) []factsCase {
	return []factsCase{
		{"unknown trace: the envelope's own segment", nil, 1, "own", Facts{Transaction: "own"}},
		{
			"head in the same push",
			[][]translate.Segment{{seg(1, "consume", false, 3), seg(1, "GET /a", true, 1, 2)}},
			1, "consume",
			Facts{Transaction: "GET /a", Sampled: "true"},
		},
		{
			"head in an earlier push",
			[][]translate.Segment{{seg(1, "GET /a", true, 1)}, {seg(1, "consume", false, 3)}},
			1, "consume",
			Facts{Transaction: "GET /a", Sampled: "true"},
		},
		{
			"head in a later push",
			[][]translate.Segment{{seg(1, "consume", false, 3)}, {seg(1, "GET /a", true, 1)}},
			1, "consume",
			Facts{Transaction: "GET /a", Sampled: "true"},
		},
		{
			"head not seen: own name, sampling of the first segment seen",
			[][]translate.Segment{{unsampledChild}},
			6, "consume",
			Facts{Transaction: "consume", Sampled: "false"},
		},
		{
			"a head named after its URL is left out, as the SDKs do",
			[][]translate.Segment{{urlHead}},
			4, "/checkout/123",
			Facts{Sampled: "true"},
		},
		{"sample rate of the head", [][]translate.Segment{{rated}}, 5, "x", Facts{Transaction: "GET /rated", Sampled: "true", SampleRate: "0.25"}},
		{
			"the first head seen stays the head",
			[][]translate.Segment{{seg(1, "GET /a", true, 1)}, {seg(1, "GET /b", true, 9)}},
			1, "",
			Facts{Transaction: "GET /a", Sampled: "true"},
		},
	}
}

func TestTraceIndexSegmentName(t *testing.T) {
	x := New()
	x.Add([]translate.Segment{seg(1, "GET /a", true, 1, 2), seg(1, "consume", false, 3)}, nil)
	name, ok := segmentName(x, [16]byte{1}, [8]byte{2})
	assert.True(t, ok)
	assert.Equal(t, "GET /a", name)
	name, ok = segmentName(x, [16]byte{1}, [8]byte{3})
	assert.True(t, ok)
	assert.Equal(t, "consume", name)
	_, ok = segmentName(x, [16]byte{1}, [8]byte{4})
	assert.False(t, ok, "unknown span")
	_, ok = segmentName(x, [16]byte{2}, [8]byte{1})
	assert.False(t, ok, "unknown trace")
}

// The index keeps two generations: a trace is remembered for at least
// traceIndexTraces traces after it, and forgotten after twice as many.
func TestTraceIndexBound(t *testing.T) {
	x := New()
	id := func(i int) [16]byte {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:], uint64(i)+1)
		return b
	}
	add := func(i int) {
		x.Add([]translate.Segment{{TraceID: id(i), Name: "t", Head: true, SpanIDs: []byte{1, 0, 0, 0, 0, 0, 0, 0}}}, nil)
	}
	add(0)
	for i := 1; i < traceIndexTraces; i++ {
		add(i)
	}
	assert.Equal(t, "t", x.Facts(id(0), "").Transaction, "still remembered")
	for i := traceIndexTraces; i < 2*traceIndexTraces; i++ {
		add(i)
	}
	assert.Empty(t, x.Facts(id(0), "").Transaction, "forgotten after two generations")
	assert.LessOrEqual(t, len(x.cur.traces)+len(x.old.traces), 2*traceIndexTraces)

	// Span ids: one huge trace is capped, and its spans count toward the generation.
	x = New()
	big := translate.Segment{TraceID: id(0), Name: "big", Head: true, SpanIDs: make([]byte, 8*(traceIndexSpansPerTrace+10))}
	x.Add([]translate.Segment{big, big}, nil)
	e, _, _ := x.lookup(id(0))
	assert.LessOrEqual(t, e.spans, traceIndexSpansPerTrace+1)
	assert.EqualValues(t, 1, e.n, "a trace at its cap records no more segments")
}

// A trace seen again after its generation was retired moves to the current
// one with everything it had: its head and the segments of its spans.
func TestTraceIndexMoveKeepsSpans(t *testing.T) {
	x := New()
	x.Add([]translate.Segment{seg(1, "GET /a", true, 1, 2, 3, 4, 5, 6), seg(1, "consume", false, 7)}, nil)
	for i := range traceIndexTraces { // retire the generation of trace 1
		var id [16]byte
		binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
		x.Add([]translate.Segment{{TraceID: id, Name: "t"}}, nil)
	}
	_, g, ok := x.lookup([16]byte{1})
	require.True(t, ok)
	require.Same(t, &x.old, g, "retired")
	x.Add([]translate.Segment{seg(1, "later", false, 8)}, nil)
	_, g, _ = x.lookup([16]byte{1})
	require.Same(t, &x.cur, g, "moved back")
	for span, want := range map[byte]string{1: "GET /a", 6: "GET /a", 7: "consume", 8: "later"} {
		name, ok := segmentName(x, [16]byte{1}, [8]byte{span})
		assert.True(t, ok, "span %d", span)
		assert.Equal(t, want, name, "span %d", span)
	}
	assert.Equal(t, "GET /a", x.Facts([16]byte{1}, "later").Transaction)
}

// segmentName is the name Index.SegmentOf finds.
func segmentName(x *Index, traceID [16]byte, spanID [8]byte) (string, bool) {
	seg, ok := x.SegmentOf(traceID, spanID)
	return seg.Name, ok
}

// The index keeps each segment's request object and status code for the
// log-derived errors of its spans: across a generation move, not when the
// request is over maxIndexedRequest, and a generation retires when its
// requests reach traceIndexRequestBytes.
func TestTraceIndexSegmentRequest(t *testing.T) {
	x := New()
	server := seg(1, "GET /a", true, 1, 2)
	server.Request, server.StatusCode = []byte(`{"method":"GET"}`), 502
	huge := seg(1, "GET /huge", false, 3)
	huge.Request, huge.StatusCode = make([]byte, maxIndexedRequest+1), 200
	x.Add([]translate.Segment{server, huge, seg(1, "consume", false, 4)}, nil)

	check := func(what string) {
		got, ok := x.SegmentOf([16]byte{1}, [8]byte{2})
		require.True(t, ok, what)
		assert.Equal(t, SpanSegment{Name: "GET /a", Request: []byte(`{"method":"GET"}`), StatusCode: 502}, got, what)
		got, _ = x.SegmentOf([16]byte{1}, [8]byte{3})
		assert.Equal(t, SpanSegment{Name: "GET /huge", StatusCode: 200}, got, what+": a request over the bound is not kept")
		got, _ = x.SegmentOf([16]byte{1}, [8]byte{4})
		assert.Equal(t, SpanSegment{Name: "consume"}, got, what+": no request")
	}
	check("same generation")
	for i := range traceIndexTraces { // retire the generation of trace 1
		var id [16]byte
		binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
		x.Add([]translate.Segment{{TraceID: id, Name: "t"}}, nil)
	}
	x.Add([]translate.Segment{seg(1, "later", false, 8)}, nil) // moves trace 1 back
	_, g, _ := x.lookup([16]byte{1})
	require.Same(t, &x.cur, g)
	check("moved to the current generation")

	x = New()
	big := seg(2, "GET /b", true, 1)
	big.Request = make([]byte, maxIndexedRequest)
	for i := 0; len(x.old.traces) == 0; i++ {
		require.Less(t, i, traceIndexRequestBytes/maxIndexedRequest+1, "retired by request bytes")
		big.TraceID[8] = byte(i)
		big.TraceID[9] = byte(i >> 8)
		x.Add([]translate.Segment{big}, nil)
	}
	assert.LessOrEqual(t, len(x.old.reqs), traceIndexRequestBytes+maxIndexedRequest)
}

// TestProjectsSeeOnlyTheirOwn: two projects' views of one index, the same
// trace and span ids in both: each finds only the segments added through
// it, before and after the generation that holds them is retired.
func TestProjectsSeeOnlyTheirOwn(t *testing.T) {
	one := New()
	two := one.NewProject()
	head := seg(1, "POST /checkout/pay", true, 1)
	head.Request = []byte(`{"query_string":"card=4111111111111111"}`)
	head.StatusCode = 200
	one.Add([]translate.Segment{head}, nil)
	for _, retired := range []bool{false, true} {
		if retired { // fill the current generation with other traces: head moves to the old one
			for i := range traceIndexTraces {
				var s translate.Segment
				binary.BigEndian.PutUint32(s.TraceID[1:], uint32(i+1))
				one.Add([]translate.Segment{s}, nil)
			}
		}
		_, found := two.SegmentOf([16]byte{1}, [8]byte{1})
		assert.False(t, found, "project two finds no segment of project one's (retired %v)", retired)
		assert.Equal(t, Facts{Transaction: "own"}, two.Facts([16]byte{1}, "own"), "nor its DSC facts")
		got, found := one.SegmentOf([16]byte{1}, [8]byte{1})
		require.True(t, found, "project one finds its own")
		assert.Equal(t, "POST /checkout/pay", got.Name)
	}
	two.Add([]translate.Segment{seg(1, "score", true, 1)}, nil)
	got, _ := two.SegmentOf([16]byte{1}, [8]byte{1})
	assert.Equal(t, SpanSegment{Name: "score"}, got, "project two's own segment, nothing of project one's")
	got, _ = one.SegmentOf([16]byte{1}, [8]byte{1})
	assert.Equal(t, "POST /checkout/pay", got.Name, "project one's is untouched")
}

// TestChurnRetiresOnlyItsOwnTraces: a quiet project's 100 traces and a
// churning one's 200,000 through one index: the churner retires its own
// generations, the quiet project's traces keep their heads, and all
// projects together stay within twice the bounds. A third project that
// arrives takes its part from the one holding most, the churner.
func TestChurnRetiresOnlyItsOwnTraces(t *testing.T) {
	quiet := New()
	churner := quiet.NewProject()
	id := func(i int) (b [16]byte) {
		binary.BigEndian.PutUint64(b[8:], uint64(i)+1)
		return b
	}
	within := func(i int) {
		var held int
		for _, v := range quiet.views {
			held += v.held()[0]
		}
		require.LessOrEqual(t, held, 2*traceIndexTraces, "trace %d", i)
	}
	for i := range 100 {
		quiet.Add([]translate.Segment{{TraceID: id(i), Name: "GET /quiet", Head: true, SpanIDs: []byte{1, 0, 0, 0, 0, 0, 0, 0}}}, nil)
	}
	for i := range 200_000 {
		churner.Add([]translate.Segment{{TraceID: id(i), Name: "churn", Head: true}}, nil)
		within(i)
	}
	for i := range 100 {
		require.Equal(t, "GET /quiet", quiet.Facts(id(i), "").Transaction, "quiet trace %d remembered", i)
	}
	assert.Empty(t, churner.Facts(id(0), "").Transaction, "the churner's first trace retired long ago")
	assert.Equal(t, "churn", churner.Facts(id(199_999), "").Transaction)

	third := quiet.NewProject()
	for i := range 2 * traceIndexTraces / 3 {
		third.Add([]translate.Segment{{TraceID: id(i), Name: "third", Head: true}}, nil)
		within(i)
	}
	assert.Equal(t, "third", third.Facts(id(0), "").Transaction)
	assert.Equal(t, "GET /quiet", quiet.Facts(id(0), "").Transaction)
}

// TestReleasedProjectLeavesTheStore: a released project's traces no longer
// count against the shared bounds: the project left fills them without
// retiring a generation of its own.
func TestReleasedProjectLeavesTheStore(t *testing.T) {
	kept := New()
	gone := kept.NewProject()
	id := func(i int) (b [16]byte) {
		binary.BigEndian.PutUint64(b[8:], uint64(i)+1)
		return b
	}
	for i := range traceIndexTraces {
		gone.Add([]translate.Segment{{TraceID: id(i), Name: "gone", Head: true}}, nil)
	}
	gone.Release()
	require.Len(t, kept.views, 1)
	for i := range 2*traceIndexTraces - 1 {
		kept.Add([]translate.Segment{{TraceID: id(i), Name: "kept", Head: true}}, nil)
	}
	assert.Equal(t, "kept", kept.Facts(id(0), "").Transaction, "the first trace kept: the released project's traces left no weight behind")
}
