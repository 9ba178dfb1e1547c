package translate

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Log items (protocol notes §3.4).
//
// timestamp is the record time, else the observed time, else now. trace_id is
// the record's, or a generated one when it is missing or all zero; span_id only
// when valid. Severity numbers 1–24 map to their band's level and are kept;
// any other number falls back to the severity text, then to info/9. The body is
// a string: strings as they are, maps and arrays as JSON text, bytes as base64,
// other scalars in their JSON form. Attributes: sentry.environment,
// sentry.release, sentry.sdk.*, sentry.origin "auto.log.otel",
// otel.scope.name, the record's attributes, server.address (the resource's
// host.name, as @sentry/node writes its serverName and Sentry's logs docs
// show it; sentry-go v0.50 writes sentry.server.address) unless the record
// has its own (an HTTP client's peer: the record's wins, as a trace metric
// point's does, and the host goes as host.name), then the resource
// attributes selected by
// Options.LogResourceAttributes that the record does not already have. An item over MaxItemBytes is rendered smaller.

const originLog = "auto.log.otel"

// serverAddress is the key of the host a log record was sent from.
const serverAddress = "server.address"

// logLevels is indexed by (severity number - 1) / 4.
var logLevels = [...]string{"trace", "debug", "info", "warn", "error", "fatal"}

// severity returns the level and severity_number of a record.
func severity(num plog.SeverityNumber, text string) (string, int) {
	if n := int(num); n >= 1 && n <= 24 {
		return logLevels[(n-1)/4], n
	}
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "trace", "finest", "finer":
		return "trace", 1
	case "debug", "fine", "dbg":
		return "debug", 5
	case "info", "information", "informational", "notice", "config":
		return "info", 9
	case "warn", "warning":
		return "warn", 13
	case "error", "err", "severe":
		return "error", 17
	case "fatal", "critical", "crit", "alert", "emerg", "emergency", "panic":
		return "fatal", 21
	}
	return "info", 9
}

// eventLevel is the error-event level for a log level.
func eventLevel(l string) string {
	switch l {
	case "trace", "debug":
		return "debug"
	case "warn":
		return "warning"
	}
	return l
}

// Logs translates log records into log items and, with ErrorsFromLogs, error
// events. Every record becomes exactly one log item or is counted as skipped
// or invalid.
func (t *Translator) Logs(ld plog.Logs, want LogsWant) LogsResult {
	var r LogsResult
	s := t.get()
	defer t.put(s)
	total := ld.LogRecordCount()
	switch {
	case want.Logs:
		s.out.b = t.bufs.Get(int(t.logB.Load())*total*9/8 + 1024)
	case t.o.ErrorsFromLogs && want.Errors:
		s.out.b = t.bufs.Get(16 << 10) // error events only: grow as needed
	}
	now := uint64(t.o.Now().UnixNano())
	var logs []frag
	if want.Logs {
		logs = make([]frag, 0, total)
	}
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		rl := rls.At(i)
		ri := s.resource(rl.Resource())
		sls := rl.ScopeLogs()
		for j := range sls.Len() {
			logs = s.scopeLogs(&r, logs, sls.At(j), ri, want, now)
		}
	}
	if want.Logs && total > 0 && len(s.out.b) > 0 {
		t.logB.Store(hintOf(len(s.out.b), total))
	}
	out, arena := s.out.b, string(s.arena)
	r.release = t.bufs.Releaser(out)
	if len(logs) > 0 {
		r.Logs = make([][]byte, len(logs))
		for i, f := range logs {
			r.Logs[i] = out[f.a:f.b:f.b]
		}
	}
	r.Errors = s.errorEvents(out, arena)
	return r
}

// scopeLogs renders the records of one scope as wanted, appending the log
// items to logs, and counts what it skips or cannot render.
func (s *state) scopeLogs(r *LogsResult, logs []frag, sl plog.ScopeLogs, ri int32, want LogsWant, now uint64) []frag {
	scope := sl.Scope().Name()
	lrs := sl.LogRecords()
	for k := range lrs.Len() {
		lr := lrs.At(k)
		traceID := lr.TraceID()
		if traceID == ([16]byte{}) {
			traceID = s.newTraceID()
		}
		if want.Logs {
			if f, ok := s.logItem(lr, ri, scope, traceID, now); ok {
				logs = append(logs, f)
			} else {
				r.InvalidLogs++
			}
		} else {
			r.SkippedLogs++
			r.SkippedLogBytes += s.estimateLog(lr, ri, scope)
		}
		if s.t.o.ErrorsFromLogs && hasException(lr.Attributes()) {
			switch {
			case !want.Errors:
				r.SkippedErrors++
			case !s.logError(lr, ri, scope, traceID, now):
				r.InvalidErrors++
			}
		}
	}
	return logs
}

func logTime(lr plog.LogRecord, now uint64) uint64 {
	if ts := uint64(lr.Timestamp()); ts != 0 {
		return ts
	}
	if ts := uint64(lr.ObservedTimestamp()); ts != 0 {
		return ts
	}
	return now
}

