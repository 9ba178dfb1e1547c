package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestReadMetrics(t *testing.T) {
	prom := `# HELP otelcol_exporter_sentry_sent_items_total Items Sentry accepted.
# TYPE otelcol_exporter_sentry_sent_items_total counter
otelcol_exporter_sentry_sent_items_total{category="span",exporter="sentry",project="1"} 10
otelcol_exporter_sentry_sent_items_total{category="span",exporter="sentry",project="2"} 5
otelcol_exporter_sentry_dropped_items_total{category="error",project="1",reason="deduplicated"} 3
otelcol_receiver_accepted_spans_total{receiver="otlp",transport="http"} 1.5e+01
otelcol_exporter_queue_size{data_type="traces",exporter="sentry"} 0
`
	dir := t.TempDir()
	// (the collector's final console export reaches sdkcheck as Prometheus text:
	// sentrysink --print-metrics renders it, and cmd/sentrysink tests that)
	for _, tc := range []struct{ name, text string }{{"prometheus", prom}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "m")
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := readMetrics(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name   string
				filter []string
				want   int64
			}{
				{sent, []string{"category=span"}, 15},
				{sent, []string{"category=span", "project=2"}, 5},
				{dropped, []string{"reason=deduplicated"}, 3},
				{"otelcol_receiver_accepted_spans", nil, 15},
				{sent, []string{"category=log_item"}, 0},
			} {
				if got := m.sum(c.name, c.filter...); got != c.want {
					t.Errorf("sum(%s %v) = %d, want %d", c.name, c.filter, got, c.want)
				}
			}
		})
	}
}

// TestChecker feeds the checker a run of two requests and what a sink might have
// stored, and counts the failed checks.
func TestChecker(t *testing.T) {
	var app appSummary
	if err := json.Unmarshal([]byte(`{"requests":2,"spans":6,"logs":3,"exceptions":1,"sdk":{"spans_exported":6,"logs_exported":3},"list":[
		{"name":"GET /a","trace_id":"t1","root":"r1","children":["c1","c2"],"logs":["a handled"]},
		{"name":"GET /b","trace_id":"t2","root":"r2","children":["c3","c4"],"logs":["b failed","b handled"],
		 "exception":{"span_id":"c3","type":"main.queryError","message":"boom"}}]}`), &app); err != nil {
		t.Fatal(err)
	}

	whole := []record{
		{Type: "transaction", TraceID: "t1", SpanID: "r1", Name: "GET /a", Children: []string{"c1", "c2"}},
		{Type: "transaction", TraceID: "t2", SpanID: "r2", Name: "GET /b", Children: []string{"c4", "c3"}},
		{Type: "log", Body: "a handled"},
		{Type: "log", Body: "b failed"},
		{Type: "log", Body: "b handled"},
		{Type: "event", TraceID: "t2", SpanID: "c3", Name: "GET /b"},
	}
	split := []record{
		{Type: "transaction", TraceID: "t1", SpanID: "r1", Name: "GET /a", Children: []string{"c1", "c2"}},
		{Type: "transaction", TraceID: "t2", SpanID: "r2", Name: "GET /b", Children: []string{"c4"}},
		{Type: "transaction", TraceID: "t2", SpanID: "c3", Name: "SELECT"},
		{Type: "log", Body: "a handled"},
		{Type: "log", Body: "b failed"},
		{Type: "log", Body: "b handled"},
		{Type: "event", TraceID: "t2", SpanID: "c3", Name: "SELECT"},
	}
	// request 1's two children both exported after its root: two fragments, one request split
	late := []record{
		{Type: "transaction", TraceID: "t1", SpanID: "r1", Name: "GET /a"},
		{Type: "transaction", TraceID: "t1", SpanID: "c1", Name: "SELECT"},
		{Type: "transaction", TraceID: "t1", SpanID: "c2", Name: "SELECT"},
		{Type: "transaction", TraceID: "t2", SpanID: "r2", Name: "GET /b", Children: []string{"c4", "c3"}},
		{Type: "log", Body: "a handled"},
		{Type: "log", Body: "b failed"},
		{Type: "log", Body: "b handled"},
		{Type: "event", TraceID: "t2", SpanID: "c3", Name: "GET /b"},
	}
	// request 1's root stored twice, as well as whole
	rootTwice := append(append([]record{}, whole...), record{Type: "transaction", TraceID: "t1", SpanID: "r1", Name: "GET /a", Children: []string{"c1", "c2"}})
	twice := append(append([]record{}, whole...), record{Type: "event", TraceID: "t2", SpanID: "c3", Name: "GET /b"}, record{Type: "log", Body: "a handled"})
	spans := []record{
		{Type: "span", SpanID: "r1", Segment: true, SegmentID: "r1"},
		{Type: "span", SpanID: "c1", SegmentID: "r1"},
		{Type: "span", SpanID: "c2", SegmentID: "r1"},
		{Type: "span", SpanID: "r2", Segment: true, SegmentID: "r2"},
		{Type: "span", SpanID: "c3", SegmentID: "r2"},
		{Type: "span", SpanID: "c4", Segment: true, SegmentID: "c4"},
		{Type: "log", Body: "a handled"},
		{Type: "log", Body: "b failed"},
		{Type: "log", Body: "b handled"},
		{Type: "event", TraceID: "t2", SpanID: "c3", Name: "GET /b"},
	}
	for _, tc := range []struct {
		name string
		mode string
		recs []record
		// tolerance: the share of requests allowed split or incomplete
		tolerance float64
		want      int
	}{
		{"whole requests", "transactions", whole, 0, 0},
		// one request split, one incomplete, the event's transaction
		{"a child sent as its own transaction", "transactions", split, 0, 3},
		// two fragments of one request are one split request: within a tolerance of one request in two
		{"one request's children all late, within tolerance", "transactions", late, 0.5, 0},
		{"one request's children all late, no tolerance", "transactions", late, 0, 2},
		// the span stored twice; root transactions 3 for 2 requests
		{"a root transaction stored twice", "transactions", rootTwice, 0.5, 2},
		// one log and one error event stored twice
		{"stored twice", "transactions", twice, 0, 2},
		// request 2 has two segments, c4 claims a segment and names itself
		{"span mode, a child marked segment", "spans", spans, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &checker{c: config{mode: tc.mode, tolerance: tc.tolerance}, app: &app, recs: tc.recs}
			ch.check()
			if ch.failures != tc.want {
				t.Errorf("%d checks failed, want %d", ch.failures, tc.want)
			}
		})
	}
}

