package translate

import (
	"strings"

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
	unlinked          bool      // the trace or span id was generated (refs.go)
	seed              eventSeed // what identifies it: its event id (ids.go)
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
			in.seed = eventSeed{kind: seedSpanError, trace: sr.traceID, span: sr.id, ts: uint64(e.Timestamp()), n: uint64(j)}
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

// thrown is the exception of an error event: exception.type and
// exception.message, whether it was handled (not exception.escaped), and
// the chain stacktrace.Parse read from exception.stacktrace (parsed false:
// the raw text goes to extra).
type thrown struct {
	typ, msg string
	handled  bool
	excs     []stacktrace.Exception
	parsed   bool
}

// thrownOf reads the exception.* attributes of an error event whose
// resource's language is lang.
func thrownOf(attrs pcommon.Map, lang string) thrown {
	var th thrown
	var stack string
	escaped := false
	for k, v := range attrs.All() {
		switch k {
		case "exception.type":
			th.typ = v.AsString()
		case "exception.message":
			th.msg = v.AsString()
		case "exception.stacktrace":
			stack = v.AsString()
		case "exception.escaped":
			escaped = v.Bool() || v.Str() == "true"
		}
	}
	th.handled = !escaped
	if stack != "" {
		th.excs, th.parsed = stacktrace.Parse(stack, lang)
		th.parsed = th.parsed && len(th.excs) > 0
	}
	return th
}

// errorEvent renders one error event within MaxEventBytes, trying smaller
// renderings, and reports whether it fit.
func (s *state) errorEvent(in *errInput, ri int32) bool {
	a := s.out.len()
	th := thrownOf(in.attrs, in.ri.lang)
	in.seed.typ, in.seed.msg = th.typ, th.msg
	ev := s.derivedEventID(&in.seed)
	trace := s.arenaHex(in.traceID[:])
	for lvl := range levels {
		s.out.truncate(a)
		s.writeError(in, ev, lvl, &th)
		if s.fit(a, s.t.o.MaxEventBytes) {
			s.errs = append(s.errs, errRec{ev: ev, trace: trace, ri: ri, a: a, b: s.out.len(), ref: s.errRefOf(in, th.typ, th.msg, hasFrames(th.excs, th.parsed))})
			return true
		}
	}
	s.out.truncate(a)
	return false
}

func (s *state) writeError(in *errInput, ev span32, lvl int, th *thrown) {
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
	s.exceptionValues(w, th, in.mechanism, &l)
	w.key(&n, "contexts")
	s.errorContexts(w, in, lvl)
	w.key(&n, "extra")
	s.errorExtra(w, in.attrs, th.parsed, &l)
	w.byte('}')
}

// exceptionValues writes the exception object: the parsed chain, the
// thrown exception last with the attributes' type and message where they
// have them, or the one exception the attributes describe.
func (s *state) exceptionValues(w *jw, th *thrown, mechanism string, l *limits) {
	w.raw(`{"values":[`)
	if th.parsed {
		for i, e := range th.excs {
			if i > 0 {
				w.byte(',')
			}
			last := i == len(th.excs)-1
			t, v := e.Type, e.Value
			// exception.type wins, unless it is the parsed module and type
			// joined ("java.lang.IllegalStateException"): the Java and
			// Python SDKs send those apart, as the parsed ones are.
			if last && th.typ != "" && (e.Module == "" || !dotJoined(th.typ, e.Module, e.Type)) {
				t = th.typ
			}
			if last && th.msg != "" {
				v = th.msg
			}
			s.exception(w, t, v, e.Module, e.Frames, last, th.handled, mechanism, l)
		}
	} else {
		s.exception(w, th.typ, th.msg, "", nil, true, th.handled, mechanism, l)
	}
	w.raw(`]}`)
}

// dotJoined reports whether typ is module + "." + short, without building
// that string (a name over 32 bytes would allocate, on every rendering).
func dotJoined(typ, module, short string) bool {
	return len(typ) == len(module)+1+len(short) && typ[len(module)] == '.' &&
		strings.HasPrefix(typ, module) && strings.HasSuffix(typ, short)
}

// errorContexts writes the contexts object: trace, response, the
// resource's contexts and otel.resource.
func (s *state) errorContexts(w *jw, in *errInput, lvl int) {
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
}

// errorExtra writes the extra object: the attributes other than the
// exception's own (exception.stacktrace stays when it did not parse).
func (s *state) errorExtra(w *jw, attrs pcommon.Map, parsed bool, l *limits) {
	w.byte('{')
	s.seen.reset()
	s.seen.add("exception.type")
	s.seen.add("exception.message")
	s.seen.add("exception.escaped")
	if parsed {
		s.seen.add("exception.stacktrace")
	}
	m, dropped := 0, 0
	s.members(w, attrs, false, &m, l, &dropped)
	droppedMember(w, &m, dropped, false)
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
