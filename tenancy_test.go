package sentryexporter

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// twoTenants routes checkout to project 1 and fraud to project 2.
func twoTenants(sentry *fakeSentry, more func(*Config)) func(*Config) {
	return func(c *Config) {
		c.DSN = ""
		c.Routing.DSNs = map[string]configopaque.String{
			"checkout": configopaque.String(sentry.dsnFor("1")),
			"fraud":    configopaque.String(sentry.dsnFor("2")),
		}
		if more != nil {
			more(c)
		}
	}
}

// checkoutSecret is what only checkout's items may carry: its server span's
// card number, route and transaction name.
var checkoutSecret = []string{"4111111111111111", "/checkout/pay", "POST /checkout/pay", "card="}

// checkoutPays is checkout's server span of trace n, whose URL carries a
// card number in its query.
func checkoutPays(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(traceID(n))
	sp.SetSpanID(spanID(n, 0))
	sp.SetName("POST /checkout/pay")
	sp.SetKind(ptrace.SpanKindServer)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(30 * time.Millisecond)))
	sp.Attributes().PutStr("http.request.method", "POST")
	sp.Attributes().PutStr("http.route", "/checkout/pay")
	sp.Attributes().PutStr("url.full", "https://shop.example/checkout/pay?card=4111111111111111")
	sp.Attributes().PutInt("http.response.status_code", 200)
	return td
}

// fraudLogsException is fraud's log record of an exception, with the trace
// and span ids of checkout's server span (it got them in checkout's
// traceparent).
func fraudLogsException(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "fraud")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(testStart.Add(9 * time.Millisecond)))
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.Body().SetStr("score failed")
	lr.SetTraceID(traceID(n))
	lr.SetSpanID(spanID(n, 0))
	lr.Attributes().PutStr("exception.type", "ScoreError")
	lr.Attributes().PutStr("exception.message", "model unavailable")
	return ld
}

// projectText is everything project stored: each item's payload and its
// envelope's header, as text.
func projectText(t *testing.T, f *fakeSentry, project string) string {
	var b strings.Builder
	for _, r := range f.envelopes() {
		if r.project != project {
			continue
		}
		if tc := r.env.Header.Trace; tc != nil {
			b.WriteString(tc.Transaction + " " + tc.TraceID + "\n")
		}
		for _, it := range r.env.Items {
			b.Write(it.Payload)
			b.WriteByte('\n')
		}
	}
	require.NotZero(t, b.Len(), "project %s stored something", project)
	return b.String()
}

// TestNoRequestDataCrossesProjects is issue 38's scenario: checkout
// (project 1) serves a URL with a card number in its query; fraud (project
// 2) logs an exception with checkout's trace and span ids. fraud's error
// event carries none of checkout's URL, query, route or transaction name,
// whichever pipeline delivers first.
func TestNoRequestDataCrossesProjects(t *testing.T) {
	for _, order := range []string{"spans first", "log first"} {
		t.Run(order, inBubble(func(t *testing.T) {
			sentry := newMemSentry(t)
			h := newHarnessWith(t, sentry, twoTenants(sentry, nil))
			spans := func() { require.NoError(t, h.traces.ConsumeTraces(t.Context(), checkoutPays(0))) }
			logs := func() { h.consumeLogsData(fraudLogsException(0)) }
			if order == "log first" {
				spans, logs = logs, spans
			}
			spans()
			logs()
			time.Sleep(time.Minute)
			h.shutdown()
			sentry.requireNoInvalid()

			fraud := projectText(t, sentry, "2")
			assert.Contains(t, fraud, "model unavailable", "fraud's own error event")
			for _, s := range checkoutSecret {
				assert.NotContains(t, fraud, s, "project 2 carries checkout's data")
			}
			assert.Contains(t, projectText(t, sentry, "1"), "4111111111111111", "checkout keeps its own")
		}))
	}
}

// counters is service's export of n cumulative counters (one stream each,
// attribute route=<prefix><i>) started at start, read at at with value v.
func counters(service, prefix string, n int, start, at time.Time, v int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", service)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("http.server.requests")
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range n {
		p := s.DataPoints().AppendEmpty()
		p.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetIntValue(v)
		p.Attributes().PutStr("route", prefix+strconv.Itoa(i))
	}
	return md
}

// TestChurnCostsOnlyItsOwnStreams: fraud (project 2) keeps 100 cumulative
// streams; checkout (project 1) sends 20,000 new streams through 64 KiB of
// stream state (409 streams, a share of 204 each). fraud keeps every
// baseline: its next points are deltas, none dropped no_baseline.
func TestChurnCostsOnlyItsOwnStreams(t *testing.T) { synctest.Test(t, testChurnCostsOnlyItsOwnStreams) }

