package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRecordFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	rec, err := newRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := newTestHandler(handlerConfig{Record: rec.record})
	chunk := chunkEnvelope("node", strings.Replace(goodChunk, `{"function":"fib"`, `{"module":"app.run","function":"fib"`, 1))
	envHeader, rest, _ := strings.Cut(string(transactionEnv), "\n")
	_, rest, _ = strings.Cut(rest, "\n") // the item header: build writes the new payload's length
	payload, _, _ := strings.Cut(rest, "\n")
	profiled := build(envHeader, `{"type":"transaction"}`, strings.Replace(payload, `"status":"ok"}}`,
		`"status":"ok","data":{"thread.id":91240}},"profile":{"profiler_id":"7a9aa681ef0544d9be7ebc6fc90953f2"}}`, 1))
	for _, env := range [][]byte{transactionEnv, logEnv, errorEnv, spanEnv, chunk, profiled} {
		if r := post(t, h, "/api/7/envelope/", env, nil); r.status != http.StatusOK {
			t.Fatalf("status %d, body %v", r.status, r.body)
		}
	}
	// a rejected envelope is not recorded
	hl, _, _ := newTestHandler(handlerConfig{Record: rec.record, RateLimit: "60::organization"})
	if r := post(t, hl, "/api/7/envelope/", errorEnv, nil); r.status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", r.status)
	}
	if err = rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	want := []Record{
		{
			Project: "7", Type: "transaction", TraceID: traceID, SpanID: "438f40bd3b4a41ee", Name: "GET /users/{id}",
			Children: []string{"f1196292f76e45c0", "f1196292f76e45c1"},
		},
		{Project: "7", Type: "log", TraceID: traceID, Body: "hello"},
		{Project: "7", Type: "log", TraceID: traceID, SpanID: "b0e6f15b45c36b12", Body: "boom"},
		{Project: "7", Type: "event", Exception: "*errors.errorString: connection refused"},
		{Project: "7", Type: "span", TraceID: traceID, SpanID: "438f40bd3b4a41ee", Name: "GET /", Segment: true},
		{Project: "7", Type: "profile_chunk", Name: "app.run", ProfilerID: "7a9aa681ef0544d9be7ebc6fc90953f2"},
		{
			Project: "7", Type: "transaction", TraceID: traceID, SpanID: "438f40bd3b4a41ee", Name: "GET /users/{id}",
			Children: []string{"f1196292f76e45c0", "f1196292f76e45c1"}, ProfilerID: "7a9aa681ef0544d9be7ebc6fc90953f2", Thread: "91240",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records:\n got %+v\nwant %+v", got, want)
	}
}
