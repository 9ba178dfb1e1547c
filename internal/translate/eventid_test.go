package translate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// resendTraces is two traces: a root with an exception event, and a child
// with two, in each.
func resendTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	ss := rs.ScopeSpans().AppendEmpty()
	t0 := pcommon.NewTimestampFromTime(fixedNow)
	for tr := byte(1); tr <= 2; tr++ {
		root := ss.Spans().AppendEmpty()
		root.SetTraceID([16]byte{tr, 1})
		root.SetSpanID([8]byte{tr, 1})
		root.SetName("GET /cart")
		root.SetStartTimestamp(t0)
		root.SetEndTimestamp(t0 + 1e6)
		child := ss.Spans().AppendEmpty()
		child.SetTraceID([16]byte{tr, 1})
		child.SetSpanID([8]byte{tr, 2})
		child.SetParentSpanID([8]byte{tr, 1})
		child.SetName("SELECT")
		child.SetStartTimestamp(t0)
		child.SetEndTimestamp(t0 + 1e5)
		for _, sp := range []ptrace.Span{root, child, child} {
			ev := sp.Events().AppendEmpty()
			ev.SetName("exception")
			ev.SetTimestamp(t0 + 5e4)
			ev.Attributes().PutStr("exception.type", "ValueError")
			ev.Attributes().PutStr("exception.message", "bad cart")
		}
	}
	return td
}

// resendLogs is an exception logged in a span, the same exception logged
// a moment later, and one with no time at all, twice.
func resendLogs() plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	for i, ts := range []time.Time{fixedNow, fixedNow.Add(time.Millisecond), {}, {}} {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTraceID([16]byte{9, 1})
		lr.SetSpanID([8]byte{9, 2})
		if !ts.IsZero() {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(ts))
		}
		lr.Body().SetStr("checkout failed")
		lr.Attributes().PutStr("exception.type", "ValueError")
		lr.Attributes().PutStr("exception.message", "bad cart "+string(rune('a'+i)))
	}
	return ld
}

type eventIDs struct{ tx, errs []string }

func translatedIDs(t *testing.T, tr *Translator) eventIDs {
	var ids eventIDs
	res := tr.Traces(resendTraces(), TracesWant{Transactions: true, Errors: true})
	for i := range res.Transactions {
		ids.tx = append(ids.tx, res.Transactions[i].EventID)
	}
	for i := range res.Errors {
		ids.errs = append(ids.errs, res.Errors[i].EventID)
	}
	res.Release()
	lres := tr.Logs(resendLogs(), LogsWant{Errors: true})
	for i := range lres.Errors {
		ids.errs = append(ids.errs, lres.Errors[i].EventID)
	}
	lres.Release()
	require.Len(t, ids.tx, 2)
	require.Len(t, ids.errs, 6+4)
	return ids
}

// TestResentEventsKeepTheirEventIDs: the same spans and log records
// translated again, by another translator with other random ids (a
// collector restarted after a crash, sending its persistent queue's batch
// again), give the same transaction and error event ids, so Sentry keeps one
// of each; every event of one translation has an id of its own. A log record
// with no time has nothing that identifies it and gets a fresh id.
func TestResentEventsKeepTheirEventIDs(t *testing.T) {
	first := translatedIDs(t, New(Options{ErrorsFromSpanExceptions: true, ErrorsFromLogs: true}))
	again := translatedIDs(t, New(Options{ErrorsFromSpanExceptions: true, ErrorsFromLogs: true}))
	assert.Equal(t, first.tx, again.tx, "transactions")
	assert.Equal(t, first.errs[:8], again.errs[:8], "errors of spans and of timed log records")
	assert.NotEqual(t, first.errs[8], again.errs[8], "a log record with no time")
	assert.NotEqual(t, first.errs[9], again.errs[9], "a log record with no time")
	all := append(append([]string{}, first.tx...), first.errs...)
	seen := map[string]bool{}
	for _, id := range all {
		assert.Len(t, id, 32)
		assert.False(t, seen[id], "%s twice", id)
		seen[id] = true
	}
}
