package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func TestBatchCounts(t *testing.T) {
	g := newGenerator(1, 3, 2, 0.5)
	td, ld, c := g.batch(500, time.Now())
	if c.spans < 500 || td.SpanCount() != c.spans {
		t.Fatalf("spans: counted %d, pdata %d", c.spans, td.SpanCount())
	}
	if ld.LogRecordCount() != c.logs || c.logs < 2*c.traces {
		t.Fatalf("logs: counted %d, pdata %d, traces %d", c.logs, ld.LogRecordCount(), c.traces)
	}
	if c.exceptions == 0 || c.spanExceptions == 0 {
		t.Fatalf("no exceptions at ratio 0.5: %+v", c)
	}
	var sum counts
	for _, bc := range c.byService {
		sum.add(bc)
	}
	if sum != c.counts || len(c.byService) != 3 {
		t.Fatalf("by service %+v does not add up to %+v", c.byService, c.counts)
	}
	for _, rs := range td.ResourceSpans().All() {
		name, _ := rs.Resource().Attributes().Get("service.name")
		n := 0
		for _, ss := range rs.ScopeSpans().All() {
			n += ss.Spans().Len()
		}
		if c.byService[name.Str()].spans != n {
			t.Fatalf("%s: counted %d spans, pdata %d", name.Str(), c.byService[name.Str()].spans, n)
		}
	}
	events := 0
	for _, rs := range td.ResourceSpans().All() {
		if _, ok := rs.Resource().Attributes().Get("service.name"); !ok {
			t.Fatal("resource without service.name")
		}
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() || sp.EndTimestamp() < sp.StartTimestamp() {
					t.Fatalf("bad span %s", sp.Name())
				}
				if sp.Kind() == ptrace.SpanKindServer {
					if _, ok := sp.Attributes().Get("http.route"); !ok {
						t.Fatal("server span without http.route")
					}
				}
				for _, ev := range sp.Events().All() {
					if ev.Name() == "exception" {
						events++
					}
				}
			}
		}
	}
	if events != c.spanExceptions {
		t.Fatalf("exception events %d, counted %d", events, c.spanExceptions)
	}
}

func TestSend(t *testing.T) {
	var spans, logs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("content type %q", r.Header.Get("Content-Type"))
		}
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/v1/traces":
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				t.Error(err)
			}
			spans.Add(int64(req.Traces().SpanCount()))
		case "/v1/logs":
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				t.Error(err)
			}
			logs.Add(int64(req.Logs().LogRecordCount()))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	s := &sender{client: srv.Client(), tracesURL: srv.URL + "/v1/traces", logsURL: srv.URL + "/v1/logs"}
	g := newGenerator(2, 3, 1, 0.1)
	for range 3 {
		td, ld, c := g.batch(50, time.Now())
		s.send(t.Context(), td, ld, c)
	}
	tot := s.totals(time.Second)
	if tot.Spans != spans.Load() || tot.Logs != logs.Load() || tot.Requests != 6 || len(tot.HTTPErrors) != 0 {
		t.Fatalf("totals %+v, server saw %d spans %d logs", tot, spans.Load(), logs.Load())
	}
	var sum ServiceTotals
	for _, st := range tot.ByService {
		sum.Spans += st.Spans
		sum.Logs += st.Logs
		sum.Exceptions += st.Exceptions
	}
	if sum != (ServiceTotals{Spans: tot.Spans, Logs: tot.Logs, Exceptions: tot.Exceptions}) || len(tot.ByService) != 3 {
		t.Fatalf("by service %+v does not add up to %+v", tot.ByService, tot)
	}
}

