package translate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestBufferHintsHaveACeiling: a push of one span, or one log record, with
// a thousand 16 KiB attributes writes ~64 KiB for its one item (values cut
// to fit); the next push's buffer, sized from it, counts at most
// maxHintBytes per item (without the ceiling, 64 KiB: a push of 2,000 small
// spans after it asked for a 290 MiB buffer).
func TestBufferHintsHaveACeiling(t *testing.T) {
	tr := New(Options{})
	big := strings.Repeat("x", 16<<10)
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{1})
	sp.SetSpanID([8]byte{1})
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("x")
	for i := range 1000 {
		k := "attr." + strings.Repeat("k", i%7) + string(rune('a'+i%26)) + strings.Repeat("z", i/26)
		sp.Attributes().PutStr(k, big)
		lr.Attributes().PutStr(k, big)
	}
	r := tr.Traces(td, TracesWant{Transactions: true, SpanV2: true})
	r.Release()
	l := tr.Logs(ld, LogsWant{Logs: true})
	l.Release()
	assert.LessOrEqual(t, tr.spanB.Load(), int64(maxHintBytes), "bytes per span carried to the next push")
	assert.LessOrEqual(t, tr.logB.Load(), int64(maxHintBytes), "bytes per log record carried to the next push")
	assert.Equal(t, int64(maxHintBytes), tr.spanB.Load(), "the push wrote more per span than the ceiling")
	assert.Equal(t, int64(maxHintBytes), tr.logB.Load(), "the push wrote more per log record than the ceiling")
}
