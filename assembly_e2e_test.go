package sentryexporter

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
)

// splitTraces splits a batch as an SDK's batch span processor does when a
// flush falls inside the requests: the children (which end first) in one
// batch, their roots in the next.
func splitTraces(td ptrace.Traces) (children, roots ptrace.Traces) {
	children, roots = ptrace.NewTraces(), ptrace.NewTraces()
	td.CopyTo(children)
	td.CopyTo(roots)
	keep := func(t ptrace.Traces, root bool) {
		rss := t.ResourceSpans()
		for i := range rss.Len() {
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				sss.At(j).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() != root })
			}
		}
	}
	keep(children, false)
	keep(roots, true)
	return children, roots
}

// requests builds n requests like makeTraces, each with extra more children
// (an http.server root and 2+extra children).
func requests(first, n, extra int, exceptions bool) ptrace.Traces {
	td := makeTraces(first, n, exceptions)
	sps := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := first; i < first+n; i++ {
		for k := range extra {
			sp := sps.AppendEmpty()
			sp.SetTraceID(traceID(i))
			sp.SetSpanID(spanID(i, 3+k))
			sp.SetParentSpanID(spanID(i, 0))
			sp.SetName("SELECT items")
			sp.SetKind(ptrace.SpanKindClient)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Duration(12+k) * time.Millisecond)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Duration(13+k) * time.Millisecond)))
			sp.Attributes().PutStr("db.system.name", "postgresql")
		}
	}
	return td
}

// txOf is what a test reads of a transaction.
type txOf struct {
	Transaction string
	Contexts    struct {
		Trace struct {
			SpanID string `json:"span_id"`
		}
	}
	Spans []json.RawMessage
}

func transactions(t *testing.T, f *fakeSentry) []txOf {
	var out []txOf
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == envelope.ItemTypeTransaction {
				var tx txOf
				require.NoError(t, json.Unmarshal(it.Payload, &tx))
				out = append(out, tx)
			}
		}
	}
	return out
}

// stored counts what the fake Sentry received, by category (when it answers
// 200 to everything: what it stored).
func stored(f *fakeSentry) (s account.Counts) {
	var st [account.NumCategories]atomic.Int64
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			storeCounts(&st, it)
		}
	}
	for c := range st {
		s[c] = st[c].Load()
	}
	return s
}

func (h *harness) fragments(why string) int64 {
	return h.sum("otelcol_exporter_sentry_assembly_fragments", map[string]string{"assembly_reason": why})
}

// assemblyHeldBytes is the estimated bytes assembly holds over all projects:
// what counts against assembly::max_bytes, summed from the projects' shares
// the held_bytes gauge reads.
func (e *sentryExporter) assemblyHeldBytes() int64 {
	var n int64
	for _, p := range e.allProjects() {
		n += p.heldBytes.Load()
	}
	return n
}

// heldBytes reads otelcol_exporter_sentry_assembly_held_bytes summed over projects.
func (h *harness) heldBytes() int64 {
	m, err := h.tel.GetMetric("otelcol_exporter_sentry_assembly_held_bytes")
	if err != nil {
		return -1
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

// The split case: 40 requests of 10 spans, children in one push, their roots
// in a push 2 s later. One transaction per root, with all its children; no
// fragment; nothing waits once the roots are there.
func TestAssemblySplitRequests(t *testing.T) { synctest.Test(t, testAssemblySplitRequests) }

func testAssemblySplitRequests(t *testing.T) {
	h := newHarness(t, noDedupe)
	children, roots := splitTraces(requests(0, 40, 7, false))
	require.Equal(t, 360, children.SpanCount())
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	assert.Zero(t, h.sentry.countType(envelope.ItemTypeTransaction), "children wait for their roots")
	assert.Positive(t, h.heldBytes())
	time.Sleep(2 * time.Second)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), roots))

	txs := transactions(t, h.sentry)
	require.Len(t, txs, 40, "one transaction per request")
	for _, tx := range txs {
		assert.Equal(t, "GET /cart/{id}", tx.Transaction)
		assert.Len(t, tx.Spans, 9, "every child inside its root's transaction")
	}
	assert.Zero(t, h.heldBytes())
	h.shutdown()
	h.sentry.requireNoInvalid()
	for _, why := range []string{"expired", "memory_bound", "shutdown", "after_root"} {
		assert.Zero(t, h.fragments(why), why)
	}
	s := stored(h.sentry)
	assert.EqualValues(t, 400, s[account.CatSpan]+h.droppedAll("span"))
	assert.EqualValues(t, 400, h.sent("span"))
}

