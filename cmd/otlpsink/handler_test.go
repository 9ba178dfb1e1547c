package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func post(t *testing.T, h http.Handler, path, enc string, body []byte) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func TestCountsSpansLogsAndWireBytes(t *testing.T) {
	st := newStats(time.Now())
	h := newHandler(st)

	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for range 3 {
		ss.Spans().AppendEmpty().SetName("s")
	}
	tb, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(tb)
	_ = zw.Close()
	if c := post(t, h, "/v1/traces", "gzip", gz.Bytes()); c != http.StatusOK {
		t.Fatalf("gzip traces: %d", c)
	}

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for range 2 {
		lr.AppendEmpty().Body().SetStr("hello")
	}
	lb, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	enc, _ := zstd.NewWriter(nil)
	zb := enc.EncodeAll(lb, nil)
	if c := post(t, h, "/v1/logs", "zstd", zb); c != http.StatusOK {
		t.Fatalf("zstd logs: %d", c)
	}
	if c := post(t, h, "/v1/logs", "br", lb); c != http.StatusBadRequest {
		t.Fatalf("unknown encoding: %d", c)
	}

	md := pmetric.NewMetrics()
	g := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("queue.depth")
	points := g.SetEmptyGauge().DataPoints()
	for range 4 {
		points.AppendEmpty().SetDoubleValue(7)
	}
	mb, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if c := post(t, h, "/v1/metrics", "", mb); c != http.StatusOK {
		t.Fatalf("metrics: %d", c)
	}
	if c := post(t, h, "/v1/metrics", "", []byte("not protobuf")); c != http.StatusBadRequest {
		t.Fatalf("bad metrics: %d", c)
	}

	got := st.snapshot(time.Now())
	want := Totals{
		Requests: 5, Spans: 3, Logs: 2, MetricPoints: 4, WireBytes: uint64(gz.Len() + len(zb) + len(mb)),
		DecodedBytes: uint64(len(tb) + len(lb) + len(mb)), Invalid: 2,
	}
	got.UptimeSeconds = 0
	if got != want {
		t.Fatalf("totals %+v, want %+v", got, want)
	}
}
