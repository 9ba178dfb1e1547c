package sentryexporter

import (
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// downstreamSegment is a segment of trace 0 made by another service: a
// consumer span whose parent (the head's client span) is remote, with its own
// exception.
func downstreamSegment() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout") // same project
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(traceID(0))
	sp.SetSpanID(spanID(0, 7))
	sp.SetParentSpanID(spanID(0, 2))
	sp.SetFlags(0x300) // remote parent, as the Go SDK writes it
	sp.SetName("charge")
	sp.SetKind(ptrace.SpanKindConsumer)
	ev := sp.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.type", "ChargeError")
	return td
}

// withThreshold sets a W3C tracestate with an OTel threshold on every span.
func withThreshold(td ptrace.Traces, ts string) ptrace.Traces {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			sps := sss.At(j).Spans()
			for k := range sps.Len() {
				sps.At(k).TraceState().FromRaw(ts)
			}
		}
	}
	return td
}

// Every envelope of a trace carries the head's DSC, whichever push brought
// the segment and in whichever order the segments arrive.
func TestDSCIsTheTraceHeads(t *testing.T) {
	for _, tt := range []struct {
		name      string
		tracesAs  TracesAs
		headFirst bool
	}{
		{"transactions, head first", TracesAsTransactions, true},
		{"transactions, head second", TracesAsTransactions, false},
		{"span v2, head first", TracesAsSpans, true},
	} {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.TracesAs = tt.tracesAs; noDedupe(c) })
			head := withThreshold(makeTraces(0, 1, true), "ot=th:8")
			down := withThreshold(downstreamSegment(), "ot=th:8")
			if tt.headFirst {
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), head))
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), down))
			}
			before := 0 // envelopes sent before the head was seen
			if !tt.headFirst {
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), down))
				before = len(h.sentry.envelopes())
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), head))
			}
			h.shutdown()
			h.sentry.requireNoInvalid()
			envs := h.sentry.envelopes()
			require.NotEmpty(t, envs)
			n := 0
			for i, r := range envs {
				dsc := r.env.Header.Trace
				if dsc == nil {
					continue
				}
				if i < before {
					// the downstream segment went out before its head was seen: its own name
					assert.Equal(t, "charge", dsc.Transaction)
					continue
				}
				n++
				assert.Equal(t, "GET /cart/{id}", dsc.Transaction, "%v", r.dataTypes())
				assert.Equal(t, "true", dsc.Sampled)
				assert.Equal(t, "0.5", dsc.SampleRate, "ot=th:8 is a 50% threshold")
				assert.Equal(t, "ab000000000000000000000000000001", dsc.TraceID)
			}
			if tt.headFirst {
				assert.Equal(t, 4, n, "envelopes of both segments and both errors")
			} else {
				assert.Equal(t, 2, before, "the downstream transaction and its error")
				assert.Equal(t, 2, n, "the head's transaction and error")
			}
		}))
	}
}

// A head whose name is its URL (source url) is left out of the DSC, as
// sentry-go and the JavaScript SDK do; the rest of the DSC stays.
func TestDSCLeavesOutURLHeads(t *testing.T) { synctest.Test(t, testDSCLeavesOutURLHeads) }

func testDSCLeavesOutURLHeads(t *testing.T) {
	h := newHarness(t, noDedupe)
	td := makeTraces(0, 1, false)
	root := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	root.Attributes().Remove("http.route")
	root.Attributes().PutStr("url.path", "/cart/42")
	root.SetName("GET") // a span name "GET /cart/{id}" would name the route (semconv.go routeName)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
	h.shutdown()
	h.sentry.requireNoInvalid()
	envs := h.sentry.envelopes()
	require.Len(t, envs, 1)
	assert.Empty(t, envs[0].env.Header.Trace.Transaction)
	assert.Equal(t, "true", envs[0].env.Header.Trace.Sampled)
}

// A hostile head name (invalid UTF-8, NUL, 100 KB) still gives valid
// envelopes: the DSC and the spliced transaction are cut and repaired.
func TestDSCHostileHeadName(t *testing.T) { synctest.Test(t, testDSCHostileHeadName) }

func testDSCHostileHeadName(t *testing.T) {
	h := newHarness(t, noDedupe)
	td := makeTraces(0, 1, true)
	route := "/cart/\xff\x00" + strings.Repeat("é", 50_000)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("http.route", route)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
	h.consumeLogsData(exceptionLogs())
	h.shutdown()
	h.sentry.requireNoInvalid()
	docs, dscs := errorEvents(t, h.sentry)
	require.Len(t, docs, 2)
	for i, d := range dscs {
		assert.True(t, strings.HasPrefix(d.Transaction, "GET /cart/\uFFFD\uFFFD"), "event %d: %.20q", i, d.Transaction)
		assert.LessOrEqual(t, len(d.Transaction), 512+8, "event %d", i)
		assert.True(t, utf8.ValidString(docs[i]["transaction"].(string)), "event %d", i)
	}
}

// The DSC carries sample_rand where the trace's randomness is known (ot=rv),
// in both forms, consistent with the rate; without it there is none.
func TestDSCSampleRand(t *testing.T) {
	for _, tracesAs := range []TracesAs{TracesAsTransactions, TracesAsSpans} {
		for _, tt := range []struct{ ts, rand string }{
			{"ot=th:8;rv:c0000000000000", "0.2499999999999999"}, // 1 - (R+1)/2^56, R = 3/4 of 2^56: kept at rate 0.5
			{"ot=th:8", ""},
		} {
			t.Run(string(tracesAs)+" "+tt.ts, inBubble(func(t *testing.T) {
				h := newHarness(t, func(c *Config) { c.TracesAs = tracesAs; noDedupe(c) })
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), withThreshold(makeTraces(0, 1, true), tt.ts)))
				h.shutdown()
				h.sentry.requireNoInvalid()
				requireSampleRand(t, h.sentry.envelopes(), tt.rand)
			}))
		}
	}
}

// requireSampleRand: some envelope carries a DSC, and each DSC says the
// sample rate 0.5 and the sample_rand wanted.
func requireSampleRand(t *testing.T, envs []received, want string) {
	t.Helper()
	n := 0
	for _, r := range envs {
		if dsc := r.env.Header.Trace; dsc != nil {
			n++
			assert.Equal(t, "0.5", dsc.SampleRate)
			assert.Equal(t, want, dsc.SampleRand, "%v", r.dataTypes())
		}
	}
	assert.NotZero(t, n)
}
