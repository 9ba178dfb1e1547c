package sentryexporter

import (
	"encoding/binary"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var testStart = time.Date(2026, 11, 9, 17, 57, 30, 0, time.UTC)

func traceID(n int) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], uint64(n)+1)
	id[0] = 0xab
	return id
}

func spanID(trace, n int) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint32(id[:4], uint32(trace)+1)
	binary.BigEndian.PutUint32(id[4:], uint32(n)+1)
	return id
}

// makeTraces builds nTraces traces of one http.server root and two children
// each (so one transaction of 3 spans per trace); with exceptions, the db
// child carries one exception event (one Sentry error per trace).
func makeTraces(firstTrace, nTraces int, exceptions bool) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutStr("service.version", "1.2.3")
	rs.Resource().Attributes().PutStr("deployment.environment.name", "production")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("test")
	for i := firstTrace; i < firstTrace+nTraces; i++ {
		root := ss.Spans().AppendEmpty()
		root.SetTraceID(traceID(i))
		root.SetSpanID(spanID(i, 0))
		root.SetName("GET /cart/{id}")
		root.SetKind(ptrace.SpanKindServer)
		root.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
		root.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(30 * time.Millisecond)))
		root.Attributes().PutStr("http.request.method", "GET")
		root.Attributes().PutStr("http.route", "/cart/{id}")
		root.Attributes().PutInt("http.response.status_code", 200)

		db := ss.Spans().AppendEmpty()
		db.SetTraceID(traceID(i))
		db.SetSpanID(spanID(i, 1))
		db.SetParentSpanID(spanID(i, 0))
		db.SetName("SELECT carts")
		db.SetKind(ptrace.SpanKindClient)
		db.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Millisecond)))
		db.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(10 * time.Millisecond)))
		db.Attributes().PutStr("db.system.name", "postgresql")
		db.Attributes().PutStr("db.query.text", "SELECT * FROM carts WHERE id = $1")
		if exceptions {
			db.Status().SetCode(ptrace.StatusCodeError)
			ev := db.Events().AppendEmpty()
			ev.SetName("exception")
			ev.SetTimestamp(pcommon.NewTimestampFromTime(testStart.Add(9 * time.Millisecond)))
			ev.Attributes().PutStr("exception.type", "*pq.Error")
			ev.Attributes().PutStr("exception.message", "connection refused")
		}

		cl := ss.Spans().AppendEmpty()
		cl.SetTraceID(traceID(i))
		cl.SetSpanID(spanID(i, 2))
		cl.SetParentSpanID(spanID(i, 0))
		cl.SetName("POST")
		cl.SetKind(ptrace.SpanKindClient)
		cl.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart.Add(11 * time.Millisecond)))
		cl.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(25 * time.Millisecond)))
		cl.Attributes().PutStr("http.request.method", "POST")
		cl.Attributes().PutStr("url.full", "https://payments.internal/charge")
		cl.Attributes().PutInt("http.response.status_code", 201)
	}
	return td
}

// makeLogs builds n log records at info level, every one with a trace id.
func makeLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	sl := rl.ScopeLogs().AppendEmpty()
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Duration(i) * time.Millisecond)))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr("cart updated")
		lr.Attributes().PutInt("cart.items", int64(i))
		lr.SetTraceID(traceID(i))
		lr.SetSpanID(spanID(i, 0))
	}
	return ld
}
