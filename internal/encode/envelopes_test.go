package encode

import (
	"bytes"
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/traceindex"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

func txPayload(eventID, name string) []byte {
	return []byte(`{"event_id":"` + eventID + `","type":"transaction","transaction":"` + name +
		`","start_timestamp":1700000000.0,"timestamp":1700000001.0,"contexts":{"trace":{"trace_id":"` +
		testTraceID + `","span_id":"00f067aa0ba902b7"}},"spans":[]}`)
}

func errPayload(eventID string) []byte {
	return []byte(`{"event_id":"` + eventID + `","timestamp":1700000000.0,"level":"error",` +
		`"exception":{"values":[{"type":"E","value":"boom"}]},"contexts":{"trace":{"trace_id":"` +
		testTraceID + `","span_id":"00f067aa0ba902b7"}}}`)
}

var (
	testTraceBytes = traceindex.TraceIDOf(testTraceID)
	rootSpanID     = [8]byte{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	childSpanID    = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
)

// headSegment is the trace's head as the translator describes it.
func headSegment() translate.Segment {
	return translate.Segment{
		TraceID: testTraceBytes, Name: "GET /head", Source: "route", Head: true,
		Sampled: true, SampleRate: "0.25", SampleRand: 0.125, HasSampleRand: true,
		SpanIDs:    append(rootSpanID[:], childSpanID[:]...),
		Request:    []byte(`{"method":"GET","url":"http://x/head"}`),
		StatusCode: 503,
	}
}

func TestTransaction(t *testing.T) {
	nonHead := translate.Segment{TraceID: testTraceBytes, Name: "worker", Sampled: true, SampleRate: "1"}
	tests := []struct {
		name    string
		known   []translate.Segment // segments already in the index
		facts   []translate.Segment // segments of this push (Index.Add), nil: look up
		segment int
		// otherIndex takes the push facts from another index, so that a
		// look-up in the encoder's own index would find nothing
		otherIndex bool
		wantTx     string
		wantSamp   string
		wantRate   string
		wantRand   string
	}{
		{name: "unknown trace: own name", wantTx: "own"},
		{name: "head known: head's facts", known: []translate.Segment{headSegment()}, wantTx: "GET /head", wantSamp: "true", wantRate: "0.25", wantRand: "0.125"},
		{name: "push facts of the head", facts: []translate.Segment{headSegment()}, wantTx: "GET /head", wantSamp: "true", wantRate: "0.25", wantRand: "0.125"},
		{name: "push facts without head: own name, first segment's sampling", facts: []translate.Segment{nonHead}, wantTx: "own", wantSamp: "true", wantRate: "1"},
		{name: "push facts are used as given, not looked up", otherIndex: true, facts: []translate.Segment{headSegment()}, wantTx: "GET /head", wantSamp: "true", wantRate: "0.25", wantRand: "0.125"},
		{name: "segment past the facts: look-up", known: []translate.Segment{headSegment()}, facts: []translate.Segment{nonHead}, segment: 5, wantTx: "GET /head", wantSamp: "true", wantRate: "0.25", wantRand: "0.125"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.known != nil {
				f.index.Add(tt.known, nil)
			}
			var facts []traceindex.Facts
			if tt.facts != nil {
				index := f.index
				if tt.otherIndex {
					index = traceindex.New()
				}
				facts = index.Add(tt.facts, nil)
			}
			tx := &translate.Transaction{
				EventID: testEventID, TraceID: testTraceID, Name: "own", Environment: "prod", Release: "app@1.2.3",
				Spans: 7, Segment: tt.segment, Payload: txPayload(testEventID, "own"),
			}
			o := f.enc.Transaction(tx, facts)

			assert.Equal(t, gate.GateTransaction, o.Gate)
			assert.Equal(t, account.Counts{account.CatTransaction: 1, account.CatSpan: 7}, o.Counts)
			assert.False(t, o.Splittable())
			p := writeAndParse(t, &o.Env)
			assert.Equal(t, testEventID, p.Header.EventID)
			assertSDK(t, p.Header)
			require.Len(t, p.Items, 1)
			assert.Equal(t, envelope.ItemTypeTransaction, p.Items[0].Type)
			assert.Equal(t, tx.Payload, p.Items[0].Payload)
			require.NotNil(t, p.Header.Trace)
			assert.Equal(t, envelope.TraceContext{
				TraceID: testTraceID, PublicKey: testPublicKey, Environment: "prod", Release: "app@1.2.3",
				Transaction: tt.wantTx, Sampled: tt.wantSamp, SampleRate: tt.wantRate, SampleRand: tt.wantRand,
			}, *p.Header.Trace)
			assert.Empty(t, f.dropped(t))
		})
	}
}

func TestError(t *testing.T) {
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) { runErrorCase(t, tt) })
	}
}

