package translate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// twoServiceTraces is one root span (with a child) for each of two services;
// the child carries OTel's thread attributes.
func twoServiceTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	for i, svc := range []string{"profiled", "other"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		root := spans.AppendEmpty()
		root.SetTraceID(pcommon.TraceID([16]byte{byte(i + 1), 1}))
		root.SetSpanID(pcommon.SpanID([8]byte{byte(i + 1), 1}))
		root.SetName("GET /")
		root.SetStartTimestamp(1_700_000_000_000_000_000)
		root.SetEndTimestamp(1_700_000_001_000_000_000)
		child := spans.AppendEmpty()
		child.SetTraceID(root.TraceID())
		child.SetSpanID(pcommon.SpanID([8]byte{byte(i + 1), 2}))
		child.SetParentSpanID(root.SpanID())
		child.SetName("work")
		child.SetStartTimestamp(1_700_000_000_100_000_000)
		child.SetEndTimestamp(1_700_000_000_200_000_000)
		child.Attributes().PutInt("thread.id", 7)
		child.Attributes().PutStr("thread.name", "main")
	}
	return td
}

// TestTransactionNamesItsProcessProfiler: with ProfilerOf, a transaction
// of a resource that has a profiler carries contexts.profile.profiler_id;
// one of a resource without, and any without ProfilerOf, carries no
// profile context. A span's thread attributes are its data.
func TestTransactionNamesItsProcessProfiler(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	of := func(r pcommon.Resource) Profiler {
		if v, _ := r.Attributes().Get("service.name"); v.AsString() == "profiled" {
			return Profiler{ID: id}
		}
		return Profiler{}
	}
	tr := New(Options{})
	res := tr.Traces(twoServiceTraces(), TracesWant{Transactions: true, ProfilerOf: of})
	require.Len(t, res.Transactions, 2)
	profiles := map[string]any{}
	for _, tx := range res.Transactions {
		var ev struct {
			Contexts map[string]map[string]any `json:"contexts"`
			Spans    []struct {
				Data map[string]any `json:"data"`
			} `json:"spans"`
		}
		require.NoError(t, json.Unmarshal(tx.Payload, &ev))
		profiles[tx.TraceID] = ev.Contexts["profile"]
		require.Len(t, ev.Spans, 1)
		assert.EqualValues(t, 7, ev.Spans[0].Data["thread.id"])
		assert.Equal(t, "main", ev.Spans[0].Data["thread.name"])
	}
	assert.Equal(t, map[string]any{"profiler_id": id}, profiles["01010000000000000000000000000000"])
	assert.Nil(t, profiles["02010000000000000000000000000000"], "no profiler: no profile context")

	res = tr.Traces(twoServiceTraces(), TracesWant{Transactions: true})
	for _, tx := range res.Transactions {
		assert.NotContains(t, string(tx.Payload), `"profile"`)
	}
}

// TestSpanV2SegmentNamesItsProcessProfiler: with ProfilerOf, the span v2
// segment of a resource that has a profiler carries sentry.profiler_id, as
// @sentry/profiling-node 11.1 writes it on a streamed segment; its children
// and the segments of a resource without a profiler carry none.
func TestSpanV2SegmentNamesItsProcessProfiler(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	of := func(r pcommon.Resource) Profiler {
		if v, _ := r.Attributes().Get("service.name"); v.AsString() == "profiled" {
			return Profiler{ID: id}
		}
		return Profiler{}
	}
	res := New(Options{}).Traces(twoServiceTraces(), TracesWant{SpanV2: true, ProfilerOf: of})
	require.Len(t, res.SpanGroups, 2)
	named := 0
	for _, g := range res.SpanGroups {
		for _, it := range g.Items {
			var sp struct {
				IsSegment  bool                      `json:"is_segment"`
				Attributes map[string]map[string]any `json:"attributes"`
			}
			require.NoError(t, json.Unmarshal(it, &sp))
			p, ok := sp.Attributes["sentry.profiler_id"]
			svc := sp.Attributes["service.name"]["value"]
			if sp.IsSegment && svc == "profiled" {
				assert.Equal(t, map[string]any{"type": "string", "value": id}, p)
				named++
				continue
			}
			assert.False(t, ok, "a child span or a process without a profiler names none")
		}
	}
	assert.Equal(t, 1, named)
}