// logItem renders one log item within MaxItemBytes.
func (s *state) logItem(lr plog.LogRecord, ri int32, scope string, traceID [16]byte, now uint64) (frag, bool) {
	a := s.out.len()
	for lvl := range levels {
		s.out.truncate(a)
		s.writeLog(lr, &s.res[ri], scope, traceID, now, lvl)
		if s.fit(a, s.t.o.MaxItemBytes) {
			return frag{a, s.out.len()}, true
		}
	}
	s.out.truncate(a)
	return frag{}, false
}

func (s *state) writeLog(lr plog.LogRecord, ri *resInfo, scope string, traceID [16]byte, now uint64, lvl int) {
	l := s.t.limits(lvl)
	wv := s.out // a local writer: appends to it need no GC write barrier
	w := &wv
	defer func() { s.out = wv }()
	w.raw(`{"timestamp":`)
	w.ts(logTime(lr, now))
	w.raw(`,"trace_id":`)
	w.hex(traceID[:])
	if id := lr.SpanID(); id != ([8]byte{}) {
		w.raw(`,"span_id":`)
		w.hex(id[:])
	}
	level, num := severity(lr.SeverityNumber(), lr.SeverityText())
	w.raw(`,"level":"`)
	w.raw(level)
	w.raw(`","severity_number":`)
	w.int(int64(num))
	w.raw(`,"body":`)
	s.bodyString(w, lr.Body(), &l)
	w.raw(`,"attributes":{`)
	s.seen.reset()
	n := 0
	s.sentryAttrs(w, &n, ri, blockLog)
	s.typedStr(w, &n, "otel.scope.name", scope)
	dropped := int(lr.DroppedAttributesCount())
	s.members(w, lr.Attributes(), true, &n, &l, &dropped)
	if !s.typedStrUnlessSeen(w, &n, serverAddress, ri.server) {
		// The record names its own server.address (an HTTP client's peer):
		// the host goes under the resource's own key.
		s.typedStrUnlessSeen(w, &n, "host.name", ri.server)
	}
	s.typedResource(ri)
	s.resourceTyped(w, ri, &n, &l, &dropped, true)
	droppedMember(w, &n, dropped, true)
	w.raw(`}}`)
}

// bodyString writes a log body as one JSON string.
func (s *state) bodyString(w *jw, v pcommon.Value, l *limits) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		w.str(v.Str(), l.value)
	case pcommon.ValueTypeEmpty:
		w.raw(`""`)
	case pcommon.ValueTypeBytes:
		w.base64(v.Bytes().AsRaw(), l.value)
	default:
		s.tmp.truncate(0)
		plain(&s.tmp, v, l, 1)
		w.str(string(s.tmp.b), l.value)
	}
}

// estimateLog guesses the serialized size of a log item without serializing it.
func (s *state) estimateLog(lr plog.LogRecord, ri int32, scope string) int {
	n := 300 + len(scope) + s.res[ri].estimate
	b := lr.Body()
	switch b.Type() {
	case pcommon.ValueTypeStr:
		n += len(b.Str())
	case pcommon.ValueTypeBytes:
		n += b.Bytes().Len() * 4 / 3
	case pcommon.ValueTypeMap:
		n += 64 * b.Map().Len()
	case pcommon.ValueTypeSlice:
		n += 64 * b.Slice().Len()
	}
	for k, v := range lr.Attributes().All() {
		n += len(k) + 32
		if v.Type() == pcommon.ValueTypeStr {
			n += len(v.Str())
		}
	}
	return n
}

// logError renders the error event of a record with exception.* attributes.
func (s *state) logError(lr plog.LogRecord, ri int32, scope string, traceID [16]byte, now uint64) bool {
	level, _ := severity(lr.SeverityNumber(), lr.SeverityText())
	in := errInput{
		ri: &s.res[ri], ts: logTime(lr, now), level: eventLevel(level),
		traceID: traceID, spanID: lr.SpanID(),
		mechanism: mechanismLog, origin: originLog, logger: scope, attrs: lr.Attributes(),
		unlinked: lr.TraceID() == ([16]byte{}) || lr.SpanID() == ([8]byte{}),
		seed: eventSeed{
			kind: seedLogError, trace: lr.TraceID(), span: lr.SpanID(), ts: uint64(lr.Timestamp()), n: uint64(lr.ObservedTimestamp()),
			none: lr.Timestamp() == 0 && lr.ObservedTimestamp() == 0, // records alike in all but their place in a batch stay apart
		},
	}
	if in.spanID == ([8]byte{}) {
		in.spanID = s.newSpanID() // contexts.trace needs a span id
	}
	if b := lr.Body(); b.Type() != pcommon.ValueTypeEmpty {
		in.message, in.hasMessage = b, true
	}
	return s.errorEvent(&in, ri)
}