type errorCase struct {
	name        string
	known       bool // the index knows the head segment and its spans
	ref         translate.ErrorRef
	wantTx      string // DSC transaction
	wantPayload map[string]any
	samePayload bool
}

var errorCases = []errorCase{
	{
		name: "span event with its transaction", known: true,
		ref:    translate.ErrorRef{TraceIDBytes: testTraceBytes, SpanID: childSpanID, Linked: true, Transaction: "GET /head"},
		wantTx: "GET /head", samePayload: true,
	},
	{
		name: "span event without transaction gets its segment's name only", known: true,
		ref:         translate.ErrorRef{TraceIDBytes: testTraceBytes, SpanID: childSpanID, Linked: true},
		wantTx:      "GET /head",
		wantPayload: map[string]any{"transaction": "GET /head", "request": nil, "response": nil},
	},
	{
		name: "unknown trace, no transaction", ref: translate.ErrorRef{TraceIDBytes: testTraceBytes, SpanID: childSpanID, Linked: true},
		wantTx: "", samePayload: true,
	},
	{
		name: "log record in a known segment gets its name, request and status", known: true,
		ref:    translate.ErrorRef{TraceIDBytes: testTraceBytes, SpanID: childSpanID, Linked: true, FromLog: true},
		wantTx: "GET /head",
		wantPayload: map[string]any{
			"transaction": "GET /head",
			"request":     map[string]any{"method": "GET", "url": "http://x/head"},
			"response":    map[string]any{"status_code": json.Number("503")},
		},
	},
	{
		name: "log record with its own transaction keeps it, gets the request", known: true,
		ref:    translate.ErrorRef{TraceIDBytes: testTraceBytes, SpanID: childSpanID, Linked: true, FromLog: true, Transaction: "mine"},
		wantTx: "GET /head", // the DSC is the head's once it is known
		wantPayload: map[string]any{
			"request":  map[string]any{"method": "GET", "url": "http://x/head"},
			"response": map[string]any{"status_code": json.Number("503")},
		},
	},
	{
		name: "unlinked: no segment look-up", known: true,
		ref:    translate.ErrorRef{TraceIDBytes: testTraceBytes, SpanID: childSpanID, FromLog: true},
		wantTx: "GET /head", samePayload: true,
	},
	{
		name: "span not in the segment: payload unchanged", known: true,
		ref:    translate.ErrorRef{TraceIDBytes: testTraceBytes, SpanID: [8]byte{9, 9, 9, 9, 9, 9, 9, 9}, Linked: true, FromLog: true},
		wantTx: "GET /head", samePayload: true,
	},
}