// TestCheckerDSC: a job handed to another service after its trace's head names the
// head in its trace header on the head's replica (project), itself on another.
func TestCheckerDSC(t *testing.T) {
	var app appSummary
	if err := json.Unmarshal([]byte(`{"requests":2,"spans":4,"logs":0,"sdk":{"spans_exported":4},"list":[
		{"name":"GET /a","trace_id":"t1","root":"r1","children":["c1"]},
		{"name":"process a.events","trace_id":"t1","root":"j1","children":["d1"],"head":"GET /a"}]}`), &app); err != nil {
		t.Fatal(err)
	}
	head := record{Project: "1", Type: "transaction", TraceID: "t1", SpanID: "r1", Name: "GET /a", DSC: "GET /a", Children: []string{"c1"}}
	job := func(project, dsc string) record {
		return record{Project: project, Type: "transaction", TraceID: "t1", SpanID: "j1", Name: "process a.events", DSC: dsc, Children: []string{"d1"}}
	}
	for _, tc := range []struct {
		name string
		job  record
		want int
	}{
		{"same replica, head's name", job("1", "GET /a"), 0},
		{"same replica, own name", job("1", "process a.events"), 1},
		{"other replica, own name", job("2", "process a.events"), 0},
		{"other replica, head's name: the trade-off is gone, the docs must change", job("2", "GET /a"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &checker{c: config{mode: "transactions"}, app: &app, recs: []record{head, tc.job}}
			ch.check()
			if ch.failures != tc.want {
				t.Errorf("%d checks failed, want %d", ch.failures, tc.want)
			}
		})
	}
}
