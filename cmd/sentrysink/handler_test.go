package main

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/otel-sentry/sentryexporter/envelope"
)

const (
	eventID = "fc6d8c0c43fc4630ad850ee518f1b9d0"
	traceID = "6cf173d587eb48568a9b2e12dcfbea52"
	auth    = "Sentry sentry_version=7, sentry_client=test/1.0, sentry_key=public"
)

// build writes an envelope from a header line and (item header, payload) pairs, adding
// each item's length.
func build(header string, items ...string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteByte('\n')
	for i := 0; i+1 < len(items); i += 2 {
		hdr := strings.TrimSuffix(items[i], "}")
		fmt.Fprintf(&b, "%s,\"length\":%d}\n%s\n", hdr, len(items[i+1]), items[i+1])
	}
	return b.Bytes()
}

var (
	transactionEnv = build(`{"event_id":"`+eventID+`","sent_at":"2026-01-01T00:00:00.5Z","sdk":{"name":"sentry.go.otelcol","version":"0.1.0"},"trace":{"trace_id":"`+traceID+`","public_key":"public","sample_rate":"1"}}`,
		`{"type":"transaction","content_type":"application/json"}`,
		`{"type":"transaction","event_id":"`+eventID+`","transaction":"GET /users/{id}","start_timestamp":1742921669.158,"timestamp":1742921669.180,`+
			`"contexts":{"trace":{"trace_id":"`+traceID+`","span_id":"438f40bd3b4a41ee","op":"http.server","status":"ok"}},`+
			`"spans":[{"trace_id":"`+traceID+`","span_id":"f1196292f76e45c0","parent_span_id":"438f40bd3b4a41ee","op":"db","start_timestamp":1742921669.160,"timestamp":1742921669.170,"tags":{"a":"b"}},`+
			`{"trace_id":"`+traceID+`","span_id":"f1196292f76e45c1","parent_span_id":"438f40bd3b4a41ee","op":"http.client","start_timestamp":1742921669.171,"timestamp":1742921669.175}]}`,
		`{"type":"client_report"}`,
		`{"timestamp":"2026-01-01T00:00:00Z","discarded_events":[{"reason":"ratelimit_backoff","category":"span","quantity":40},{"reason":"queue_overflow","category":"log_item","quantity":3}]}`,
	)
	logEnv = build(`{"sent_at":"2026-01-01T00:00:00Z"}`,
		`{"type":"log","item_count":2,"content_type":"application/vnd.sentry.items.log+json"}`,
		`{"items":[{"timestamp":1746456149.019,"trace_id":"`+traceID+`","level":"info","severity_number":9,"body":"hello","attributes":{"n":{"type":"integer","value":1}}},`+
			`{"timestamp":1746456149.020,"trace_id":"`+traceID+`","span_id":"b0e6f15b45c36b12","level":"error","body":"boom"}]}`,
	)
	// metricEnv is a trace_metric container as sentry-go v0.50.0 writes one.
	metricEnv = buildMetrics(metricPayload)
	errorEnv  = build(`{"event_id":"`+eventID+`"}`,
		`{"type":"event","content_type":"application/json"}`,
		`{"event_id":"`+eventID+`","timestamp":1746456149.019,"level":"error","exception":{"values":[{"type":"*errors.errorString","value":"connection refused","mechanism":{"type":"generic","handled":true}}]}}`,
	)
	spanEnv = build(`{"trace":{"trace_id":"`+traceID+`","public_key":"public"}}`,
		`{"type":"span","item_count":1,"content_type":"application/vnd.sentry.items.span.v2+json"}`,
		`{"items":[{"trace_id":"`+traceID+`","span_id":"438f40bd3b4a41ee","name":"GET /","status":"ok","is_segment":true,"start_timestamp":1742921669.158,"end_timestamp":1742921669.180}]}`,
	)
)