// runErrorCase encodes an error event with tt's ref and checks its
// envelope: one event item, its header and DSC, and its payload.
func runErrorCase(t *testing.T, tt errorCase) {
	t.Helper()
	f := newFixture(t)
	if tt.known {
		f.index.Add([]translate.Segment{headSegment()}, nil)
	}
	payload := errPayload(testEventID)
	ev := &translate.ErrorEvent{EventID: testEventID, TraceID: testTraceID, Environment: "prod", Release: "r1", Payload: payload, ErrorRef: tt.ref}
	o := f.enc.Error(ev)

	assert.Equal(t, gate.GateError, o.Gate)
	assert.Equal(t, account.Counts{account.CatError: 1}, o.Counts)
	assert.False(t, o.Splittable())
	p := writeAndParse(t, &o.Env)
	assert.Equal(t, testEventID, p.Header.EventID)
	assertSDK(t, p.Header)
	require.Len(t, p.Items, 1)
	assert.Equal(t, envelope.ItemTypeEvent, p.Items[0].Type)
	require.NotNil(t, p.Header.Trace)
	assert.Equal(t, testTraceID, p.Header.Trace.TraceID)
	assert.Equal(t, testPublicKey, p.Header.Trace.PublicKey)
	assert.Equal(t, "prod", p.Header.Trace.Environment)
	assert.Equal(t, "r1", p.Header.Trace.Release)
	assert.Equal(t, tt.wantTx, p.Header.Trace.Transaction)
	if tt.samePayload {
		assert.Equal(t, string(payload), string(p.Items[0].Payload))
		return
	}
	checkErrorPayload(t, tt, p.Items[0].Payload)
}

// checkErrorPayload holds the event payload to tt's wantPayload members
// (response under contexts), and adds no transaction to an event whose ref
// has its own.
func checkErrorPayload(t *testing.T, tt errorCase, payload []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var got map[string]any
	require.NoError(t, dec.Decode(&got))
	for k, want := range tt.wantPayload {
		if k == "response" {
			contexts, _ := got["contexts"].(map[string]any)
			assert.Equal(t, want, contexts["response"])
			continue
		}
		assert.Equal(t, want, got[k], k)
	}
	if tt.ref.Transaction != "" {
		_, has := got["transaction"]
		assert.False(t, has, "an event with its own transaction in the ref gets none added")
	}
}

func TestAppendLogs(t *testing.T) {
	const small = 200
	tests := []struct {
		name      string
		logs      [][]byte
		wantSizes []int // items per envelope
	}{
		{name: "none", logs: nil},
		{name: "one", logs: logItems(1, small), wantSizes: []int{1}},
		{name: "a full container", logs: logItems(100, small), wantSizes: []int{100}},
		{name: "one over", logs: logItems(101, small), wantSizes: []int{100, 1}},
		{name: "250", logs: logItems(250, small), wantSizes: []int{100, 100, 50}},
		// 100 KiB logs: 20 fit in 2 MiB (20×102400 + 19 commas + 12 bytes of frame), 21 do not
		{name: "byte bound", logs: logItems(40, 100<<10), wantSizes: []int{20, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			arenas := &Arenas{}
			a := arenas.Get()
			defer arenas.Put(a)
			out := f.enc.AppendLogs(t.Context(), nil, tt.logs, a)
			require.Len(t, out, len(tt.wantSizes))
			for i, n := range tt.wantSizes {
				assert.Equal(t, n, out[i].Env.Items[0].ItemCount, "envelope %d", i)
			}
			checkLogEnvelopes(t, out, tt.logs)
			assert.Empty(t, f.dropped(t))
			assert.Nil(t, f.reports.Take())
		})
	}
}

// The container bound is 2 MiB for the whole payload, {"items":[ ]} and the
// commas included: a container of exactly 2 MiB goes out whole, one byte more
// is split.
func TestAppendLogsByteBoundIsExact(t *testing.T) {
	room := maxLogContainerBytes - len(`{"items":[`) - len(`]}`) - 1 // two items and a comma
	a, b := room/2, room-room/2
	tests := []struct {
		name      string
		logs      [][]byte
		wantSizes []int
	}{
		{"exactly 2 MiB", [][]byte{logItem(0, a), logItem(1, b)}, []int{2}},
		{"one byte over", [][]byte{logItem(0, a), logItem(1, b+1)}, []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			out := f.enc.AppendLogs(t.Context(), nil, tt.logs, &Arena{})
			require.Len(t, out, len(tt.wantSizes))
			for i, n := range tt.wantSizes {
				assert.Equal(t, n, out[i].Env.Items[0].ItemCount)
			}
			if len(out) == 1 {
				assert.Len(t, out[0].Env.Items[0].Payload, maxLogContainerBytes)
			}
			checkLogEnvelopes(t, out, tt.logs)
			assert.Empty(t, f.dropped(t))
		})
	}
}