// A complete batch passes at once, and a root arriving after its children
// goes out at once: nothing waits for the ticker.
func TestAssemblyCompleteBatchDoesNotWait(t *testing.T) {
	synctest.Test(t, testAssemblyCompleteBatchDoesNotWait)
}

func testAssemblyCompleteBatchDoesNotWait(t *testing.T) {
	h := newHarness(t, noDedupe)
	h.consumeTraces(0, 5, false)
	assert.Len(t, transactions(t, h.sentry), 5)
	assert.Zero(t, h.heldBytes())
	h.shutdown()
}

// A storm of orphans: children whose roots never come, under a small byte
// bound. Held bytes stay within the bound; every span is sent (each child its
// own transaction, as without assembly) and counted as a fragment, by reason.
func TestAssemblyOrphanStorm(t *testing.T) { synctest.Test(t, testAssemblyOrphanStorm) }

func testAssemblyOrphanStorm(t *testing.T) {
	const bound = 32 << 10
	h := newHarness(t, func(c *Config) { noDedupe(c); c.Assembly.MaxBytes = bound; c.Assembly.Wait = 3 * time.Second })
	in, errs := 0, 0
	for i := range 24 {
		n := 2 + 10*(i%3) // small and large pushes: some expire before the bound pushes them out
		children, _ := splitTraces(requests(i*40, n, 1, i%4 == 0))
		in += children.SpanCount()
		if i%4 == 0 {
			errs += n
		}
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
		held := h.heldBytes()
		assert.LessOrEqual(t, held, int64(bound), "push %d", i)
		assert.Positive(t, held, "push %d", i)
		time.Sleep(time.Second)
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	frag := h.fragments("memory_bound") + h.fragments("expired") + h.fragments("shutdown")
	assert.EqualValues(t, in, frag, "every orphan is a fragment")
	assert.Positive(t, h.fragments("memory_bound"))
	assert.Positive(t, h.fragments("expired"))
	assert.Positive(t, h.fragments("shutdown"))
	s := stored(h.sentry)
	assert.EqualValues(t, in, s[account.CatSpan]+h.droppedAll("span"), "spans: in = stored + dropped")
	assert.EqualValues(t, in, s[account.CatTransaction]+h.droppedAll("transaction"), "each orphan is its own transaction")
	assert.EqualValues(t, errs, s[account.CatError]+h.droppedAll("error"), "errors: in = stored + dropped")
	assert.Zero(t, h.exp.assemblyHeldBytes(), "nothing held after shutdown")
}

// Rate limits apply when held spans are released, not when they arrived:
// children held while no limit was active are dropped and counted when
// their roots come during a transaction limit.
func TestAssemblyRateLimitAtRelease(t *testing.T) { synctest.Test(t, testAssemblyRateLimitAtRelease) }

func testAssemblyRateLimitAtRelease(t *testing.T) {
	h := newHarness(t, noDedupe)
	children, roots := splitTraces(requests(0, 10, 2, false))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "60:transaction:key"}}))
	h.consumeTraces(100, 1, false) // answered 429: transactions limited for 60 s
	time.Sleep(2 * time.Second)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), roots))
	assert.Empty(t, transactions(t, h.sentry)[1:], "nothing sent into the limit")
	h.shutdown()
	assert.Zero(t, h.sent("span"))
	assert.EqualValues(t, 10*5, h.dropped("span", "ratelimit_backoff"), "the released requests, at release")
	assert.EqualValues(t, 10*5+3, h.sent("span")+h.droppedAll("span"), "spans: in = stored + dropped")
	assert.EqualValues(t, 11, h.sent("transaction")+h.droppedAll("transaction"))
}