const metricPayload = `{"items":[{"timestamp":"2026-01-01T00:00:00.123456789Z","trace_id":"` + traceID + `","type":"counter","name":"orders","value":3,` +
	`"attributes":{"sentry.sdk.name":{"type":"string","value":"sentry.go"}}},` +
	`{"timestamp":"2026-01-01T00:00:00.2Z","trace_id":"` + traceID + `","span_id":"b0e6f15b45c36b12","type":"gauge","name":"queue.depth","value":12.5},` +
	`{"timestamp":"2026-01-01T00:00:00.3Z","trace_id":"` + traceID + `","type":"distribution","name":"latency","value":0.25,"unit":"second"}]}`

// buildMetrics is an envelope of one trace_metric container of three metrics.
func buildMetrics(payload string) []byte {
	return build(`{"event_id":"`+eventID+`","sent_at":"2026-01-01T00:00:00Z","sdk":{"name":"sentry.go","version":"0.50.0"}}`,
		`{"type":"trace_metric","item_count":3,"content_type":"application/vnd.sentry.items.trace-metric+json"}`, payload)
}

type result struct {
	status int
	header http.Header
	body   map[string]any
}

func post(t *testing.T, h http.Handler, path string, body []byte, hdr map[string]string) result {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", envelope.ContentType)
	req.Header.Set("X-Sentry-Auth", auth)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	serveTest(h, rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("answer body %q is not a JSON object: %v", rec.Body.String(), err)
	}
	return result{rec.Code, rec.Header(), m}
}

func newTestHandler(cfg handlerConfig) (*handler, *stats, *[]string) {
	var lines []string
	cfg.Limits = envelope.RelayDefaults()
	cfg.Log = func(b []byte) { lines = append(lines, string(b)) }
	st := newStats(time.Now())
	return newHandler(cfg, st), st, &lines
}

func TestAcceptsValidEnvelopes(t *testing.T) {
	h, st, lines := newTestHandler(handlerConfig{})
	for _, env := range [][]byte{transactionEnv, logEnv, errorEnv, spanEnv, metricEnv} {
		r := post(t, h, "/api/1/envelope/", env, nil)
		if r.status != http.StatusOK {
			t.Fatalf("status %d, body %v, envelope:\n%s", r.status, r.body, env)
		}
	}
	tot := st.snapshot(time.Now())
	want := map[string]uint64{"transaction": 1, "client_report": 1, "log": 1, "event": 1, "span": 1, "trace_metric": 1}
	for k, v := range want {
		if tot.Items[k] != v {
			t.Errorf("items[%s] = %d, want %d (all: %v)", k, tot.Items[k], v, tot.Items)
		}
	}
	if tot.Envelopes != 5 || tot.Invalid != 0 || tot.Requests != 5 || tot.RequestsStatus["200"] != 5 {
		t.Errorf("envelopes=%d invalid=%d requests=%v", tot.Envelopes, tot.Invalid, tot.RequestsStatus)
	}
	if tot.TransactionSpans != 2 || tot.Spans != 4 || tot.Logs != 2 || tot.Errors != 1 || tot.TraceMetrics != 3 || tot.ItemCount["trace_metric"] != 3 {
		t.Errorf("transaction_spans=%d spans=%d logs=%d errors=%d trace_metrics=%d", tot.TransactionSpans, tot.Spans, tot.Logs, tot.Errors, tot.TraceMetrics)
	}
	if tot.ClientReports["ratelimit_backoff/span"] != 40 || tot.ClientReports["queue_overflow/log_item"] != 3 {
		t.Errorf("client reports %v", tot.ClientReports)
	}
	p := tot.ByProject["1"]
	if p.Envelopes != 5 || p.Transactions != 1 || p.Spans != 4 || p.Logs != 2 || p.TraceMetrics != 3 || p.Errors != 1 || p.ClientReports["ratelimit_backoff/span"] != 40 || len(tot.ByProject) != 1 {
		t.Errorf("by project %+v", tot.ByProject)
	}
	wantLines := []string{
		`envelope project=1 event_id=` + eventID + ` items=transaction(spans=2 name="GET /users/{id}") client_report(discarded: ratelimit_backoff/span=40 queue_overflow/log_item=3)`,
		`envelope project=1 items=log(item_count=2)`,
		`envelope project=1 event_id=` + eventID + ` items=event(exception="*errors.errorString: connection refused")`,
		`envelope project=1 items=span(item_count=1)`,
		`envelope project=1 event_id=` + eventID + ` items=trace_metric(item_count=3)`,
	}
	if strings.Join(*lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(*lines, "\n"), strings.Join(wantLines, "\n"))
	}
}