func checkLogEnvelopes(t *testing.T, out []Outgoing, logs [][]byte) {
	t.Helper()
	var items, nbytes int64
	var got []json.RawMessage
	for i := range out {
		o := &out[i]
		assert.Equal(t, gate.GateLogs, o.Gate)
		assert.Zero(t, o.Counts[account.CatError]+o.Counts[account.CatTransaction]+o.Counts[account.CatSpan])
		p := writeAndParse(t, &o.Env)
		assert.Nil(t, p.Header.Trace, "logs of many traces share a container: no trace header")
		assert.Empty(t, p.Header.EventID)
		assertSDK(t, p.Header)
		require.Len(t, p.Items, 1)
		it := p.Items[0]
		assert.Equal(t, envelope.ItemTypeLog, it.Type)
		assert.Equal(t, envelope.ContentTypeLogContainer, it.ContentType)
		assert.LessOrEqual(t, it.ItemCount, MaxLogsPerEnvelope)
		assert.LessOrEqual(t, len(it.Payload), maxLogContainerBytes)
		inner := containerItems(t, it.Payload)
		assert.Len(t, inner, it.ItemCount)
		assert.EqualValues(t, it.ItemCount, o.Counts[account.CatLogItem])
		var b int64
		for _, raw := range inner {
			b += int64(len(raw))
		}
		assert.Equal(t, b, o.Counts[account.CatLogByte], "log_byte is the sum of the items' lengths")
		items += o.Counts[account.CatLogItem]
		nbytes += o.Counts[account.CatLogByte]
		got = append(got, inner...)
	}
	assert.EqualValues(t, len(logs), items)
	assert.Equal(t, totalLen(logs), nbytes)
	require.Len(t, got, len(logs))
	for i := range logs {
		assert.Equal(t, string(logs[i]), string(got[i]), "item %d, in order", i)
	}
}

func TestAppendLogsOversized(t *testing.T) {
	limit := maxLogContainerBytes - len(`{"items":[`) - len(`]}`) // the largest log that fits alone
	tests := []struct {
		name      string
		logs      [][]byte
		wantSent  []int // indexes sent
		wantSizes []int
		invalid   []int // indexes dropped
	}{
		{name: "largest that fits", logs: [][]byte{logItem(0, limit)}, wantSent: []int{0}, wantSizes: []int{1}},
		{name: "one byte over", logs: [][]byte{logItem(0, limit+1)}, invalid: []int{0}},
		{
			name: "over 2 MiB between small ones", logs: [][]byte{logItem(0, 300), logItem(1, 2<<20+1), logItem(2, 300)},
			wantSent: []int{0, 2}, wantSizes: []int{1, 1}, invalid: []int{1},
		},
		{
			name: "two oversized", logs: [][]byte{logItem(0, 3<<20), logItem(1, 300), logItem(2, 300), logItem(3, 2<<20)},
			wantSent: []int{1, 2}, wantSizes: []int{2}, invalid: []int{0, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			out := f.enc.AppendLogs(t.Context(), nil, tt.logs, &Arena{})
			var sent [][]byte
			for _, i := range tt.wantSent {
				sent = append(sent, tt.logs[i])
			}
			require.Len(t, out, len(tt.wantSizes))
			for i, n := range tt.wantSizes {
				assert.Equal(t, n, out[i].Env.Items[0].ItemCount)
			}
			checkLogEnvelopes(t, out, sent)

			want := map[string]int64{}
			var wantReport []envelope.Discard
			if len(tt.invalid) > 0 {
				var b int64
				for _, i := range tt.invalid {
					b += int64(len(tt.logs[i]))
				}
				want["log_item/invalid"] = int64(len(tt.invalid))
				want["log_byte/invalid"] = b
				wantReport = []envelope.Discard{
					{Reason: "invalid", Category: "log_item", Quantity: uint64(len(tt.invalid))},
					{Reason: "invalid", Category: "log_byte", Quantity: uint64(b)},
				}
			}
			assert.Equal(t, want, f.dropped(t))
			assert.ElementsMatch(t, wantReport, f.reports.Take())
		})
	}
}

