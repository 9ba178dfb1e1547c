package sentryexporter

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// spanEvent and logEvent are the two renderings of one exception, as the
// translator writes them (the span's has the transaction, the log's the message).
func spanEvent(stack bool) translate.ErrorEvent {
	exc := `{"values":[{"type":"*pq.Error","value":"connection refused","mechanism":{"type":"auto.otel.span_event","handled":true}}]}`
	if stack {
		exc = `{"values":[{"type":"*pq.Error","value":"connection refused","mechanism":{"type":"auto.otel.span_event","handled":true},"stacktrace":{"frames":[{"function":"main.span","in_app":true}]}}]}`
	}
	return translate.ErrorEvent{
		EventID: strings.Repeat("a", 32), TraceID: strings.Repeat("1", 32),
		Payload: []byte(`{"event_id":"` + strings.Repeat("a", 32) + `","timestamp":1.5,"level":"error","platform":"go","transaction":"GET /cart/{id}","exception":` + exc +
			`,"contexts":{"trace":{"trace_id":"` + strings.Repeat("1", 32) + `","span_id":"0000000000000002","op":"db","status":"internal_error","origin":"auto.otel"}}}`),
		ErrorRef: translate.ErrorRef{
			TraceIDBytes: [16]byte{1}, SpanID: [8]byte{2}, Linked: true, Transaction: "GET /cart/{id}",
			HasStacktrace: stack, Fingerprint: 42,
		},
	}
}

func logEvent(stack bool) translate.ErrorEvent {
	exc := `{"values":[{"type":"*pq.Error","value":"connection refused","mechanism":{"type":"auto.otel.log","handled":true}}]}`
	if stack {
		exc = `{"values":[{"type":"*pq.Error","value":"connection refused","mechanism":{"type":"auto.otel.log","handled":true},"stacktrace":{"frames":[{"function":"main.log","in_app":true}]}}]}`
	}
	return translate.ErrorEvent{
		EventID: strings.Repeat("b", 32), TraceID: strings.Repeat("1", 32),
		Payload: []byte(`{"event_id":"` + strings.Repeat("b", 32) + `","timestamp":1.6,"level":"error","platform":"go","message":{"formatted":"checkout failed"},"exception":` + exc +
			`,"contexts":{"trace":{"trace_id":"` + strings.Repeat("1", 32) + `","span_id":"0000000000000002","origin":"auto.log.otel"}}}`),
		ErrorRef: translate.ErrorRef{
			TraceIDBytes: [16]byte{1}, SpanID: [8]byte{2}, Linked: true, FromLog: true, HasStacktrace: stack, Fingerprint: 42,
		},
	}
}

// validEvent checks a payload the way Relay would (duplicate keys included)
// and returns it decoded.
func validEvent(t *testing.T, ev translate.ErrorEvent) map[string]any {
	t.Helper()
	env := &envelope.Envelope{
		Header: envelope.Header{EventID: ev.EventID},
		Items:  []envelope.Item{{Type: envelope.ItemTypeEvent, Payload: ev.Payload}},
	}
	parsed, err := envelope.Parse(env.AppendTo(nil))
	require.NoError(t, err)
	require.NoError(t, envelope.Validate(parsed, envelope.RelayDefaults()))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(ev.Payload, &doc))
	return doc
}

func frames(doc map[string]any) string {
	vals := doc["exception"].(map[string]any)["values"].([]any)
	st, ok := vals[len(vals)-1].(map[string]any)["stacktrace"].(map[string]any)
	if !ok {
		return ""
	}
	return st["frames"].([]any)[0].(map[string]any)["function"].(string)
}