func TestAnswerID(t *testing.T) {
	h, _, _ := newTestHandler(handlerConfig{})
	if r := post(t, h, "/api/1/envelope/", errorEnv, nil); r.body["id"] != eventID {
		t.Errorf("body %v, want id %s", r.body, eventID)
	}
	if r := post(t, h, "/api/1/envelope/", logEnv, nil); len(r.body) != 0 {
		t.Errorf("body %v, want {}", r.body)
	}
}

func TestCompression(t *testing.T) {
	h, st, _ := newTestHandler(handlerConfig{})
	var gz, zl bytes.Buffer
	gw := gzip.NewWriter(&gz)
	if _, err := gw.Write(transactionEnv); err != nil || gw.Close() != nil {
		t.Fatal("gzip", err)
	}
	zw := zlib.NewWriter(&zl)
	if _, err := zw.Write(logEnv); err != nil || zw.Close() != nil {
		t.Fatal("zlib", err)
	}
	if r := post(t, h, "/api/1/envelope/", gz.Bytes(), map[string]string{"Content-Encoding": "gzip"}); r.status != 200 {
		t.Fatalf("gzip: %d %v", r.status, r.body)
	}
	if r := post(t, h, "/api/1/envelope/", zl.Bytes(), map[string]string{"Content-Encoding": "deflate"}); r.status != 200 {
		t.Fatalf("deflate: %d %v", r.status, r.body)
	}
	if r := post(t, h, "/api/1/envelope/", []byte("not gzip"), map[string]string{"Content-Encoding": "gzip"}); r.status != 400 {
		t.Fatalf("corrupt gzip: %d %v", r.status, r.body)
	}
	if r := post(t, h, "/api/1/envelope/", logEnv, map[string]string{"Content-Encoding": "snappy"}); r.status != 415 {
		t.Fatalf("unknown encoding: %d %v", r.status, r.body)
	}
	tot := st.snapshot(time.Now())
	if tot.ContentEncoding["gzip"] != 1 || tot.ContentEncoding["deflate"] != 1 || tot.Envelopes != 2 || tot.Invalid != 2 {
		t.Errorf("totals %+v", tot)
	}
}

func TestZstdAndOldRelay(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zb := enc.EncodeAll(transactionEnv, nil)
	h, st, _ := newTestHandler(handlerConfig{})
	if r := post(t, h, "/api/1/envelope/", zb, map[string]string{"Content-Encoding": "zstd"}); r.status != 200 {
		t.Fatalf("zstd: %d %v", r.status, r.body)
	}
	if tot := st.snapshot(time.Now()); tot.ContentEncoding["zstd"] != 1 || tot.WireBytes != uint64(len(zb)) || tot.EnvelopeBytes != uint64(len(transactionEnv)) {
		t.Errorf("totals %+v", tot)
	}
	old, st, _ := newTestHandler(handlerConfig{OldRelay: true})
	if r := post(t, old, "/api/1/envelope/", zb, map[string]string{"Content-Encoding": "zstd"}); r.status != 400 {
		t.Fatalf("zstd to an old Relay: %d %v, want 400", r.status, r.body)
	}
	if r := post(t, old, "/api/1/envelope/", logEnv, map[string]string{"Content-Encoding": "snappy"}); r.status != 200 {
		t.Fatalf("an unknown encoding on a plain body, old Relay: %d %v, want 200 (taken for identity)", r.status, r.body)
	}
	if tot := st.snapshot(time.Now()); tot.Invalid != 1 || tot.Envelopes != 1 {
		t.Errorf("old Relay totals %+v", tot)
	}
}