func testChurnCostsOnlyItsOwnStreams(t *testing.T) {
	sentry := newMemSentry(t)
	h := newHarnessWith(t, sentry, twoTenants(sentry, func(c *Config) {
		c.Metrics.MaxStreamBytes = minStreamBytes
		c.Routing.MaxProjects = 2
	}))
	long := time.Now().Add(-time.Hour) // fraud's streams began before the exporter: their first points have no baseline
	h.consumeMetrics(counters("fraud", "/score/", 100, long, time.Now(), 10))
	for round := range 20 {
		start := time.Now()
		h.consumeMetrics(counters("checkout", "/r"+strconv.Itoa(round)+"/", 1000, start, start.Add(time.Second), 1))
		time.Sleep(time.Second)
	}
	h.consumeMetrics(counters("fraud", "/score/", 100, long, time.Now(), 15))
	h.shutdown()
	sentry.requireNoInvalid()

	fraudLost := map[string]string{"project": "2", "category": "trace_metric", "reason": "no_baseline"}
	assert.EqualValues(t, 100, h.sum("otelcol_exporter_sentry_dropped_items", fraudLost), "only fraud's first points")
	assert.EqualValues(t, 100, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": "2", "category": "trace_metric"}), "every next point a delta")
	assert.EqualValues(t, 20_000, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": "1", "category": "trace_metric"})+
		h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "1", "category": "trace_metric"}), "checkout's points: sent or counted")
	assert.LessOrEqual(t, h.exp.streams.Held(), int64(minStreamBytes), "the bound holds")
}

// tracesOf is td with its resources' service.name set to service.
func tracesOf(service string, td ptrace.Traces) ptrace.Traces {
	for i := range td.ResourceSpans().Len() {
		td.ResourceSpans().At(i).Resource().Attributes().PutStr("service.name", service)
	}
	return td
}

// exceptionLogsOf is service's log records of the exceptions makeTraces(first,
// n, true) records on its db spans.
func exceptionLogsOf(service string, first, n int) plog.Logs {
	ld := plog.NewLogs()
	for i := first; i < first+n; i++ {
		one := exceptionLogs()
		lr := one.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
		lr.SetTraceID(traceID(i))
		lr.SetSpanID(spanID(i, 1))
		lr.Body().SetStr(service + " failed")
		one.ResourceLogs().At(0).Resource().Attributes().PutStr("service.name", service)
		one.ResourceLogs().At(0).CopyTo(ld.ResourceLogs().AppendEmpty())
	}
	return ld
}

// TestBurstCostsOnlyItsOwnDedupeShare: the dedupe window holds 10 events,
// a share of 5 for each of two projects. checkout (project 1) bursts 20
// exceptions; fraud (project 2) then records 5, as span events and as log
// records. Each of fraud's is still one event (deduplicated); checkout's
// oldest went out early, none lost.
func TestBurstCostsOnlyItsOwnDedupeShare(t *testing.T) {
	synctest.Test(t, testBurstCostsOnlyItsOwnDedupeShare)
}

func testBurstCostsOnlyItsOwnDedupeShare(t *testing.T) {
	sentry := newMemSentry(t)
	h := newHarnessWith(t, sentry, twoTenants(sentry, func(c *Config) { c.Routing.MaxProjects = 2 }))
	h.exp.dedupe.MaxEvents = 10
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), makeTraces(0, 20, true)))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), tracesOf("fraud", makeTraces(100, 5, true))))
	h.consumeLogsData(exceptionLogsOf("fraud", 100, 5))
	time.Sleep(time.Minute)
	h.shutdown()
	sentry.requireNoInvalid()

	project := func(p string) map[string]string { return map[string]string{"project": p, "category": "error"} }
	assert.EqualValues(t, 5, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "2", "category": "error", "reason": "deduplicated"}), "each of fraud's exceptions is one event")
	assert.EqualValues(t, 5, h.sum("otelcol_exporter_sentry_sent_items", project("2")))
	assert.EqualValues(t, 20, h.sum("otelcol_exporter_sentry_sent_items", project("1")), "checkout's, early or at once, all sent")
	assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", project("1")))
}

// TestChurnCostsOnlyItsOwnAssemblyShare: 32 KiB of assembly, a share of 16
// KiB for each of two projects. fraud (project 2) holds the children of 10
// requests; checkout (project 1) then sends the children of 1,000 requests
// whose roots never come. Only checkout's are pushed out; each of fraud's
// requests is one whole transaction when its root comes.
func TestChurnCostsOnlyItsOwnAssemblyShare(t *testing.T) {
	synctest.Test(t, testChurnCostsOnlyItsOwnAssemblyShare)
}