// Shutdown sends what is held, as fragments, before the pending queues
// close: nothing is lost.
func TestAssemblyShutdownFlush(t *testing.T) { synctest.Test(t, testAssemblyShutdownFlush) }

func testAssemblyShutdownFlush(t *testing.T) {
	h := newHarness(t, noDedupe)
	children, _ := splitTraces(requests(0, 4, 1, true))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	assert.Zero(t, h.sentry.countType(envelope.ItemTypeTransaction))
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.EqualValues(t, 12, h.fragments("shutdown"))
	s := stored(h.sentry)
	assert.EqualValues(t, 12, s[account.CatSpan])
	assert.EqualValues(t, 12, s[account.CatTransaction], "each child its own transaction, as without assembly")
	assert.EqualValues(t, 4, s[account.CatError], "the exceptions of held spans are sent at release")
}

// A child that arrives after its root was sent goes out at once, as a
// fragment counted after_root.
func TestAssemblyLateChild(t *testing.T) { synctest.Test(t, testAssemblyLateChild) }

func testAssemblyLateChild(t *testing.T) {
	h := newHarness(t, noDedupe)
	children, roots := splitTraces(requests(0, 1, 0, false))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), roots))
	require.Len(t, transactions(t, h.sentry), 1, "a root never waits")
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	assert.Len(t, transactions(t, h.sentry), 3, "the late children at once, each its own transaction")
	assert.EqualValues(t, 2, h.fragments("after_root"))
	assert.Zero(t, h.heldBytes())
	h.shutdown()
}

// Expiry: children whose root does not come within assembly::wait are sent
// without it by the next push (or the ticker).
func TestAssemblyExpiry(t *testing.T) { synctest.Test(t, testAssemblyExpiry) }

func testAssemblyExpiry(t *testing.T) {
	h := newHarness(t, func(c *Config) { noDedupe(c); c.Assembly.Wait = 10 * time.Second })
	children, roots := splitTraces(requests(0, 3, 0, false))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	time.Sleep(11 * time.Second)
	h.consumeTraces(50, 1, false) // any push releases what expired
	assert.EqualValues(t, 6, h.fragments("expired"))
	assert.Len(t, transactions(t, h.sentry), 7)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), roots))
	assert.Len(t, transactions(t, h.sentry), 10, "the roots go alone")
	h.shutdown()
}

// assembly::wait 0 turns assembly off: children go out at once.
func TestAssemblyOff(t *testing.T) { synctest.Test(t, testAssemblyOff) }

func testAssemblyOff(t *testing.T) {
	h := newHarness(t, func(c *Config) { noDedupe(c); c.Assembly.Wait = 0 })
	children, _ := splitTraces(requests(0, 2, 0, false))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	assert.Len(t, transactions(t, h.sentry), 4)
	h.shutdown()
}

// Span v2: held children go out with their root and name its segment; only
// the root is a segment. Fragments (shutdown) claim no segment.
func TestAssemblySpanV2Segments(t *testing.T) { synctest.Test(t, testAssemblySpanV2Segments) }