// Each envelope of a trace's spans carries its DSC; a group that fits one
// container goes out as the translator framed it.
func TestAppendSpans(t *testing.T) {
	for _, tt := range appendSpansCases() {
		t.Run(tt.name, func(t *testing.T) { runAppendSpansCase(t, tt) })
	}
}

type appendSpansCase struct {
	name      string
	items     [][]byte
	framed    bool // Container set, as the translator does
	head      bool // the index knows the trace's head
	wantSizes []int
	asIs      bool // the one envelope's payload is g.Container itself
}

// appendSpansCases are built when the test runs, not at package init: the
// last case's spans alone are 6 MiB.
func appendSpansCases() []appendSpansCase {
	return []appendSpansCase{
		{name: "empty", items: nil},
		{name: "one, framed", items: spanItems(1, 0), framed: true, wantSizes: []int{1}, asIs: true},
		{name: "1000, framed", items: spanItems(1000, 0), framed: true, wantSizes: []int{1000}, asIs: true},
		{name: "1001, framed: chunked", items: spanItems(1001, 0), framed: true, wantSizes: []int{1000, 1}},
		{name: "2500, head known", items: spanItems(2500, 0), framed: true, head: true, wantSizes: []int{1000, 1000, 500}},
		{name: "not framed", items: spanItems(5, 0), wantSizes: []int{5}},
		// 1 MiB spans: five of them with commas and the head are over 5 MiB
		{name: "over 5 MiB framed: chunked by bytes", items: spanItems(6, 1<<20), framed: true, wantSizes: []int{4, 2}},
	}
}

// runAppendSpansCase encodes tt's span group and checks each envelope, that
// together they carry its spans in order, and that a framed group that fits
// is sent as the translator framed it.
func runAppendSpansCase(t *testing.T, tt appendSpansCase) {
	t.Helper()
	f := newFixture(t)
	wantDSC := envelope.TraceContext{TraceID: testTraceID, PublicKey: testPublicKey, Environment: "staging", Release: "r2", Transaction: "first segment"}
	if tt.head {
		f.index.Add([]translate.Segment{headSegment()}, nil)
		wantDSC.Transaction, wantDSC.Sampled, wantDSC.SampleRate, wantDSC.SampleRand = "GET /head", "true", "0.25", "0.125"
	}
	g := &translate.SpanGroup{TraceID: testTraceID, Environment: "staging", Release: "r2", Segment: "first segment", Items: tt.items}
	if tt.framed {
		g.Container = envelope.SpanContainer(tt.items)
	}
	arenas := &Arenas{}
	a := arenas.Get()
	defer arenas.Put(a)
	out := f.enc.AppendSpans(t.Context(), nil, g, a)

	require.Len(t, out, len(tt.wantSizes))
	var got []json.RawMessage
	for i := range out {
		got = append(got, checkSpanEnvelope(t, i, &out[i], tt.wantSizes[i], wantDSC)...)
	}
	require.Len(t, got, len(tt.items))
	for i := range tt.items {
		assert.Equal(t, string(tt.items[i]), string(got[i]), "span %d, in order", i)
	}
	if tt.asIs {
		payload := out[0].Env.Items[0].Payload
		assert.Same(t, unsafe.SliceData(g.Container), unsafe.SliceData(payload), "the framed container is sent without a copy")
		assert.Len(t, payload, len(g.Container))
	}
	assert.Empty(t, f.dropped(t))
}

