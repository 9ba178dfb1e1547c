package translate

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestSplitOversizeTransaction: children that do not fit start continuation
// transactions, each under the budget, and nothing is lost.
func TestSplitOversizeTransaction(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	tid := [16]byte{1, 2, 3}
	rootID := [8]byte{9}
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(tid)
	root.SetSpanID(rootID)
	root.SetName("big")
	for i := range 50 {
		c := ss.Spans().AppendEmpty()
		c.SetTraceID(tid)
		c.SetSpanID([8]byte{1, byte(i)})
		c.SetParentSpanID(rootID)
		c.SetName(fmt.Sprint("child ", i))
		c.Attributes().PutStr("payload", strings.Repeat("x", 1000))
	}
	o := testOptions()
	o.MaxEventBytes = 8000
	r := New(o).Traces(td, TracesWant{Transactions: true})
	require.Zero(t, r.InvalidSpans)
	require.Greater(t, len(r.Transactions), 1)
	seen := map[string]int{}
	total := 0
	for i, x := range r.Transactions {
		m, err := checkTransaction(x.Payload)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(x.Payload), o.MaxEventBytes)
		assert.Equal(t, "big", x.Name)
		tc := m["contexts"].(map[string]any)["trace"].(map[string]any)
		seen[tc["span_id"].(string)]++
		if i > 0 { // a continuation: its head is a child keeping its real parent
			assert.Equal(t, "0900000000000000", tc["parent_span_id"])
		}
		spans := m["spans"].([]any)
		assert.Equal(t, x.Spans, len(spans)+1)
		for _, s := range spans {
			seen[s.(map[string]any)["span_id"].(string)]++
		}
		total += x.Spans
	}
	assert.Equal(t, 51, total)
	assert.Len(t, seen, 51)
	for id, n := range seen {
		assert.Equal(t, 1, n, id)
	}
}

// randomTraces builds n spans over a few traces with random parents: none,
// another span of any trace, itself, an unknown id; some ids repeat or are zero.
func randomTraces(rng *rand.Rand, n int) (ptrace.Traces, int) {
	td := ptrace.NewTraces()
	traces := [][16]byte{{1}, {2}, {}, {4}}
	ids := make([][8]byte, n)
	for i := range ids {
		binary.BigEndian.PutUint64(ids[i][:], uint64(i+1))
		switch rng.IntN(20) {
		case 0:
			ids[i] = [8]byte{}
		case 1:
			if i > 0 {
				ids[i] = ids[rng.IntN(i)]
			}
		}
	}
	exceptions := 0
	for r := range 1 + rng.IntN(3) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprint("svc", r%2))
		ss := rs.ScopeSpans().AppendEmpty()
		_ = ss
	}
	for i := range n {
		rs := td.ResourceSpans().At(rng.IntN(td.ResourceSpans().Len()))
		sp := rs.ScopeSpans().At(0).Spans().AppendEmpty()
		sp.SetTraceID(traces[rng.IntN(len(traces))])
		sp.SetSpanID(ids[i])
		switch rng.IntN(6) {
		case 0: // root
		case 1:
			sp.SetParentSpanID(ids[i])
		case 2:
			sp.SetParentSpanID([8]byte{0xff, byte(i)})
		default:
			sp.SetParentSpanID(ids[rng.IntN(n)])
		}
		if rng.IntN(10) == 0 {
			sp.SetFlags(remoteParent)
		}
		sp.SetName(fmt.Sprint("span ", i))
		sp.SetStartTimestamp(pcommon.Timestamp(1e18 + rng.IntN(1000)*1000))
		sp.SetEndTimestamp(pcommon.Timestamp(1e18 + rng.IntN(1000)*1000))
		for k := range rng.IntN(12) {
			sp.Attributes().PutStr(fmt.Sprint("k", k), strings.Repeat("v", rng.IntN(400)))
		}
		if rng.IntN(8) == 0 {
			exceptions++
			sp.Events().AppendEmpty().SetName("exception")
		}
	}
	return td, exceptions
}