func testAssemblySpanV2Segments(t *testing.T) {
	h := newHarness(t, func(c *Config) { noDedupe(c); c.TracesAs = TracesAsSpans })
	children, roots := splitTraces(requests(0, 5, 2, false))
	orphans, _ := splitTraces(requests(10, 2, 0, false))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), orphans))
	time.Sleep(2 * time.Second)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), roots))
	h.shutdown()
	h.sentry.requireNoInvalid()
	type item struct {
		SpanID     string `json:"span_id"`
		IsSegment  bool   `json:"is_segment"`
		Attributes map[string]struct{ Value any }
	}
	var items []item
	for _, r := range h.sentry.envelopes() {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeSpan {
				continue
			}
			var c struct{ Items []item }
			require.NoError(t, json.Unmarshal(it.Payload, &c))
			items = append(items, c.Items...)
			if tr := r.env.Header.Trace; tr != nil && tr.Transaction != "" {
				assert.Equal(t, "GET /cart/{id}", tr.Transaction, "no DSC names a fragment's span")
			}
		}
	}
	require.Len(t, items, 5*5+2*2)
	segs, claimed, unclaimed := 0, 0, 0
	for _, it := range items {
		if it.IsSegment {
			segs++
		}
		if id, ok := it.Attributes["sentry.segment.id"]; ok {
			claimed++
			assert.Equal(t, "GET /cart/{id}", it.Attributes["sentry.segment.name"].Value)
			assert.Equal(t, id.Value.(string)[:8], it.SpanID[:8], "the segment is the request's root")
		} else {
			unclaimed++
			assert.NotContains(t, it.Attributes, "sentry.segment.name")
		}
	}
	assert.Equal(t, 5, segs, "only the roots are segments")
	assert.Equal(t, 25, claimed)
	assert.Equal(t, 4, unclaimed, "the orphans claim no segment")
	assert.EqualValues(t, 4, h.fragments("shutdown"))
}

// An exception recorded on a held span and also logged is one error event,
// even when the span's root arrives after the dedupe window: the log's copy
// waits in the window while its span is held. The event has its
// transaction and the trace's DSC, as today.
func TestAssemblyDedupeWaitsForHeldSpan(t *testing.T) {
	synctest.Test(t, testAssemblyDedupeWaitsForHeldSpan)
}

func testAssemblyDedupeWaitsForHeldSpan(t *testing.T) {
	h := newHarness(t, nil) // dedupe window 5 s
	children, roots := splitTraces(makeTraces(0, 1, true))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	h.consumeLogsData(exceptionLogs())
	time.Sleep(8 * time.Second) // past the window
	h.consumeLogs(1)            // a push releases what is due
	docs, _ := errorEvents(t, h.sentry)
	assert.Empty(t, docs, "the log's copy waits for its held span")
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), roots))
	docs, dscs := errorEvents(t, h.sentry)
	require.Len(t, docs, 1, "merged at the span's release")
	assert.Equal(t, "GET /cart/{id}", docs[0]["transaction"])
	assert.Equal(t, "GET /cart/{id}", dscs[0].Transaction)
	time.Sleep(time.Minute)
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeEvent))
	assert.EqualValues(t, 1, h.dropped("error", "deduplicated"))
	assert.EqualValues(t, 2, h.sent("error")+h.droppedAll("error"), "items in = sent + dropped")
}

// The same at shutdown: held spans are flushed before the dedupe window's
// final release, so the pair still merges.
func TestAssemblyDedupeAtShutdown(t *testing.T) { synctest.Test(t, testAssemblyDedupeAtShutdown) }

func testAssemblyDedupeAtShutdown(t *testing.T) {
	h := newHarness(t, nil)
	children, _ := splitTraces(makeTraces(0, 1, true))
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), children))
	h.consumeLogsData(exceptionLogs())
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeEvent))
	assert.EqualValues(t, 1, h.dropped("error", "deduplicated"))
}

// A distributed trace through two services routed to two projects, split as
// a gateway sees it: first the children that ended first (of both
// services, in one batch), then the backend's server span and the
// frontend's client span, then the frontend's root. The backend's server
// span is a local root (its parent is remote by the span flags): it never
// waits for the frontend. Each project gets one transaction per request
// with all its own children; no fragment.
func TestAssemblyDistributedTwoProjects(t *testing.T) {
	synctest.Test(t, testAssemblyDistributedTwoProjects)
}