func TestDedupe(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p1, p2 := &project{}, &project{}
	type step struct {
		at   time.Duration
		p    *project
		ev   func() translate.ErrorEvent
		want offerResult
	}
	unlinked := func() translate.ErrorEvent { e := logEvent(false); e.Linked = false; return e }
	otherExc := func() translate.ErrorEvent { e := logEvent(false); e.Fingerprint = 7; return e }
	otherSpan := func() translate.ErrorEvent { e := logEvent(false); e.SpanID = [8]byte{3}; return e }
	span := func() translate.ErrorEvent { return spanEvent(true) }
	log := func() translate.ErrorEvent { return logEvent(false) }
	tests := []struct {
		name        string
		steps       []step
		releaseAt   time.Duration
		wantRelease int // released at releaseAt
		wantLeft    int // still held then (released at shutdown)
	}{
		{"span first, log within the window", []step{{0, p1, span, offerHeld}, {4 * time.Second, p1, log, offerMerged}}, 10 * time.Second, 0, 0},
		{"log first, span within the window", []step{{0, p1, log, offerHeld}, {4 * time.Second, p1, span, offerMerged}}, 10 * time.Second, 0, 0},
		{"the window ended: released, the late one held anew", []step{{0, p1, span, offerHeld}}, 5 * time.Second, 1, 0},
		{"not yet due", []step{{0, p1, span, offerHeld}}, 4 * time.Second, 0, 1},
		{"no trace or span id: sent at once", []step{{0, p1, unlinked, offerSend}}, 0, 0, 0},
		{"another exception of the span is not a duplicate", []step{{0, p1, span, offerHeld}, {time.Second, p1, otherExc, offerHeld}}, 5 * time.Second, 1, 1},
		{"another span is not a duplicate", []step{{0, p1, span, offerHeld}, {time.Second, p1, otherSpan, offerHeld}}, 5500 * time.Millisecond, 1, 1},
		{"another project is not a duplicate", []step{{0, p1, span, offerHeld}, {time.Second, p2, log, offerHeld}}, 0, 0, 2},
		{"the same exception twice from one pipeline: both sent", []step{{0, p1, span, offerHeld}, {time.Second, p1, span, offerSend}}, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDedupe(5 * time.Second)
			for i, s := range tt.steps {
				ev := s.ev()
				got, what := d.offer(s.p, &ev, t0.Add(s.at))
				require.Equal(t, s.want, what, "step %d", i)
				if what == offerMerged {
					doc := validEvent(t, got)
					assert.Equal(t, "GET /cart/{id}", doc["transaction"])
					assert.Equal(t, map[string]any{"formatted": "checkout failed"}, doc["message"])
				}
			}
			assert.Len(t, d.due(t0.Add(tt.releaseAt), false), tt.wantRelease)
			assert.Len(t, d.due(t0.Add(tt.releaseAt), true), tt.wantLeft, "shutdown releases the rest")
			assert.Empty(t, d.held)
			assert.Zero(t, d.bytes)
		})
	}
}

// A held event is a copy: the translator's buffer may be reused after the push.
func TestDedupeHoldsCopies(t *testing.T) {
	d := newDedupe(time.Second)
	ev := spanEvent(false)
	want := string(ev.Payload)
	_, what := d.offer(&project{}, &ev, time.Time{})
	require.Equal(t, offerHeld, what)
	for i := range ev.Payload {
		ev.Payload[i] = 'x'
	}
	rel := d.due(time.Time{}, true)
	require.Len(t, rel, 1)
	assert.Equal(t, want, string(rel[0].ev.Payload))
}

func TestDedupeBound(t *testing.T) {
	d := newDedupe(time.Second)
	d.maxEvents = 2
	p := &project{}
	for i := range 3 {
		ev := spanEvent(false)
		ev.Fingerprint = uint64(i)
		_, what := d.offer(p, &ev, time.Time{})
		if i < 2 {
			assert.Equal(t, offerHeld, what)
		} else {
			assert.Equal(t, offerOverflow, what, "over the cap: sent at once, not held")
		}
	}
	assert.EqualValues(t, 1, d.takeOverflow())
	assert.Zero(t, d.takeOverflow())

	d = newDedupe(time.Second)
	ev := spanEvent(false)
	d.maxBytes = len(ev.Payload) - 1
	_, what := d.offer(p, &ev, time.Time{})
	assert.Equal(t, offerOverflow, what, "over the byte cap")
}