// checkSpanEnvelope checks span envelope i, o, of wantSize spans with the
// DSC wantDSC: its gate, counts, header and one span container, and
// returns the container's spans.
func checkSpanEnvelope(t *testing.T, i int, o *Outgoing, wantSize int, wantDSC envelope.TraceContext) []json.RawMessage {
	t.Helper()
	assert.Equal(t, gate.GateSpan, o.Gate)
	assert.Equal(t, account.Counts{account.CatSpan: int64(wantSize)}, o.Counts)
	assert.Equal(t, wantSize > 1, o.Splittable())
	p := writeAndParse(t, &o.Env)
	assertSDK(t, p.Header)
	assert.Empty(t, p.Header.EventID)
	require.NotNil(t, p.Header.Trace, "envelope %d has no DSC", i)
	assert.Equal(t, wantDSC, *p.Header.Trace)
	require.Len(t, p.Items, 1)
	it := p.Items[0]
	assert.Equal(t, envelope.ItemTypeSpan, it.Type)
	assert.Equal(t, envelope.ContentTypeSpanContainer, it.ContentType)
	assert.Equal(t, wantSize, it.ItemCount)
	assert.LessOrEqual(t, len(it.Payload), maxSpanContainerBytes)
	inner := containerItems(t, it.Payload)
	assert.Len(t, inner, it.ItemCount)
	return inner
}

func TestAppendSpansOversized(t *testing.T) {
	f := newFixture(t)
	items := [][]byte{spanItem(0, 0), spanItem(1, maxSpanContainerBytes), spanItem(2, 0)}
	g := &translate.SpanGroup{TraceID: testTraceID, Segment: "s", Items: items, Container: envelope.SpanContainer(items)}
	out := f.enc.AppendSpans(t.Context(), nil, g, &Arena{})
	require.Len(t, out, 2, "the oversized span ends the container before it")
	for i, want := range [][]byte{items[0], items[2]} {
		p := writeAndParse(t, &out[i].Env)
		inner := containerItems(t, p.Items[0].Payload)
		require.Len(t, inner, 1)
		assert.Equal(t, string(want), string(inner[0]))
		assert.Equal(t, account.Counts{account.CatSpan: 1}, out[i].Counts)
	}
	assert.Equal(t, map[string]int64{"span/invalid": 1}, f.dropped(t))
	assert.Equal(t, []envelope.Discard{{Reason: "invalid", Category: "span", Quantity: 1}}, f.reports.Take())
}

// A 413 splits a container once: the halves carry exactly its items and
// counts, keep its gate (and a span container's DSC), and cannot split again.
func TestHalves(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.index.Add([]translate.Segment{headSegment()}, nil)
	logs := f.enc.AppendLogs(ctx, nil, append(logItems(5, 150), logItem(5, 4000)), &Arena{})
	require.Len(t, logs, 1)
	spanIt := spanItems(7, 300)
	spans := f.enc.AppendSpans(ctx, nil, &translate.SpanGroup{TraceID: testTraceID, Environment: "e", Release: "r", Segment: "s", Items: spanIt, Container: envelope.SpanContainer(spanIt)}, &Arena{})
	require.Len(t, spans, 1)
	chunked := f.enc.AppendSpans(ctx, nil, &translate.SpanGroup{TraceID: testTraceID, Segment: "s", Items: spanItems(1002, 0)}, &Arena{})
	require.Len(t, chunked, 2)
	twoLogs := f.enc.AppendLogs(ctx, nil, logItems(2, 150), &Arena{})
	require.Len(t, twoLogs, 1)

	tests := []struct {
		name string
		o    Outgoing
	}{
		{"log container", logs[0]},
		{"span container", spans[0]},
		{"chunked span container", chunked[0]},
		{"two logs", twoLogs[0]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkHalves(t, tt.o) })
	}
}

