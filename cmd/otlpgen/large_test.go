package main

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// A large batch is one service's traces and logs, counted as generated, with its items
// near the limits the profile names.
func TestLargeBatch(t *testing.T) {
	g := newGenerator(3, 6, 2, 0.5)
	l := newLargeGen(g)
	td, ld, c := l.batch(84, time.Now())
	if td.SpanCount() != c.spans || ld.LogRecordCount() != c.logs || c.spans < 84 {
		t.Fatalf("counted %+v; pdata has %d spans, %d logs", c.counts, td.SpanCount(), ld.LogRecordCount())
	}
	if td.ResourceSpans().Len() != 1 || ld.ResourceLogs().Len() != 1 || len(c.byService) != 1 {
		t.Fatalf("%d resources of spans, %d of logs, %d services: want one service", td.ResourceSpans().Len(), ld.ResourceLogs().Len(), len(c.byService))
	}
	if c.spanExceptions == 0 || c.exceptions == c.spanExceptions {
		t.Fatalf("no exceptions of both kinds at ratio 0.5: %+v", c.counts)
	}
	for _, sp := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
		for _, ev := range sp.Events().All() {
			st, _ := ev.Attributes().Get("exception.stacktrace")
			if n := len(st.Str()); n < 40<<10 || strings.Count(st.Str(), "stage") < 300 {
				t.Fatalf("stack trace of %d bytes, %d deep frames: want over MaxFrames (250)", n, strings.Count(st.Str(), "stage"))
			}
			if ev.Attributes().Len() < largeEventAttrs {
				t.Fatalf("exception event with %d attributes", ev.Attributes().Len())
			}
		}
	}
	for _, lr := range ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
		if _, exc := lr.Attributes().Get("exception.type"); !exc && len(lr.Body().Str()) != largeBody {
			t.Fatalf("log body of %d bytes", len(lr.Body().Str()))
		}
	}
	tb, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	lb, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if per := len(lb) / c.logs; per < 18_000 {
		t.Fatalf("%d bytes per log record", per)
	}
	t.Logf("%+v: traces %d B, logs %d B", c.counts, len(tb), len(lb))
}

// Each language's deep stack trace keeps the service's own exception (head and cause).
func TestDeepStack(t *testing.T) {
	for i := range 3 {
		s := serviceAt(i)
		st := deepStack(&s)
		head, _, _ := strings.Cut(s.exceptions[0].stacktrace, "\n")
		if !strings.HasPrefix(st, head+"\n") || !strings.HasSuffix(st, s.exceptions[0].stacktrace[len(head)+1:]) {
			t.Errorf("%s: the service's stack trace is not kept around the deep chain", s.lang)
		}
		if len(st) < largeStackBytes-512 || len(st) > largeStackBytes+512 {
			t.Errorf("%s: %d bytes", s.lang, len(st))
		}
	}
}
