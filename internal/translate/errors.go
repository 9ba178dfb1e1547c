package translate

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otel-sentry/sentryexporter/internal/stacktrace"
)

// Error events from exceptions: span events named "exception" and, with
// ErrorsFromLogs, log records carrying exception.* attributes.
//
// The exception is exception.type and exception.message; the stack comes from
// stacktrace.Parse(exception.stacktrace, telemetry.sdk.language). When Parse
// recognizes the text, its chain is used and the attributes override the type
// and value of the last (thrown) exception; otherwise the raw text goes to
// extra["exception.stacktrace"]. mechanism.handled is !exception.escaped. The
// other attributes of the event or record go to extra.

// errRec is an error event whose strings and payload are still ranges.
type errRec struct {
	ev, trace span32
	ri        int32
	a, b      int
	ref       errRef
}

// errInput is what one error event is made of.
type errInput struct {
	ri                *resInfo
	ts                uint64
	level             string
	traceID           [16]byte
	spanID, parentID  [8]byte
	hasParent         bool
	op, status        string
	tx                name
	mechanism, logger string
	origin            string
	message           pcommon.Value // log body; zero Value when none
	hasMessage        bool
	req               frag // the segment's request object in s.frag; empty: none
	code              int  // the segment's response status code; 0: none
	attrs             pcommon.Map
	unlinked          bool // the trace or span id was generated (refs.go)
}

const (
	mechanismSpan = "auto.otel.span_event"
	mechanismLog  = "auto.otel.log"
)

// spanErrors turns exception span events into error events.
func (s *state) spanErrors(r *TracesResult, want bool) {
	for i := range s.spans {
		sr := &s.spans[i]
		evs := sr.sp.Events()
		for j := range evs.Len() {
			e := evs.At(j)
			if e.Name() != "exception" {
				continue
			}
			if !want {
				r.SkippedErrors++
				continue
			}
			in := errInput{
				ri: &s.res[sr.res], ts: uint64(e.Timestamp()), level: "error",
				traceID: sr.traceID, spanID: sr.id, parentID: sr.parent, hasParent: sr.hasParent,
				op: sr.sem.op, status: sr.sem.status, tx: s.spans[s.segs[sr.seg].root].sem.name,
				mechanism: mechanismSpan, origin: "auto.otel", logger: s.scopes[sr.scopeIdx].sc.Name(), attrs: e.Attributes(),
			}
			if in.ts == 0 {
				in.ts = sr.start
			}
			if req, code, ok := s.segmentRequest(sr.seg); ok {
				in.req, in.code = req, code
			}
			if !s.errorEvent(&in, sr.res) {
				r.InvalidErrors++
			}
		}
	}
}

// hasException reports whether attributes describe an exception.
func hasException(m pcommon.Map) bool {
	for k := range m.All() {
		switch k {
		case "exception.type", "exception.message", "exception.stacktrace":
			return true
		}
	}
	return false
}

// errorEvent renders one error event within MaxEventBytes, trying smaller
// renderings, and reports whether it fit.
func (s *state) errorEvent(in *errInput, ri int32) bool {
	a := s.out.len()
	ev := s.eventID()
	trace := s.arenaHex(in.traceID[:])
	var typ, msg, stack string
	escaped := false
	for k, v := range in.attrs.All() {
		switch k {
		case "exception.type":
			typ = v.AsString()
		case "exception.message":
			msg = v.AsString()
		case "exception.stacktrace":
			stack = v.AsString()
		case "exception.escaped":
			escaped = v.Bool() || v.Str() == "true"
		}
	}
	var excs []stacktrace.Exception
	parsed := false
	if stack != "" {
		excs, parsed = stacktrace.Parse(stack, in.ri.lang)
		parsed = parsed && len(excs) > 0
	}
	for lvl := range levels {
		s.out.truncate(a)
		s.writeError(in, ev, lvl, typ, msg, !escaped, excs, parsed)
		if s.fit(a, s.t.o.MaxEventBytes) {
			s.errs = append(s.errs, errRec{ev: ev, trace: trace, ri: ri, a: a, b: s.out.len(), ref: s.errRefOf(in, typ, msg, hasFrames(excs, parsed))})
			return true
		}
	}
	s.out.truncate(a)
	return false
}