func TestRequestShapedTraces(t *testing.T) {
	g := newGenerator(7, 3, 2, 0.05)
	g.spansPerTrace = 10
	td, _, c := g.batch(1000, time.Now())
	if c.spans != 10*c.traces || td.SpanCount() != c.spans {
		t.Fatalf("%d spans in %d traces (pdata %d), want 10 per trace", c.spans, c.traces, td.SpanCount())
	}
	kinds := map[ptrace.SpanKind]int{}
	roots := map[ptrace.SpanKind]int{}
	db, http := 0, 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				kinds[sp.Kind()]++
				if sp.ParentSpanID().IsEmpty() {
					roots[sp.Kind()]++
				}
				if sp.EndTimestamp() < sp.StartTimestamp() {
					t.Fatalf("span %s ends before it starts", sp.Name())
				}
				if _, ok := sp.Attributes().Get("db.system.name"); ok {
					db++
				}
				if _, ok := sp.Attributes().Get("url.full"); ok {
					http++
				}
			}
		}
	}
	if roots[ptrace.SpanKindServer] != c.traces || len(roots) != 1 {
		t.Fatalf("roots %v, want one server root per trace (%d)", roots, c.traces)
	}
	if kinds[ptrace.SpanKindInternal] != c.traces || db < 4*c.traces || http < 3*c.traces {
		t.Fatalf("kinds %v, db %d, http %d for %d traces", kinds, db, http, c.traces)
	}
}

func TestLogsOnlySendsNoTraces(t *testing.T) {
	var tracesReqs, logsReqs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/traces" {
			tracesReqs.Add(1)
		} else {
			logsReqs.Add(1)
		}
	}))
	defer srv.Close()
	s := &sender{opts: options{signals: "logs"}, client: srv.Client(), tracesURL: srv.URL + "/v1/traces", logsURL: srv.URL + "/v1/logs"}
	g := newGenerator(3, 3, 2, 0)
	td, ld, c := g.batch(100, time.Now())
	s.send(t.Context(), td, ld, c)
	if tracesReqs.Load() != 0 || logsReqs.Load() == 0 || s.spans.Load() != 0 || s.logs.Load() != int64(c.logs) {
		t.Fatalf("traces requests %d, logs requests %d, spans %d, logs %d of %d", tracesReqs.Load(), logsReqs.Load(), s.spans.Load(), s.logs.Load(), c.logs)
	}
}

// What a refused request carried is counted failed, and the timeline's
// seconds add up to the totals.
func TestFailedAndTimeline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/logs" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	s := &sender{client: srv.Client(), tracesURL: srv.URL + "/v1/traces", logsURL: srv.URL + "/v1/logs", timeline: map[int64]*genBucket{}}
	g := newGenerator(4, 3, 2, 0.3)
	var want counts
	for range 5 {
		td, ld, c := g.batch(40, time.Now())
		want.add(c.counts)
		s.send(t.Context(), td, ld, c)
	}
	tot := s.totals(time.Second)
	if tot.Spans != int64(want.spans) || tot.Logs != 0 || tot.Exceptions != int64(want.spanExceptions) {
		t.Errorf("delivered %+v, want the spans and span exceptions of %+v", tot, want)
	}
	if tot.FailedSpans != 0 || tot.FailedLogs != int64(want.logs) || tot.FailedExceptions != int64(want.exceptions-want.spanExceptions) {
		t.Errorf("failed spans %d logs %d exceptions %d, want 0, %d, %d", tot.FailedSpans, tot.FailedLogs, tot.FailedExceptions, want.logs, want.exceptions-want.spanExceptions)
	}
	lines := strings.Split(strings.TrimSpace(string(s.timelineText())), "\n")
	if lines[0] != genTimelineHeader {
		t.Fatalf("header %q", lines[0])
	}
	var sum [8]int64
	for _, l := range lines[1:] {
		for i, f := range strings.Fields(l) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				sum[i] += v
			}
		}
	}
	if got := [8]int64{0, tot.Requests, tot.Spans, 0, tot.Exceptions, 5, 0, tot.FailedLogs}; sum != got {
		t.Errorf("timeline sums %v, want %v", sum, got)
	}
}

