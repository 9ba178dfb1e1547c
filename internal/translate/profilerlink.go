package translate

import "go.opentelemetry.io/collector/pdata/pcommon"

// Profiler is the profiler of a resource's process (TracesWant.ProfilerOf).
type Profiler struct {
	// ID is its profiler_id; "" for none.
	ID string
	// OwnThreads: its chunks come from the same resource as the spans, so
	// their thread_ids are the kind of id a span's own thread.id is, and a
	// segment root's thread.id names the transaction's thread.
	OwnThreads bool
}

// SpanProfilerOf names the profiler whose samples ran in a span (a
// profile's sample links) and the chunk's thread_id of those samples.
type SpanProfilerOf func(traceID [16]byte, spanID [8]byte) (profilerID, thread string, ok bool)

// maxSpanProfilerAsks bounds the spans of one segment asked for a profiler:
// the root first, then its descendants in order.
const maxSpanProfilerAsks = 64

// txProfiler is the profiler and thread one transaction names.
type txProfiler struct{ id, thread string }

// profilers names each resource's profiler (TracesWant.ProfilerOf) for its
// transactions' contexts.profile and its span v2 segments' sentry.profiler_id.
func (s *state) profilers(of func(pcommon.Resource) Profiler) {
	if of == nil {
		return
	}
	for i := range s.res {
		p := of(s.res[i].res)
		s.res[i].profilerID, s.res[i].ownThreads = p.ID, p.OwnThreads
	}
}

// segmentProfiler is what the transactions of a segment name: the profiler
// whose samples ran in one of its spans and their thread (the first of at
// most maxSpanProfilerAsks spans that has one); else its resource's
// profiler, with the root's own thread.id when that is the chunks' kind of
// id. The thread is a string, as the chunk's thread_id is.
func (s *state) segmentProfiler(members []int32) txProfiler {
	root := &s.spans[members[0]]
	if of := s.spanProfiler; of != nil {
		for _, m := range members[:min(len(members), maxSpanProfilerAsks)] {
			if id, th, ok := of(root.traceID, s.spans[m].id); ok {
				return txProfiler{id: id, thread: th}
			}
		}
	}
	ri := &s.res[root.res]
	p := txProfiler{id: ri.profilerID}
	if p.id != "" && ri.ownThreads {
		if v, ok := root.sp.Attributes().Get("thread.id"); ok {
			p.thread = v.AsString()
		}
	}
	return p
}