func TestRejects(t *testing.T) {
	badLength := bytes.Replace(logEnv, []byte(`"length":`), []byte(`"length":1`), 1)
	badCount := bytes.Replace(logEnv, []byte(`"item_count":2`), []byte(`"item_count":3`), 1)
	metricType := buildMetrics(strings.Replace(metricPayload, `"type":"gauge"`, `"type":"histogram"`, 1))
	metricUnit := buildMetrics(strings.Replace(metricPayload, `"unit":"second"`, `"unit":"{request}"`, 1))
	noEventID := bytes.Replace(errorEnv, []byte(`{"event_id":"`+eventID+`"}`), []byte(`{}`), 1)
	cases := []struct {
		name   string
		path   string
		body   []byte
		hdr    map[string]string
		status int
		want   string // in the cause, when set
	}{
		{"bad length", "/api/1/envelope/", badLength, nil, 400, ""},
		{"item_count mismatch", "/api/1/envelope/", badCount, nil, 400, ""},
		{"event without event_id", "/api/1/envelope/", noEventID, nil, 400, ""},
		{"trace metric of type histogram", "/api/1/envelope/", metricType, nil, 400, `type "histogram"`},
		{"trace metric with a UCUM annotation for unit", "/api/1/envelope/", metricUnit, nil, 400, `unit "{request}"`},
		{"empty body", "/api/1/envelope/", nil, nil, 400, ""},
		{"no auth", "/api/1/envelope/", logEnv, map[string]string{"X-Sentry-Auth": ""}, 401, ""},
		{"no key", "/api/1/envelope/", logEnv, map[string]string{"X-Sentry-Auth": "Sentry sentry_version=7"}, 401, ""},
		{"old version", "/api/1/envelope/", logEnv, map[string]string{"X-Sentry-Auth": "Sentry sentry_version=6, sentry_key=k"}, 400, ""},
		{"wrong path", "/api/1/store/", logEnv, nil, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, st, lines := newTestHandler(handlerConfig{})
			r := post(t, h, c.path, c.body, c.hdr)
			if r.status != c.status {
				t.Fatalf("status %d, want %d (body %v)", r.status, c.status, r.body)
			}
			if _, ok := r.body["detail"].(string); !ok {
				t.Errorf("body %v has no detail", r.body)
			}
			tot := st.snapshot(time.Now())
			if tot.Envelopes != 0 || len(*lines) != 0 {
				t.Errorf("counted as accepted: %+v", tot)
			}
			if c.status == 400 && c.hdr == nil && tot.Invalid != 1 {
				t.Errorf("invalid = %d, want 1", tot.Invalid)
			}
			if c.want != "" && !strings.Contains(tot.LastInvalid, c.want) {
				t.Errorf("last invalid %q, want it to say %q", tot.LastInvalid, c.want)
			}
		})
	}
}

func TestQueryAuth(t *testing.T) {
	h, _, _ := newTestHandler(handlerConfig{})
	r := post(t, h, "/api/1/envelope/?sentry_version=7&sentry_key=public", logEnv, map[string]string{"X-Sentry-Auth": ""})
	if r.status != 200 {
		t.Fatalf("status %d %v", r.status, r.body)
	}
}

