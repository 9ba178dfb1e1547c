package translate

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/bufpool"
)

// Transaction is one transaction payload: a segment (a span whose parent is not
// in this batch: root, remote parent, missing parent) with its descendants in
// spans[], or a continuation of one that was over MaxEventBytes.
//
// Request is the transaction's "request" object (a slice of Payload; nil
// when the segment root is not an HTTP server span) and StatusCode its
// contexts.response.status_code (0: none), so error events raised elsewhere
// in the segment (e.g. from logs) can carry them too. SegmentSpanID is the
// span id of the segment root (of the original segment, for a continuation).
type Transaction struct {
	EventID, TraceID, Name, Environment, Release string
	SegmentSpanID                                string
	Spans                                        int // segment + children inside
	Payload                                      []byte
	Request                                      []byte
	StatusCode                                   int
	Segment                                      int // index of its segment in TracesResult.Segments (when asked for)
}

// ErrorEvent is one error event payload.
type ErrorEvent struct {
	EventID, TraceID, Environment, Release string
	Payload                                []byte
	ErrorRef                               // what identifies it (refs.go)
}

// SpanGroup holds the span v2 items of one trace, each item one span JSON object.
// Segment is the name of the trace's first segment; Environment and Release are
// those of its resource.
type SpanGroup struct {
	TraceID, Environment, Release, Segment string
	Items                                  [][]byte
	// Container is Items framed as one span v2 container payload,
	// {"version":2,"items":[...]}, byte for byte what
	// envelope.AppendSpanContainer writes for Items; Items are slices of it.
	// An exporter whose limits let the whole group go in one envelope sends
	// it as is, with no copy.
	Container []byte
}

// TracesWant says what to serialize. Anything not wanted is only counted.
// Segments asks for TracesResult.Segments.
//
// ProfilerOf, when set, names the profiler whose profile chunks cover a
// resource's process ("" for none): each transaction of that resource
// carries it as contexts.profile.profiler_id, which links the transaction
// to the process's continuous profile in Sentry. It is asked once per
// resource, and only for transactions.
type TracesWant struct {
	Transactions, SpanV2, Errors, Segments bool
	ProfilerOf                             func(pcommon.Resource) Profiler
	// SpanProfilerOf, when set, names the profiler whose samples ran in a
	// span of a segment: its transactions name it, and the thread that ran
	// it as contexts.trace.data["thread.id"], before ProfilerOf's.
	SpanProfilerOf SpanProfilerOf
}

// TracesResult holds the payloads of one Traces call and what was not emitted.
//
// For each form that was wanted, every input span is in exactly one payload of
// that form or counted in InvalidSpans. SkippedTransactions is the number of
// transactions (segments) not serialized because want.Transactions was false;
// SkippedSpans is the number of spans serialized in neither form (so all of them
// when both were unwanted). SkippedErrors counts exception events (with
// ErrorsFromSpanExceptions) not serialized because want.Errors was false.
type TracesResult struct {
	Transactions []Transaction
	SpanGroups   []SpanGroup
	Errors       []ErrorEvent
	Segments     []Segment // with want.Segments: every segment of the batch (refs.go)

	SkippedSpans, SkippedTransactions, SkippedErrors int
	InvalidSpans, InvalidErrors                      int

	release *bufpool.Releaser
}

// Release gives the memory of all payloads back for reuse by later calls. It is
// optional (without it the memory is garbage collected) and saves about half
// the cost of a call in steady state. Call it once the payloads have been
// copied, e.g. encoded into envelopes: no payload of r may be used afterwards.
// Calling it again, or on a copy of r, does nothing.
func (r *TracesResult) Release() { r.release.Release() }

// LogsWant says what to serialize. Anything not wanted is only counted.
type LogsWant struct{ Logs, Errors bool }

// LogsResult holds the payloads of one Logs call and what was not emitted.
// SkippedLogBytes is a cheap estimate of the serialized size of the skipped logs.
type LogsResult struct {
	Logs   [][]byte // one log item JSON each
	Errors []ErrorEvent

	SkippedLogs, SkippedLogBytes, SkippedErrors int
	InvalidLogs, InvalidErrors                  int

	release *bufpool.Releaser
}

// Release is TracesResult.Release for logs.
func (r *LogsResult) Release() { r.release.Release() }

// Traces translates spans into transactions, span v2 groups and error events.
func (t *Translator) Traces(td ptrace.Traces, want TracesWant) TracesResult {
	var r TracesResult
	s := t.get()
	defer t.put(s)
	spanErrors := want.Errors && t.o.ErrorsFromSpanExceptions
	if !want.Transactions && !want.SpanV2 && !spanErrors {
		// Nothing to serialize: count only.
		n, segs, excs := s.countTraces(td, t.o.ErrorsFromSpanExceptions)
		if n > 0 {
			r.SkippedSpans, r.SkippedTransactions, r.SkippedErrors = n, segs, excs
		}
		return r
	}
	s.collect(td, uint64(t.o.Now().UnixNano()))
	s.group()
	if len(s.spans) == 0 {
		return r
	}
	t.renderTraces(s, &r, want)
	var segs []segRec
	if want.Segments {
		segs = s.segmentRecs()
	}
	out, arena := s.out.b, string(s.arena)
	r.release = t.bufs.Releaser(out)
	r.Segments = segmentsOut(segs, out, arena)
	r.Transactions = s.transactionsOut(out, arena)
	r.SpanGroups = s.spanGroupsOut(out, arena)
	r.Errors = s.errorEvents(out, arena)
	return r
}

// renderTraces writes the wanted forms of the grouped spans into s.out, in
// a buffer sized by the bytes per span and form of the calls before, and
// counts what is not wanted.
func (t *Translator) renderTraces(s *state, r *TracesResult, want TracesWant) {
	n := len(s.spans)
	forms := 0
	if want.Transactions {
		forms++
	}
	if want.SpanV2 {
		forms++
	}
	switch {
	case forms > 0:
		s.out.b = t.bufs.Get(forms*int(t.spanB.Load())*n*9/8 + 4096)
	case want.Errors && t.o.ErrorsFromSpanExceptions:
		s.out.b = t.bufs.Get(16 << 10) // error events only: grow as needed
	}
	if forms > 0 {
		s.profilers(want.ProfilerOf)
		s.spanProfiler = want.SpanProfilerOf
	}
	if want.Transactions {
		s.transactions(r)
	} else {
		r.SkippedTransactions = len(s.segs)
	}
	if want.SpanV2 {
		s.spanGroups(r)
	}
	if forms == 0 {
		r.SkippedSpans = n
	}
	if t.o.ErrorsFromSpanExceptions {
		s.spanErrors(r, want.Errors)
	}
	if forms > 0 {
		t.spanB.Store(hintOf(len(s.out.b), n*forms))
	}
}