func testChurnCostsOnlyItsOwnAssemblyShare(t *testing.T) {
	const bound = 32 << 10
	sentry := newMemSentry(t)
	h := newHarnessWith(t, sentry, twoTenants(sentry, func(c *Config) {
		noDedupe(c)
		c.Assembly.MaxBytes, c.Assembly.Wait = bound, time.Minute
		c.Routing.MaxProjects = 2
	}))
	fraudChildren, fraudRoots := splitTraces(tracesOf("fraud", makeTraces(100, 10, false)))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), fraudChildren))
	for i := range 10 {
		children, _ := splitTraces(makeTraces(i*100, 100, false))
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
		assert.LessOrEqual(t, h.heldBytes(), int64(bound), "push %d", i)
	}
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), fraudRoots))
	h.shutdown()
	sentry.requireNoInvalid()

	frags := func(p string) int64 {
		return h.sum("otelcol_exporter_sentry_assembly_fragments", map[string]string{"project": p})
	}
	assert.Zero(t, frags("2"), "none of fraud's spans went out without its root")
	assert.EqualValues(t, 2000, frags("1"), "every one of checkout's orphans is a fragment")
	assert.Positive(t, h.sum("otelcol_exporter_sentry_assembly_fragments", map[string]string{"project": "1", "assembly_reason": "memory_bound"}))
	txs := transactionsByProject(t, sentry)["2"]
	require.Len(t, txs, 10, "one transaction per fraud request")
	for _, tx := range txs {
		assert.Len(t, tx.Spans, 2, "with both its children")
	}
}

// tenantData is everything one service sends, with the same trace and span
// ids as every other tenant's: traces with exceptions (root named name, its
// URL carrying mark), info logs, the exceptions logged again (to dedupe),
// and cumulative counters.
func tenantData(service, name, mark string) (ptrace.Traces, plog.Logs, pmetric.Metrics) {
	td := tracesOf(service, makeTraces(0, 3, true))
	sps := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range sps.Len() {
		if sp := sps.At(i); sp.ParentSpanID().IsEmpty() {
			sp.SetName(name)
			sp.Attributes().PutStr("http.route", name)
			sp.Attributes().PutStr("url.full", "https://"+service+".example"+name+"?"+mark)
		}
	}
	ld := makeLogs(3)
	ld.ResourceLogs().At(0).Resource().Attributes().PutStr("service.name", service)
	exceptionLogsOf(service, 0, 3).ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	start := time.Now().Add(time.Second)
	return td, ld, counters(service, mark+"/", 3, start, start.Add(time.Second), 1)
}

// TestNoDataCrossesProjects: checkout (project 1) and fraud (project 2) send
// traces, logs, exceptions and metrics with the same trace and span ids.
// Each project gets every item type of its own, and no item or envelope
// header of either carries anything of the other's: no name, route, URL,
// query, transaction or service.
func TestNoDataCrossesProjects(t *testing.T) {
	for _, mode := range []TracesAs{TracesAsTransactions, TracesAsSpans} {
		t.Run(string(mode), inBubble(func(t *testing.T) {
			sentry := newMemSentry(t)
			h := newHarnessWith(t, sentry, twoTenants(sentry, func(c *Config) { c.TracesAs = mode }))
			for _, svc := range [][3]string{{"checkout", "/cart/pay", "card=4111111111111111"}, {"fraud", "/score/risk", "fraud-token=s3cr3t"}} {
				td, ld, md := tenantData(svc[0], svc[1], svc[2])
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
				h.consumeLogsData(ld)
				h.consumeMetrics(md)
			}
			time.Sleep(time.Minute)
			h.shutdown()
			sentry.requireNoInvalid()

			spans := "transaction"
			if mode == TracesAsSpans {
				spans = "span"
			}
			got := byProject(sentry)
			for _, p := range []string{"1", "2"} {
				for _, typ := range []string{spans, "event", "log", "trace_metric"} {
					assert.Positive(t, got[p][typ], "project %s got its %s items", p, typ)
				}
			}
			checkout, fraud := projectText(t, sentry, "1"), projectText(t, sentry, "2")
			for _, s := range []string{"checkout", "/cart/", "4111111111111111"} {
				assert.NotContains(t, fraud, s, "project 2 carries checkout's")
			}
			for _, s := range []string{"fraud", "/score/", "s3cr3t"} {
				assert.NotContains(t, checkout, s, "project 1 carries fraud's")
			}
		}))
	}
}