func TestRateLimit(t *testing.T) {
	h, st, lines := newTestHandler(handlerConfig{RateLimit: "60::organization, 2.5:transaction:key"})
	r := post(t, h, "/api/1/envelope/", transactionEnv, nil)
	if r.status != 429 || r.header.Get("X-Sentry-Rate-Limits") != "60::organization, 2.5:transaction:key" || r.header.Get("Retry-After") != "60" {
		t.Fatalf("status %d headers %v", r.status, r.header)
	}
	tot := st.snapshot(time.Now())
	if tot.RateLimited != 1 || tot.Envelopes != 0 || tot.RateLimitedItems["transaction"] != 1 || len(*lines) != 0 {
		t.Errorf("totals %+v", tot)
	}
	// Invalid envelopes are still reported as invalid.
	if r = post(t, h, "/api/1/envelope/", []byte("{}\n{"), nil); r.status != 400 {
		t.Errorf("invalid under a rate limit: %d", r.status)
	}

	h, st, _ = newTestHandler(handlerConfig{RateLimit: "30:span:key", RateLimitStatus: 200})
	r = post(t, h, "/api/1/envelope/", logEnv, nil)
	if r.status != 200 || r.header.Get("X-Sentry-Rate-Limits") != "30:span:key" {
		t.Fatalf("status %d headers %v", r.status, r.header)
	}
	if tot := st.snapshot(time.Now()); tot.Envelopes != 1 || tot.Logs != 2 {
		t.Errorf("totals %+v", tot)
	}
}

// In 429 mode only the envelopes whose items the limit covers are rejected;
// the rest are accepted without the header, as Relay answers.
func TestRateLimitByCategory(t *testing.T) {
	reportOnly := build(`{}`, `{"type":"client_report"}`,
		`{"timestamp":"2026-01-01T00:00:00Z","discarded_events":[{"reason":"ratelimit_backoff","category":"error","quantity":2}]}`)
	tests := []struct {
		limit   string
		env     []byte
		limited bool
	}{
		{"60:error:organization", errorEnv, true},
		{"60:error:organization", logEnv, false},
		{"60:error:organization", transactionEnv, false},
		{"60:error:organization", reportOnly, false},
		{"60:transaction:key", transactionEnv, true}, // the report riding along goes with it
		{"60:log_byte:organization", logEnv, true},
		{"60:span:organization", spanEnv, true},
		{"60::organization", reportOnly, true},
		{"60:internal:organization", reportOnly, false}, // internal is never limited on its own
		{"60:error:organization", spanEnv, false},
	}
	for _, tt := range tests {
		h, st, _ := newTestHandler(handlerConfig{RateLimit: tt.limit})
		r := post(t, h, "/api/7/envelope/", tt.env, nil)
		tot := st.snapshot(time.Now())
		if tt.limited {
			if r.status != 429 || r.header.Get("X-Sentry-Rate-Limits") != tt.limit || r.header.Get("Retry-After") != "60" {
				t.Errorf("%s on %.40q: status %d headers %v, want 429", tt.limit, tt.env, r.status, r.header)
			}
			if tot.Envelopes != 0 || tot.RateLimited != 1 {
				t.Errorf("%s on %.40q: totals %+v", tt.limit, tt.env, tot)
			}
			continue
		}
		if r.status != 200 || r.header.Get("X-Sentry-Rate-Limits") != "" || tot.ByProject["7"].Envelopes != 1 {
			t.Errorf("%s on %.40q: status %d headers %v, want 200 without the header", tt.limit, tt.env, r.status, r.header)
		}
	}
}

// The client report riding on a rejected envelope is ingested all the same
// (Relay's partial ingestion), unless the limit covers every category.
func TestRateLimitKeepsRidingReport(t *testing.T) {
	for limit, kept := range map[string]uint64{"60:transaction:key": 40, "60::organization": 0} {
		h, st, _ := newTestHandler(handlerConfig{RateLimit: limit})
		if r := post(t, h, "/api/7/envelope/", transactionEnv, nil); r.status != 429 {
			t.Fatalf("%s: status %d", limit, r.status)
		}
		tot := st.snapshot(time.Now())
		if tot.ClientReports["ratelimit_backoff/span"] != kept || tot.ByProject["7"].ClientReports["ratelimit_backoff/span"] != kept || tot.ByProject["7"].Spans != 0 {
			t.Errorf("%s: client reports %v, by project %+v; want %d kept", limit, tot.ClientReports, tot.ByProject, kept)
		}
	}
}