// checkHalves splits o and checks that the halves carry exactly its items,
// in order and split in the middle, and its counts, and that each half
// keeps its gate, item type and DSC and cannot split again.
func checkHalves(t *testing.T, o Outgoing) {
	t.Helper()
	require.True(t, o.Splittable())
	orig := writeAndParse(t, &o.Env)
	origItems := containerItems(t, orig.Items[0].Payload)
	halves := o.Halves()
	var sum account.Counts
	var got []json.RawMessage
	for i := range halves {
		h := &halves[i]
		got = append(got, checkHalf(t, i, orig, &o, h)...)
		for c := range sum {
			sum[c] += h.Counts[c]
		}
	}
	assert.Equal(t, o.Counts, sum, "the halves' counts add up to the original's")
	require.Len(t, got, len(origItems))
	for i := range got {
		assert.Equal(t, string(origItems[i]), string(got[i]))
	}
	assert.Equal(t, len(origItems)/2, halves[0].Env.Items[0].ItemCount)
	assert.Equal(t, len(origItems)-len(origItems)/2, halves[1].Env.Items[0].ItemCount)
}

// checkHalf checks half i, h, of o (which parses as orig) and returns the
// items of its container.
func checkHalf(t *testing.T, i int, orig *envelope.Envelope, o, h *Outgoing) []json.RawMessage {
	t.Helper()
	assert.False(t, h.Splittable(), "half %d splits again", i)
	assert.Equal(t, o.Gate, h.Gate)
	p := writeAndParse(t, &h.Env)
	require.Len(t, p.Items, 1)
	assert.Equal(t, orig.Items[0].Type, p.Items[0].Type)
	assert.Equal(t, orig.Items[0].ContentType, p.Items[0].ContentType)
	if orig.Header.Trace == nil {
		assert.Nil(t, p.Header.Trace)
	} else {
		require.NotNil(t, p.Header.Trace)
		assert.Equal(t, *orig.Header.Trace, *p.Header.Trace)
	}
	inner := containerItems(t, p.Items[0].Payload)
	assert.Len(t, inner, p.Items[0].ItemCount)
	assert.NotEmpty(t, inner)
	return inner
}

func TestNotSplittable(t *testing.T) {
	f := newFixture(t)
	one := f.enc.AppendLogs(t.Context(), nil, logItems(1, 150), &Arena{})
	require.Len(t, one, 1)
	assert.False(t, one[0].Splittable(), "a one-item container cannot be halved")
	oneSpan := f.enc.AppendSpans(t.Context(), nil, &translate.SpanGroup{TraceID: testTraceID, Items: spanItems(1, 0)}, &Arena{})
	require.Len(t, oneSpan, 1)
	assert.False(t, oneSpan[0].Splittable())
}

// Payloads written into one arena stay intact while the same arena takes
// more writes, whether it has room or must grow.
func TestArenaPayloadsStayIntact(t *testing.T) {
	arenas := &Arenas{}
	for round := range 3 { // Get/Put reuse
		a := arenas.Get()
		type written struct {
			payload []byte
			want    []byte
		}
		var all []written
		for step, n := range []int{3, 1, 50, 2, 400} {
			var chunks [][][]byte
			spans := step%2 == 1
			for c := range 3 {
				if spans {
					chunks = append(chunks, spanItems(n+c, 40*step))
				} else {
					chunks = append(chunks, logItems(n+c, 120+40*step))
				}
			}
			payloads := a.containers(chunks, spans)
			require.Len(t, payloads, len(chunks))
			for i, p := range payloads {
				want := envelope.Container(chunks[i])
				if spans {
					want = envelope.SpanContainer(chunks[i])
				}
				all = append(all, written{p, want})
				// a payload's owner appending to it must not reach the next one
				_ = append(p, "GARBAGE"...)
			}
			for i, w := range all {
				require.Equal(t, string(w.want), string(w.payload), "round %d step %d: payload %d changed", round, step, i)
			}
		}
		arenas.Put(a)
	}
}