// TestExactlyOnceProperty: on random trees every span is emitted exactly once
// per form (or counted invalid), and every exception event once.
func TestExactlyOnceProperty(t *testing.T) {
	for seed := range propertySeeds() {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(120)
		td, exceptions := randomTraces(rng, n)
		o := testOptions()
		o.MaxEventBytes = DefaultMaxEventBytes
		if seed%2 == 0 {
			o.MaxEventBytes = 3000 + rng.IntN(20000)
		}
		r := New(o).Traces(td, TracesWant{Transactions: true, SpanV2: true, Errors: true})

		txSpans, objs := 0, 0
		for _, x := range r.Transactions {
			m, err := checkTransaction(x.Payload)
			require.NoError(t, err, "seed %d", seed)
			require.LessOrEqual(t, len(x.Payload), o.MaxEventBytes, "seed %d", seed)
			txSpans += x.Spans
			objs += 1 + len(m["spans"].([]any))
		}
		assert.Equal(t, n, txSpans, "seed %d: transactions", seed)
		assert.Equal(t, txSpans, objs, "seed %d", seed)

		items := 0
		ids := map[string]bool{}
		for _, g := range r.SpanGroups {
			for _, it := range g.Items {
				m, err := checkSpanV2(it)
				require.NoError(t, err, "seed %d", seed)
				key := m["trace_id"].(string) + m["span_id"].(string)
				assert.False(t, ids[key], "seed %d: span emitted twice", seed)
				ids[key] = true
				items++
			}
		}
		assert.Equal(t, n, items, "seed %d: span v2", seed)
		assert.Zero(t, r.InvalidSpans, "seed %d", seed)
		assert.Len(t, r.Errors, exceptions, "seed %d", seed)
	}
}

// TestSkipped: unwanted categories are counted, not serialized.
func TestSkipped(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	td, exceptions := randomTraces(rng, 200)
	tr := New(testOptions())
	r := tr.Traces(td, TracesWant{})
	assert.Empty(t, r.Transactions)
	assert.Empty(t, r.SpanGroups)
	assert.Empty(t, r.Errors)
	assert.Equal(t, 200, r.SkippedSpans)
	assert.Equal(t, exceptions, r.SkippedErrors)
	full := tr.Traces(td, TracesWant{Transactions: true})
	assert.Equal(t, len(full.Transactions), r.SkippedTransactions) // no split at the default budget

	ld := benchLogs(100)
	lr := tr.Logs(ld, LogsWant{})
	assert.Empty(t, lr.Logs)
	assert.Equal(t, 100, lr.SkippedLogs)
	sent := tr.Logs(ld, LogsWant{Logs: true})
	size := 0
	for _, l := range sent.Logs {
		size += len(l)
	}
	assert.InDelta(t, size, lr.SkippedLogBytes, float64(size)/2, "estimate within 50%%")
}

// TestLogsExactlyOnce: every record is one log item; exception records also
// give one error event.
func TestLogsExactlyOnce(t *testing.T) {
	ld := benchLogs(300)
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := range 10 {
		lrs.At(i*7).Attributes().PutStr("exception.message", "boom")
	}
	r := New(testOptions()).Logs(ld, LogsWant{Logs: true, Errors: true})
	assert.Len(t, r.Logs, ld.LogRecordCount())
	assert.Len(t, r.Errors, 10)
	for _, l := range r.Logs {
		_, err := checkLog(l)
		require.NoError(t, err)
	}
}

// TestConcurrent runs one Translator from many goroutines (for -race) and checks
// that payloads of concurrent calls do not share memory.
func TestConcurrent(t *testing.T) {
	tr := New(Options{ErrorsFromSpanExceptions: true})
	td := benchTraces(200)
	ld := benchLogs(200)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				r := tr.Traces(td, TracesWant{Transactions: true, SpanV2: true, Errors: true})
				for _, x := range r.Transactions {
					_, err := checkTransaction(x.Payload)
					assert.NoError(t, err)
				}
				l := tr.Logs(ld, LogsWant{Logs: true})
				for _, x := range l.Logs {
					_, err := checkLog(x)
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Wait()
}

var _ = plog.NewLogs

// TestRelease: a released buffer is reused, a second Release does nothing, and
// results that were not released are never overwritten.
func TestRelease(t *testing.T) {
	tr := New(testOptions())
	td := benchTraces(100)
	keep := tr.Traces(td, TracesWant{Transactions: true})
	want := string(keep.Transactions[0].Payload)
	r := tr.Traces(td, TracesWant{Transactions: true})
	r.Release()
	r.Release()
	r2 := r // a copy shares the releaser
	r2.Release()
	for range 3 {
		x := tr.Traces(td, TracesWant{Transactions: true})
		_, err := checkTransaction(x.Transactions[0].Payload)
		require.NoError(t, err)
		x.Release()
	}
	assert.Equal(t, want, string(keep.Transactions[0].Payload))
	var empty TracesResult
	empty.Release() // no payloads: nothing to do
	var el LogsResult
	el.Release()
}

// propertySeeds is how many random inputs a property test draws.
func propertySeeds() uint64 {
	return 300
}
