package translate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestThresholdRate(t *testing.T) {
	tests := []struct {
		ts   string
		want float64
		ok   bool
	}{
		{"ot=th:0", 1, true},
		{"ot=th:8", 0.5, true},       // 0x80000000000000 = 2^55
		{"ot=th:c", 0.25, true},      // 0xc0... = 3/4 of 2^56
		{"ot=th:fd70a4", 0.01, true}, // the spec's 1% example (rounded threshold)
		{"vendor=x,ot=rv:abc;th:8", 0.5, true},
		{" ot=th:8 , other=1", 0.5, true},
		{"ot=th:", 0, false},
		{"ot=th:123456789abcdef", 0, false}, // 15 digits
		{"ot=th:8G", 0, false},
		{"ot=th:8A", 0, false}, // upper case is not valid in the spec's grammar
		{"ot=rv:abc", 0, false},
		{"", 0, false},
		{"th:8", 0, false},
	}
	for _, tt := range tests {
		got, ok := thresholdRate(tt.ts)
		assert.Equal(t, tt.ok, ok, tt.ts)
		if tt.ok {
			assert.InDelta(t, tt.want, got, 1e-6, tt.ts)
		}
	}
}

func TestSampling(t *testing.T) {
	tests := []struct {
		name        string
		flags       uint32
		ts          string
		attr        any
		wantSampled bool
		wantRate    string
	}{
		{"no flags: exported means sampled", 0, "", nil, true, ""},
		{"remote bits only (Go SDK)", 0x300, "", nil, true, ""},
		{"sampled bit", 0x01, "", nil, true, ""},
		{"trace flags set, not sampled", 0x02, "", nil, false, ""},
		{"tracestate threshold", 0x01, "ot=th:8", nil, true, "0.5"},
		{"attribute wins over tracestate", 0, "ot=th:8", 0.25, true, "0.25"},
		{"attribute as a string", 0, "", "0.1", true, "0.1"},
		{"attribute out of range is ignored", 0, "ot=th:c", 2.0, true, "0.25"},
		{"attribute zero is ignored", 0, "", 0.0, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := ptrace.NewSpan()
			sp.SetFlags(tt.flags)
			sp.TraceState().FromRaw(tt.ts)
			switch v := tt.attr.(type) {
			case float64:
				sp.Attributes().PutDouble("sentry.sample_rate", v)
			case string:
				sp.Attributes().PutStr("sentry.sample_rate", v)
			}
			sampled, rate := sampling(sp)
			assert.Equal(t, tt.wantSampled, sampled)
			assert.Equal(t, tt.wantRate, rate)
		})
	}
}

// exceptionTraces: a head segment "GET /a" with a child that records an
// exception, and a second segment (remote parent) in the same trace.
func exceptionTraces(stack string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "go")
	ss := rs.ScopeSpans().AppendEmpty()
	tid := [16]byte{1}
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(tid)
	root.SetSpanID([8]byte{1})
	root.SetName("GET /a")
	root.SetKind(ptrace.SpanKindServer)
	child := ss.Spans().AppendEmpty()
	child.SetTraceID(tid)
	child.SetSpanID([8]byte{2})
	child.SetParentSpanID([8]byte{1})
	child.SetName("work")
	ev := child.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.type", "*errors.errorString")
	ev.Attributes().PutStr("exception.message", "boom")
	if stack != "" {
		ev.Attributes().PutStr("exception.stacktrace", stack)
	}
	other := ss.Spans().AppendEmpty()
	other.SetTraceID(tid)
	other.SetSpanID([8]byte{3})
	other.SetParentSpanID([8]byte{9}) // not in the batch
	other.SetName("consume")
	return td
}

const goStack = "goroutine 1 [running]:\nmain.run()\n\t/src/main.go:42 +0x1d\nmain.main()\n\t/src/main.go:10 +0x25\n"

func TestSegmentsAndSpanErrorRef(t *testing.T) {
	r := New(testOptions()).Traces(exceptionTraces(goStack), TracesWant{Transactions: true, Errors: true, Segments: true})
	require.Len(t, r.Segments, 2)
	head, other := r.Segments[0], r.Segments[1]
	assert.Equal(t, "GET /a", head.Name)
	assert.True(t, head.Head)
	assert.Equal(t, 2, head.SpanCount())
	assert.Equal(t, [8]byte{1}, head.SpanID(0))
	assert.Equal(t, [8]byte{2}, head.SpanID(1))
	assert.Equal(t, "consume", other.Name)
	assert.False(t, other.Head, "its parent is not in the batch, but it has one")
	assert.Equal(t, 1, other.SpanCount())
	assert.Equal(t, [8]byte{3}, other.SpanID(0))

	require.Len(t, r.Errors, 1)
	ref := r.Errors[0].ErrorRef
	assert.Equal(t, [16]byte{1}, ref.TraceIDBytes)
	assert.Equal(t, [8]byte{2}, ref.SpanID)
	assert.True(t, ref.Linked)
	assert.False(t, ref.FromLog)
	assert.Equal(t, "GET /a", ref.Transaction)
	assert.True(t, ref.HasStacktrace)
	assert.Equal(t, fingerprint("*errors.errorString", "boom"), ref.Fingerprint)

	r2 := New(testOptions()).Traces(exceptionTraces(""), TracesWant{Errors: true})
	require.Len(t, r2.Errors, 1)
	assert.False(t, r2.Errors[0].HasStacktrace)
	assert.Nil(t, r2.Segments, "not asked for")
}