// TestDelay runs in a synctest bubble: its clock moves only when every
// goroutine waits, so the delay is exact.
func TestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _, _ := newTestHandler(handlerConfig{Delay: 30 * time.Millisecond})
		start := time.Now()
		if r := post(t, h, "/api/1/envelope/", logEnv, nil); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("answered after %s, want 30ms", d)
		}
	})
}

// --hang holds every request, counted as held, until the sink stops; then the
// request ends without an answer and nothing is counted as received.
func TestHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		h, st, _ := newTestHandler(handlerConfig{Hang: true, Stop: stop})
		done := make(chan struct{})
		go func() {
			defer close(done)
			req := httptest.NewRequest(http.MethodPost, "/api/1/envelope/", bytes.NewReader(logEnv))
			req.Header.Set("X-Sentry-Auth", auth)
			if !serveTest(h, httptest.NewRecorder(), req) {
				t.Error("the held request was answered; want its connection ended without an answer")
			}
		}()
		synctest.Wait() // the request is held, or answered
		select {
		case <-done:
			t.Fatal("answered; want held")
		default:
		}
		if held := st.snapshot(time.Now()).Held; held != 1 {
			t.Fatalf("%d held, want 1", held)
		}
		close(stop)
		<-done
		tot := st.snapshot(time.Now())
		if tot.Held != 0 || tot.MaxHeld != 1 || tot.Aborted != 1 || tot.Logs != 0 {
			t.Errorf("held %d, max %d, aborted %d, logs %d; want 0, 1, 1, 0", tot.Held, tot.MaxHeld, tot.Aborted, tot.Logs)
		}
	})
}

// --hang-projects holds only the requests to the listed projects; the others
// are answered and counted as usual.
func TestHangProjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		h, st, _ := newTestHandler(handlerConfig{HangProjects: map[string]bool{"2": true}, Stop: stop})
		post := func(project string) int {
			req := httptest.NewRequest(http.MethodPost, "/api/"+project+"/envelope/", bytes.NewReader(logEnv))
			req.Header.Set("X-Sentry-Auth", auth)
			rec := httptest.NewRecorder()
			serveTest(h, rec, req)
			return rec.Code
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			post("2")
		}()
		synctest.Wait() // the request is held, or answered
		select {
		case <-done:
			t.Fatal("project 2 answered; want held")
		default:
		}
		if held := st.snapshot(time.Now()).Held; held != 1 {
			t.Fatalf("%d held, want 1", held)
		}
		if code := post("1"); code != http.StatusOK {
			t.Errorf("project 1 answered %d, want 200", code)
		}
		close(stop)
		<-done
		tot := st.snapshot(time.Now())
		if tot.Held != 0 || tot.MaxHeld != 1 || tot.Aborted != 1 || tot.Logs == 0 {
			t.Errorf("held %d, max %d, aborted %d, logs %d; want 0, 1, 1, > 0", tot.Held, tot.MaxHeld, tot.Aborted, tot.Logs)
		}
	})
}

func TestLongestRetryAfter(t *testing.T) {
	for in, want := range map[string]int{"60::organization": 60, "1.2:error:key, 30:span:key": 30, "x::y": 1, "0::org": 1} {
		if got := longestRetryAfter(in); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}

func TestWriteSummary(t *testing.T) {
	st := newStats(time.Now())
	st.request(200)
	path := t.TempDir() + "/s.json"
	if err := writeSummary(path, st.snapshot(time.Now())); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkHandler(b *testing.B) {
	h, _, _ := newTestHandler(handlerConfig{})
	h.cfg.Log = nil
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/api/1/envelope/", bytes.NewReader(transactionEnv))
		req.Header.Set("X-Sentry-Auth", auth)
		rec := httptest.NewRecorder()
		serveTest(h, rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// serveTest serves one request as net/http's server would: a handler that
// panics with http.ErrAbortHandler ends the connection without an answer
// (aborted).
func serveTest(h http.Handler, w http.ResponseWriter, r *http.Request) (aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler { //nolint:errorlint // net/http compares it so
				panic(v)
			}
			aborted = true
		}
	}()
	h.ServeHTTP(w, r)
	return false
}