func testAssemblyDistributedTwoProjects(t *testing.T) {
	sentry := newMemSentry(t)
	h := newHarnessWith(t, sentry, func(c *Config) {
		noDedupe(c)
		c.DSN = ""
		c.Routing.DSNs = map[string]configopaque.String{
			"frontend": configopaque.String(sentry.dsnFor("2")),
			"backend":  configopaque.String(sentry.dsnFor("3")),
		}
	})
	const n = 20
	batch := func(push int) ptrace.Traces { return distributedBatch(n, push) }
	byProject := func() map[string][]txOf { return transactionsByProject(t, sentry) }
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), batch(1)))
	assert.Empty(t, byProject(), "children wait")
	time.Sleep(2 * time.Second)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), batch(2)))
	got := byProject()
	require.Len(t, got["3"], n, "the backend's requests go as soon as their server span is there")
	for _, tx := range got["3"] {
		assert.Equal(t, "POST /charge", tx.Transaction)
		assert.Len(t, tx.Spans, 3)
	}
	assert.Empty(t, got["2"], "the frontend's children wait for its root")
	time.Sleep(2 * time.Second)
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), batch(3)))
	got = byProject()
	require.Len(t, got["2"], n)
	for _, tx := range got["2"] {
		assert.Equal(t, "GET /checkout", tx.Transaction)
		assert.Len(t, tx.Spans, 2)
	}
	h.shutdown()
	sentry.requireNoInvalid()
	assert.Len(t, byProject()["3"], n, "nothing more at shutdown")
	for _, why := range []string{"expired", "memory_bound", "shutdown", "after_root"} {
		assert.Zero(t, h.fragments(why), why)
	}
	assert.EqualValues(t, 3*n, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": "2", "category": "span"}))
	assert.EqualValues(t, 4*n, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": "3", "category": "span"}))
	assert.Zero(t, h.droppedAll("span"))
}

// distributedSpan is one span of a request across two services.
type distributedSpan struct {
	svc        string
	id, parent int
	kind       ptrace.SpanKind
	flags      uint32
	name       string
	push       int
}

// distributedRequest is each request's spans and the push each comes in.
// ids: frontend 0 (root), 1 (client), 2; backend 10 (server), 11, 12, 13
// (child of 11).
var distributedRequest = []distributedSpan{
	{"frontend", 0, -1, ptrace.SpanKindServer, 0x100, "GET /checkout", 3},
	{"frontend", 1, 0, ptrace.SpanKindClient, 0x100, "POST /charge", 2},
	{"frontend", 2, 0, ptrace.SpanKindInternal, 0x100, "render", 1},
	{"backend", 10, 1, ptrace.SpanKindServer, 0x300, "POST /charge", 2},
	{"backend", 11, 10, ptrace.SpanKindInternal, 0x100, "charge", 1},
	{"backend", 12, 10, ptrace.SpanKindClient, 0x100, "SELECT cards", 1},
	{"backend", 13, 11, ptrace.SpanKindClient, 0x100, "INSERT charges", 1},
}

// distributedBatch is push's spans of n requests, a resource per service.
func distributedBatch(n, push int) ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := map[string]ptrace.SpanSlice{}
	for _, svc := range []string{"frontend", "backend"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		scopes[svc] = rs.ScopeSpans().AppendEmpty().Spans()
	}
	for i := range n {
		for _, d := range distributedRequest {
			if d.push == push {
				d.appendTo(scopes[d.svc], i)
			}
		}
	}
	return td
}

// appendTo appends the span of request i.
func (d distributedSpan) appendTo(sps ptrace.SpanSlice, i int) {
	sp := sps.AppendEmpty()
	sp.SetTraceID(traceID(i))
	sp.SetSpanID(spanID(i, d.id))
	if d.parent >= 0 {
		sp.SetParentSpanID(spanID(i, d.parent))
	}
	sp.SetKind(d.kind)
	sp.SetFlags(d.flags)
	sp.SetName(d.name)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Duration(10-d.push) * time.Millisecond)))
}

// transactionsByProject is the transactions the fake Sentry received, by project.
func transactionsByProject(t *testing.T, sentry *fakeSentry) map[string][]txOf {
	t.Helper()
	out := map[string][]txOf{}
	for _, r := range sentry.envelopes() {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeTransaction {
				continue
			}
			var tx txOf
			require.NoError(t, json.Unmarshal(it.Payload, &tx))
			out[r.project] = append(out[r.project], tx)
		}
	}
	return out
}