// --seed makes the traces repeatable: the same first trace id for the same seed.
func TestSeed(t *testing.T) {
	first := func(seed string) string {
		var mu sync.Mutex
		id := ""
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			if r.URL.Path != "/v1/traces" {
				return
			}
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, rs := range req.Traces().ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					if id == "" && ss.Spans().Len() > 0 {
						id = ss.Spans().At(0).TraceID().String()
					}
				}
			}
		}))
		defer srv.Close()
		dir := t.TempDir()
		if err := run([]string{
			"--endpoint", srv.URL, "--duration", "300ms", "--rate", "100", "--workers", "1", "--batch", "10",
			"--seed", seed, "--quiet", "--timeline-file", filepath.Join(dir, "tl"),
		}); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "tl")); err != nil || !strings.HasPrefix(string(b), genTimelineHeader+"\n") {
			t.Errorf("timeline file %q, %v", b, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return id
	}
	a, b, c := first("5"), first("5"), first("6")
	if a == "" || a != b || a == c {
		t.Errorf("first trace ids: seed 5 %q and %q, seed 6 %q", a, b, c)
	}
}

// With exceptionLogOnSpan each exception log names the span that records the
// exception event (the exporter's dedupe key); by default it names another.
func TestExceptionLogOnSpan(t *testing.T) {
	for _, on := range []bool{false, true} {
		g := newGenerator(9, 2, 2, 0.5)
		g.exceptionLogOnSpan = on
		td, ld, c := g.batch(300, time.Now())
		recorded := map[pcommon.SpanID]bool{}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					for _, ev := range sp.Events().All() {
						if ev.Name() == "exception" {
							recorded[sp.SpanID()] = true
						}
					}
				}
			}
		}
		same, logged := 0, 0
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					if _, ok := lr.Attributes().Get("exception.type"); !ok {
						continue
					}
					logged++
					if recorded[lr.SpanID()] {
						same++
					}
				}
			}
		}
		if logged != c.exceptions-c.spanExceptions || logged == 0 {
			t.Fatalf("%d exception logs, counted %d", logged, c.exceptions-c.spanExceptions)
		}
		if want := map[bool]int{false: 0, true: logged}[on]; same != want {
			t.Errorf("exceptionLogOnSpan=%t: %d of %d exception logs on the recording span, want %d", on, same, logged, want)
		}
	}
}

func TestThreeSpanTraces(t *testing.T) {
	g := newGenerator(7, 3, 2, 0.05)
	g.spansPerTrace = 3
	td, _, c := g.batch(300, time.Now())
	if c.spans != 3*c.traces || td.SpanCount() != c.spans {
		t.Fatalf("%d spans in %d traces (pdata %d), want 3 per trace", c.spans, c.traces, td.SpanCount())
	}
}

// TestBasicAuth: with --basic-auth every request carries the credentials;
// without, none.
func TestBasicAuth(t *testing.T) {
	for _, creds := range []string{"team-a:s3cret:with-colon", ""} {
		var bad atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			user, password, ok := r.BasicAuth()
			if (creds == "") == ok || (ok && user+":"+password != creds) {
				bad.Add(1)
			}
		}))
		s := &sender{opts: options{signals: "both", basicAuth: creds}, client: srv.Client(), tracesURL: srv.URL + "/v1/traces", logsURL: srv.URL + "/v1/logs"}
		g := newGenerator(3, 3, 2, 0)
		td, ld, c := g.batch(10, time.Now())
		s.send(t.Context(), td, ld, c)
		srv.Close()
		if bad.Load() != 0 || s.requests.Load() == 0 {
			t.Fatalf("--basic-auth %q: %d of %d requests without the right credentials", creds, bad.Load(), s.requests.Load())
		}
	}
	if err := run([]string{"--basic-auth", "no-colon"}); err == nil || strings.Contains(err.Error(), "no-colon") {
		t.Fatalf("a malformed --basic-auth: %v", err)
	}
}