func (s *state) writeError(in *errInput, ev span32, lvl int, typ, msg string, handled bool, excs []stacktrace.Exception, parsed bool) {
	l := s.t.limits(lvl)
	wv := s.out // a local writer: appends to it need no GC write barrier
	w := &wv
	defer func() { s.out = wv }()
	n := 0
	w.byte('{')
	w.key(&n, "event_id")
	w.b = append(w.b, '"')
	w.b = append(w.b, s.arenaBytes(ev)...)
	w.b = append(w.b, '"')
	w.key(&n, "timestamp")
	w.ts(in.ts)
	w.strField(&n, "level", in.level, 0)
	w.optStrField(&n, "logger", in.logger, 128)
	s.eventCommon(w, &n, in.ri)
	if !in.tx.empty() {
		w.key(&n, "transaction")
		w.name(in.tx, l.value)
	}
	if in.req.b > in.req.a && lvl < levels-1 {
		w.key(&n, "request")
		w.b = append(w.b, s.frag.b[in.req.a:in.req.b]...)
	}
	if in.hasMessage {
		w.key(&n, "message")
		w.raw(`{"formatted":`)
		s.bodyString(w, in.message, &l)
		w.byte('}')
	}

	w.key(&n, "exception")
	w.raw(`{"values":[`)
	if parsed {
		for i, e := range excs {
			if i > 0 {
				w.byte(',')
			}
			last := i == len(excs)-1
			t, v := e.Type, e.Value
			// exception.type wins, unless it is the parsed module and type
			// joined ("java.lang.IllegalStateException"): the Java and
			// Python SDKs send those apart, as the parsed ones are.
			if last && typ != "" && (e.Module == "" || typ != e.Module+"."+e.Type) {
				t = typ
			}
			if last && msg != "" {
				v = msg
			}
			s.exception(w, t, v, e.Module, e.Frames, last, handled, in.mechanism, &l)
		}
	} else {
		s.exception(w, typ, msg, "", nil, true, handled, in.mechanism, &l)
	}
	w.raw(`]}`)

	w.key(&n, "contexts")
	w.raw(`{"trace":{`)
	m := 0
	w.key(&m, "trace_id")
	w.hex(in.traceID[:])
	w.key(&m, "span_id")
	w.hex(in.spanID[:])
	if in.hasParent {
		w.key(&m, "parent_span_id")
		w.hex(in.parentID[:])
	}
	w.optStrField(&m, "op", in.op, 128)
	w.optStrField(&m, "status", in.status, 0)
	w.strField(&m, "origin", in.origin, 0)
	w.byte('}')
	responseContext(w, in.code)
	s.resourceContexts(w, in.ri)
	w.raw(`,"otel":{"resource":`)
	s.resourcePlain(w, in.ri, lvl)
	w.raw(`}}`)

	w.key(&n, "extra")
	w.byte('{')
	s.seen.reset()
	s.seen.add("exception.type")
	s.seen.add("exception.message")
	s.seen.add("exception.escaped")
	if parsed {
		s.seen.add("exception.stacktrace")
	}
	m, dropped := 0, 0
	s.members(w, in.attrs, false, &m, &l, &dropped)
	droppedMember(w, &m, dropped, false)
	w.byte('}')
	w.byte('}')
}

// exception writes one element of exception.values. Sentry needs a type or a
// value; "Error" stands in when the input has neither.
func (*state) exception(w *jw, typ, value, module string, frames []stacktrace.Frame, last, handled bool, mechanism string, l *limits) {
	n := 0
	w.byte('{')
	if typ == "" && value == "" {
		typ = "Error"
	}
	w.optStrField(&n, "type", typ, l.value)
	w.optStrField(&n, "value", value, l.value)
	w.optStrField(&n, "module", module, l.value)
	if last {
		w.key(&n, "mechanism")
		w.raw(`{"type":"`)
		w.raw(mechanism)
		w.raw(`","handled":`)
		w.bool(handled)
		w.byte('}')
	}
	if len(frames) > l.frames {
		frames = frames[len(frames)-l.frames:] // keep the innermost
	}
	if len(frames) > 0 {
		w.key(&n, "stacktrace")
		w.raw(`{"frames":[`)
		for i := range frames {
			f := &frames[i]
			if i > 0 {
				w.byte(',')
			}
			m := 0
			w.byte('{')
			w.optStrField(&m, "function", f.Function, 1024)
			w.optStrField(&m, "module", f.Module, 1024)
			w.optStrField(&m, "filename", f.Filename, 1024)
			w.optStrField(&m, "abs_path", f.AbsPath, 1024)
			if f.Lineno > 0 {
				w.key(&m, "lineno")
				w.int(int64(f.Lineno))
			}
			if f.Colno > 0 {
				w.key(&m, "colno")
				w.int(int64(f.Colno))
			}
			w.key(&m, "in_app")
			w.bool(f.InApp)
			w.byte('}')
		}
		w.raw(`]}`)
	}
	w.byte('}')
}
