package errorshape

import (
	"encoding/json"
	"strings"
	"testing"

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

func TestMergeErrors(t *testing.T) {
	tests := []struct {
		name                string
		spanStack, logStack bool
		wantFrames          string
		wantMechanism       string
	}{
		{"neither has a stack trace", false, false, "", "auto.otel.span_event"},
		{"the span's stack trace is kept", true, true, "main.span", "auto.otel.span_event"},
		{"only the log has one: the log's exception is taken", false, true, "main.log", "auto.otel.log"},
		{"only the span has one", true, false, "main.span", "auto.otel.span_event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, l := spanEvent(tt.spanStack), logEvent(tt.logStack)
			m := MergeErrors(&s, &l)
			doc := validEvent(t, m)
			assert.Equal(t, s.EventID, m.EventID, "the span-derived event is kept")
			assert.Equal(t, "GET /cart/{id}", doc["transaction"])
			assert.Equal(t, map[string]any{"formatted": "checkout failed"}, doc["message"], "the log's message is added")
			assert.Equal(t, "db", doc["contexts"].(map[string]any)["trace"].(map[string]any)["op"])
			assert.Equal(t, tt.wantFrames, frames(doc))
			vals := doc["exception"].(map[string]any)["values"].([]any)
			assert.Equal(t, tt.wantMechanism, vals[0].(map[string]any)["mechanism"].(map[string]any)["type"])
		})
	}
}

func TestMergeErrorsKeepsExistingMessage(t *testing.T) {
	s, l := spanEvent(false), logEvent(false)
	s.Payload = []byte(strings.Replace(string(s.Payload), `"level":"error"`, `"level":"error","message":{"formatted":"mine"}`, 1))
	m := MergeErrors(&s, &l)
	doc := validEvent(t, m)
	assert.Equal(t, map[string]any{"formatted": "mine"}, doc["message"], "never a second message key")
}

func TestMergeErrorsUnreadablePayload(t *testing.T) {
	s, l := spanEvent(false), logEvent(false)
	l.Payload = []byte(`{"message":`)
	m := MergeErrors(&s, &l)
	assert.Equal(t, string(s.Payload), string(m.Payload), "the span-derived event goes out as it is")
}

func TestWithTransaction(t *testing.T) {
	l := logEvent(false)
	l.Payload = WithTransaction(l.Payload, "GET /a \"quoted\"")
	doc := validEvent(t, l)
	assert.Equal(t, "GET /a \"quoted\"", doc["transaction"])
	assert.Equal(t, `{"transaction":"x"}`, string(WithTransaction([]byte(`{}`), "x")))

	// Why the caller must know the member is absent: a second key is rejected.
	s := spanEvent(false)
	s.Payload = WithTransaction(s.Payload, "again")
	parsed, err := envelope.Parse((&envelope.Envelope{
		Header: envelope.Header{EventID: s.EventID},
		Items:  []envelope.Item{{Type: envelope.ItemTypeEvent, Payload: s.Payload}},
	}).AppendTo(nil))
	if err == nil {
		err = envelope.Validate(parsed, envelope.RelayDefaults())
	}
	assert.ErrorContains(t, err, "duplicate key")
}