// An SDK's batch span processor at its defaults (export every 5 s or at 512
// spans, spans in the order they end) serving 100 requests/s of 100 ms for
// 10 s, each a server span with nine sequential children: almost every
// export splits requests. Through the exporter, in virtual time, it is
// one transaction per request with all nine children, and no fragment.
// (With assembly::wait 0 the same input gave 1,985 transactions.)
func TestAssemblyBatchSpanProcessorShape(t *testing.T) {
	synctest.Test(t, testAssemblyBatchSpanProcessorShape)
}

func testAssemblyBatchSpanProcessorShape(t *testing.T) {
	h := newHarness(t, noDedupe)
	const requests, children = 1000, 9
	p := &batchProcessor{t: t, h: h, start: time.Now()}
	nextTick := 5 * time.Second
	for _, e := range endedSpans(requests, children) {
		for e.at >= nextTick { // the 5 s timer fires before this span ends
			p.exportAt(nextTick)
			nextTick += 5 * time.Second
		}
		p.batch = append(p.batch, e)
		if len(p.batch) == 512 {
			p.exportAt(e.at)
		}
	}
	p.exportAt(p.now)
	txs := transactions(t, h.sentry)
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Len(t, txs, requests, "one transaction per request")
	for _, tx := range txs {
		assert.Len(t, tx.Spans, children)
	}
	for _, why := range []string{"expired", "memory_bound", "shutdown", "after_root"} {
		assert.Zero(t, h.fragments(why), why)
	}
	assert.EqualValues(t, requests*(children+1), h.sent("span"))
}

// ended is a span as an SDK's batch span processor gets it: when it ended,
// and how to fill it in.
type ended struct {
	at time.Duration
	sp func(ptrace.Span)
}

// endedSpans is n requests of 100 ms, one every 10 ms, each a server span
// with children sequential children of 10 ms, in the order they end.
func endedSpans(n, children int) []ended {
	var spans []ended
	for r := range n {
		start := time.Duration(r) * 10 * time.Millisecond
		for k := range children {
			spans = append(spans, ended{start + time.Duration(k+1)*10*time.Millisecond, func(sp ptrace.Span) {
				sp.SetTraceID(traceID(r))
				sp.SetSpanID(spanID(r, k+1))
				sp.SetParentSpanID(spanID(r, 0))
				sp.SetFlags(0x100) // HAS_IS_REMOTE, local parent: as current SDKs export
				sp.SetKind(ptrace.SpanKindClient)
				sp.SetName("SELECT items")
			}})
		}
		spans = append(spans, ended{start + 100*time.Millisecond + time.Millisecond, func(sp ptrace.Span) {
			sp.SetTraceID(traceID(r))
			sp.SetSpanID(spanID(r, 0))
			sp.SetFlags(0x100)
			sp.SetKind(ptrace.SpanKindServer)
			sp.SetName("GET /items")
		}})
	}
	slices.SortStableFunc(spans, func(a, b ended) int { return cmp.Compare(a.at, b.at) })
	return spans
}

// batchProcessor plays an SDK's batch span processor exporting to h.
type batchProcessor struct {
	t     *testing.T
	h     *harness
	batch []ended
	start time.Time     // the processor's time 0
	now   time.Duration // since start
}

// exportAt waits until at and exports the batch, if any.
func (p *batchProcessor) exportAt(at time.Duration) {
	time.Sleep(time.Until(p.start.Add(at)))
	p.now = at
	if len(p.batch) == 0 {
		return
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "items")
	ss := rs.ScopeSpans().AppendEmpty()
	for _, e := range p.batch {
		sp := ss.Spans().AppendEmpty()
		e.sp(sp)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart.Add(e.at - 10*time.Millisecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(e.at)))
	}
	p.batch = p.batch[:0]
	require.NoError(p.t, p.h.traces.ConsumeTraces(p.t.Context(), td))
}