// Envelopes of one push share the arena: logs and chunked spans appended in
// turn all still hold their items when the push is done.
func TestArenaSharedByOnePush(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	arenas := &Arenas{}
	a := arenas.Get()
	defer arenas.Put(a)
	logsA, logsB := logItems(150, 300), logItems(120, 500)
	spans := spanItems(1500, 100)
	var out []Outgoing
	out = f.enc.AppendLogs(ctx, out, logsA, a)
	out = f.enc.AppendSpans(ctx, out, &translate.SpanGroup{TraceID: testTraceID, Items: spans}, a)
	out = f.enc.AppendLogs(ctx, out, logsB, a)
	require.Len(t, out, 2+2+2)
	checkLogEnvelopes(t, out[0:2], logsA)
	checkLogEnvelopes(t, out[4:6], logsB)
	var got []json.RawMessage
	for i := 2; i < 4; i++ {
		p := writeAndParse(t, &out[i].Env)
		got = append(got, containerItems(t, p.Items[0].Payload)...)
	}
	require.Len(t, got, len(spans))
	for i := range spans {
		assert.Equal(t, string(spans[i]), string(got[i]))
	}
}

// Put keeps a bounded buffer for reuse and lets a huge one go.
func TestArenasPutBound(t *testing.T) {
	arenas := &Arenas{}
	big := &Arena{buf: make([]byte, 10, maxPooledPayloads+1)}
	arenas.Put(big)
	assert.Zero(t, cap(big.buf), "a buffer over maxPooledPayloads is let go")
	small := &Arena{buf: make([]byte, 10, 1<<10)}
	arenas.Put(small)
	assert.Empty(t, small.buf)
	assert.Equal(t, 1<<10, cap(small.buf))
}

// TestDetach: a detached envelope owns its payloads (the push's buffers can
// be reused at once) and a detached container can still be split, its items
// found in its own copy without another.
func TestDetach(t *testing.T) {
	newItems := func() [][]byte { return [][]byte{[]byte(`{"a":1}`), []byte(`{"b":22}`), []byte(`{"c":333}`)} }
	logItems, spanItems := newItems(), newItems()
	for _, c := range []struct {
		o     Outgoing
		items [][]byte
	}{{logOutgoing(logItems, envelope.Container(logItems)), logItems}, {spanOutgoing(nil, spanItems, envelope.SpanContainer(spanItems)), spanItems}} {
		o, items := c.o, c.items
		buf := o.Env.Items[0].Payload
		want := string(buf)
		o.Detach()
		clear(buf) // the push's buffer is reused
		for _, it := range items {
			clear(it)
		}
		assert.Equal(t, want, string(o.Env.Items[0].Payload))
		require.True(t, o.Splittable())
		halves := o.Halves()
		assert.Equal(t, `{"a":1}`, string(halves[0].items0()))
		assert.Contains(t, string(halves[1].Env.Items[0].Payload), `{"b":22},{"c":333}`)
	}
	tx := Outgoing{Env: envelope.Envelope{Items: []envelope.Item{{Type: envelope.ItemTypeTransaction, Payload: []byte(`{"t":1}`)}}}}
	buf := tx.Env.Items[0].Payload
	tx.Detach()
	clear(buf)
	assert.Equal(t, `{"t":1}`, string(tx.Env.Items[0].Payload))
	assert.False(t, tx.Splittable())

	// Items not where AppendContainer puts them: not copied again, not split.
	odd := logOutgoing(newItems(), []byte(`{"items":[]}`))
	odd.Detach()
	assert.False(t, odd.Splittable())
}

// items0 is the payload of a half's one item, from its container.
func (o *Outgoing) items0() []byte {
	p := o.Env.Items[0].Payload
	return p[bytes.IndexByte(p, '[')+1 : len(p)-2]
}
