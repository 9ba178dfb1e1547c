package translate

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var fixedNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// counterIDs is a deterministic id source: 1, 2, 3, … in both halves.
func counterIDs() func() [16]byte {
	var n atomic.Uint64
	return func() (id [16]byte) {
		c := n.Add(1)
		binary.BigEndian.PutUint64(id[:8], 0xa000000000000000|c)
		binary.BigEndian.PutUint64(id[8:], c)
		return id
	}
}

func testOptions() Options {
	return Options{
		SDKName: "sentry.otelcol", SDKVersion: "1.0.0",
		ErrorsFromSpanExceptions: true, ErrorsFromLogs: true,
		NewID: counterIDs(), Now: func() time.Time { return fixedNow },
	}
}

// must checks a payload and returns it as a JSON value for the golden file.
func must(t *testing.T, check func([]byte) (map[string]any, error), p []byte) json.RawMessage {
	t.Helper()
	_, err := check(p)
	require.NoError(t, err, "%s", p)
	return json.RawMessage(p)
}

type goldenTx struct {
	EventID, TraceID, Name, Environment, Release string
	Spans                                        int
	Payload                                      json.RawMessage
}

type goldenErr struct {
	EventID, TraceID, Environment, Release string
	Payload                                json.RawMessage
}

type goldenGroup struct {
	TraceID, Environment, Release, Segment string
	Items                                  []json.RawMessage
}

func tracesDoc(t *testing.T, r TracesResult) map[string]any {
	var txs []goldenTx
	for i := range r.Transactions {
		x := &r.Transactions[i]
		txs = append(txs, goldenTx{x.EventID, x.TraceID, x.Name, x.Environment, x.Release, x.Spans, must(t, checkTransaction, x.Payload)})
	}
	var gs []goldenGroup
	for _, g := range r.SpanGroups {
		gg := goldenGroup{g.TraceID, g.Environment, g.Release, g.Segment, nil}
		for _, it := range g.Items {
			gg.Items = append(gg.Items, must(t, checkSpanV2, it))
		}
		gs = append(gs, gg)
	}
	return map[string]any{
		"transactions": txs, "span_groups": gs, "errors": errorsDoc(t, r.Errors),
		"counts": map[string]int{
			"skipped_spans": r.SkippedSpans, "skipped_transactions": r.SkippedTransactions,
			"skipped_errors": r.SkippedErrors, "invalid_spans": r.InvalidSpans, "invalid_errors": r.InvalidErrors,
		},
	}
}

func errorsDoc(t *testing.T, evs []ErrorEvent) []goldenErr {
	var es []goldenErr
	for i := range evs {
		e := &evs[i]
		es = append(es, goldenErr{e.EventID, e.TraceID, e.Environment, e.Release, must(t, checkError, e.Payload)})
	}
	return es
}

func logsDoc(t *testing.T, r LogsResult) map[string]any {
	var ls []json.RawMessage
	for _, l := range r.Logs {
		ls = append(ls, must(t, checkLog, l))
	}
	return map[string]any{
		"logs": ls, "errors": errorsDoc(t, r.Errors),
		"counts": map[string]int{
			"skipped_logs": r.SkippedLogs, "skipped_log_bytes": r.SkippedLogBytes, "skipped_errors": r.SkippedErrors,
			"invalid_logs": r.InvalidLogs, "invalid_errors": r.InvalidErrors,
		},
	}
}

// TestGolden translates every testdata/<case>.json (traces_* or logs_*) and
// compares the result with testdata/<case>.want.json by content.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	for _, in := range inputs {
		if strings.HasSuffix(in, ".want.json") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			require.NoError(t, err)
			tr := New(testOptions())
			var doc map[string]any
			if strings.HasPrefix(name, "logs_") {
				ld, lerr := (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
				require.NoError(t, lerr)
				doc = logsDoc(t, tr.Logs(ld, LogsWant{Logs: true, Errors: true}))
			} else {
				td, terr := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
				require.NoError(t, terr)
				doc = tracesDoc(t, tr.Traces(td, TracesWant{Transactions: true, SpanV2: true, Errors: true}))
			}
			got, err := json.MarshalIndent(doc, "", "  ")
			require.NoError(t, err)
			wantFile := filepath.Join("testdata", name+".want.json")
			if *update {
				require.NoError(t, os.WriteFile(wantFile, append(got, '\n'), 0o600))
				return
			}
			want, err := os.ReadFile(wantFile)
			require.NoError(t, err, "run go test ./internal/translate -update")
			var g, w any
			require.NoError(t, json.Unmarshal(got, &g))
			require.NoError(t, json.Unmarshal(want, &w))
			assert.Equal(t, w, g)
		})
	}
}