// TestTransactionNamesItsThread: the thread that ran a transaction goes to
// contexts.trace.data["thread.id"] as the chunk's thread_id string: from
// the samples linked to one of its spans (SpanProfilerOf, which also names
// the profiler), else the root's own thread.id when its profiler's threads
// are that kind (OwnThreads); a profiler of another kind of thread id
// leaves the span's own alone.
func TestTransactionNamesItsThread(t *testing.T) {
	const own, linked = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	td := twoServiceTraces()
	for i := range 2 {
		td.ResourceSpans().At(i).ScopeSpans().At(0).Spans().At(0).Attributes().PutInt("thread.id", 3)
	}
	traceData := func(want TracesWant) map[string]map[string]any {
		want.Transactions = true
		out := map[string]map[string]any{}
		for _, tx := range New(Options{}).Traces(td, want).Transactions {
			var ev struct {
				Contexts map[string]map[string]any `json:"contexts"`
			}
			require.NoError(t, json.Unmarshal(tx.Payload, &ev))
			out[tx.TraceID] = map[string]any{"thread.id": ev.Contexts["trace"]["data"].(map[string]any)["thread.id"], "profile": ev.Contexts["profile"]}
		}
		return out
	}
	p1, p2 := "01010000000000000000000000000000", "02010000000000000000000000000000"
	got := traceData(TracesWant{ProfilerOf: func(pcommon.Resource) Profiler { return Profiler{ID: own, OwnThreads: true} }})
	assert.Equal(t, "3", got[p1]["thread.id"], "the root's own, as a string")

	got = traceData(TracesWant{ProfilerOf: func(pcommon.Resource) Profiler { return Profiler{ID: own} }})
	assert.EqualValues(t, 3, got[p1]["thread.id"], "another kind of id: the span's own attribute, untouched")

	spanOf := func(trace [16]byte, span [8]byte) (string, string, bool) {
		if trace[0] == 1 && span == [8]byte{1, 2} { // the child of the first trace ran in the profile
			return linked, "4242", true
		}
		return "", "", false
	}
	got = traceData(TracesWant{ProfilerOf: func(pcommon.Resource) Profiler { return Profiler{ID: own} }, SpanProfilerOf: spanOf})
	assert.Equal(t, "4242", got[p1]["thread.id"], "the OS thread the linked samples ran on")
	assert.Equal(t, map[string]any{"profiler_id": linked}, got[p1]["profile"])
	assert.Equal(t, map[string]any{"profiler_id": own}, got[p2]["profile"], "no linked span: the resource's profiler")
}

// TestSpanV2SegmentNamesItsThread: a streamed segment names the profiler
// whose samples ran in one of its spans, and their thread as its
// thread.id string, as a transaction does.
func TestSpanV2SegmentNamesItsThread(t *testing.T) {
	const linked = "fedcba9876543210fedcba9876543210"
	spanOf := func(trace [16]byte, span [8]byte) (string, string, bool) {
		return linked, "4242", trace[0] == 1 && span == [8]byte{1, 2}
	}
	res := New(Options{}).Traces(twoServiceTraces(), TracesWant{SpanV2: true, SpanProfilerOf: spanOf})
	named := map[string]any{}
	for _, g := range res.SpanGroups {
		for _, it := range g.Items {
			var sp struct {
				IsSegment  bool                      `json:"is_segment"`
				Attributes map[string]map[string]any `json:"attributes"`
			}
			require.NoError(t, json.Unmarshal(it, &sp))
			if sp.IsSegment {
				named[sp.Attributes["service.name"]["value"].(string)] = [2]any{sp.Attributes["sentry.profiler_id"]["value"], sp.Attributes["thread.id"]["value"]}
			}
		}
	}
	assert.Equal(t, map[string]any{"profiled": [2]any{linked, "4242"}, "other": [2]any{nil, nil}}, named)
}