func TestLogErrorRef(t *testing.T) {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	linked := lrs.AppendEmpty()
	linked.SetTraceID([16]byte{1})
	linked.SetSpanID([8]byte{2})
	linked.Body().SetStr("request failed")
	linked.Attributes().PutStr("exception.type", "*errors.errorString")
	linked.Attributes().PutStr("exception.message", "boom")
	noSpan := lrs.AppendEmpty()
	noSpan.SetTraceID([16]byte{1})
	noSpan.Attributes().PutStr("exception.type", "E")

	r := New(Options{ErrorsFromLogs: true}).Logs(ld, LogsWant{Logs: true, Errors: true})
	require.Len(t, r.Errors, 2)
	a, b := r.Errors[0].ErrorRef, r.Errors[1].ErrorRef
	assert.True(t, a.Linked)
	assert.True(t, a.FromLog)
	assert.Equal(t, [8]byte{2}, a.SpanID)
	assert.Empty(t, a.Transaction, "a log-derived event has no transaction of its own")
	assert.False(t, a.HasStacktrace)
	assert.Equal(t, fingerprint("*errors.errorString", "boom"), a.Fingerprint, "the same key as the span event's")
	assert.False(t, b.Linked, "its span id was generated")
	assert.NotContains(t, string(r.Errors[0].Payload), `"transaction"`)
}

// TestSegmentRequest: each segment carries the request object and status code
// its transactions carry, in every traces form (span v2, and errors only
// while transactions are rate limited), so the exporter can give them to log-derived errors.
func TestSegmentRequest(t *testing.T) {
	attrs := map[string]any{
		"http.request.method": "GET", "url.path": "/a", "url.query": "q=1&token=x", "server.address": "h",
		"http.response.status_code": int64(502), "http.request.header.authorization": []any{"Bearer x"},
	}
	for _, want := range []TracesWant{
		{Transactions: true, Segments: true},
		{SpanV2: true, Segments: true},
		{Errors: true, Segments: true}, // transactions rate limited, errors not
	} {
		r := New(testOptions()).Traces(serverTrace(ptrace.SpanKindServer, attrs), want)
		require.Len(t, r.Segments, 1)
		seg := r.Segments[0]
		assert.JSONEq(t, `{"method":"GET","url":"http://h/a","query_string":"q=1&token=[Filtered]","headers":{"Authorization":"[Filtered]","Host":"h"}}`,
			string(seg.Request), "%+v", want)
		assert.Equal(t, 502, seg.StatusCode)
		assert.Equal(t, 2, seg.SpanCount(), "the span ids are still the segment's")
		if want.Transactions {
			require.Len(t, r.Transactions, 1)
			assert.Equal(t, string(r.Transactions[0].Request), string(seg.Request))
		}
		r.Release()
	}
	r := New(testOptions()).Traces(serverTrace(ptrace.SpanKindClient, attrs), TracesWant{Transactions: true, Segments: true})
	require.Len(t, r.Segments, 1)
	assert.Nil(t, r.Segments[0].Request, "no request outside server spans")
	assert.Zero(t, r.Segments[0].StatusCode)
}

// TestSampleRand: sample_rand comes from OTel's explicit randomness (ot=rv)
// or a trace id the W3C random flag marks random, and is consistent with the
// threshold: sample_rand < sample_rate exactly when R >= T.
func TestSampleRand(t *testing.T) {
	id := [16]byte{0: 0xff, 9: 0x80} // rightmost 7 bytes: 0x80000000000000 = 2^55
	for _, tt := range []struct {
		name  string
		flags uint32
		ts    string
		want  float64
		ok    bool
	}{
		{"no randomness known", 0x01, "", 0, false},
		{"random flag: the trace id's 56 bits", 0x03, "", 0.5 - 1.0/(1<<53), true},
		{"ot=rv wins over the trace id", 0x03, "ot=th:8;rv:00000000000000", 1 - 1.0/(1<<53), true},
		{"rv at the top", 0x01, "vendor=x, ot=rv:ffffffffffffff", 0, true},
		{"rv not 14 digits", 0x01, "ot=rv:fff", 0, false},
		{"rv upper case", 0x01, "ot=rv:FFFFFFFFFFFFFF", 0, false},
		{"rv not hex", 0x01, "ot=rv:zzzzzzzzzzzzzz", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sampleRand(id, tt.flags, tt.ts)
			assert.Equal(t, tt.ok, ok)
			if ok {
				assert.Equal(t, tt.want, got)
				assert.True(t, got >= 0 && got < 1)
			}
		})
	}
	// Consistency with the threshold: for T = 2^55 (rate 0.5), R = T is kept
	// (sample_rand < 0.5) and R = T-8 is not.
	keep, _ := sampleRand(id, 0, "ot=rv:80000000000000")
	drop, _ := sampleRand(id, 0, "ot=rv:7ffffffffffff8")
	assert.Less(t, keep, 0.5)
	assert.GreaterOrEqual(t, drop, 0.5)
}
