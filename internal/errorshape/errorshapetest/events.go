// Package errorshapetest holds the fixtures of the error-shaping tests: the
// two renderings of one exception, as the translator writes them, and the
// Relay-like check of an event payload. Tests only; it sends nothing.
package errorshapetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// SpanEvent and LogEvent are the two renderings of one exception, as the
// translator writes them (the span's has the transaction, the log's the message).
func SpanEvent(stack bool) translate.ErrorEvent {
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

func LogEvent(stack bool) translate.ErrorEvent {
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

// ValidEvent checks a payload the way Relay would (duplicate keys included)
// and returns it decoded.
func ValidEvent(t *testing.T, ev translate.ErrorEvent) map[string]any {
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

// Frames returns the first frame's function of the last exception's stack
// trace, or "" without one.
func Frames(doc map[string]any) string {
	vals := doc["exception"].(map[string]any)["values"].([]any)
	st, ok := vals[len(vals)-1].(map[string]any)["stacktrace"].(map[string]any)
	if !ok {
		return ""
	}
	return st["frames"].([]any)[0].(map[string]any)["function"].(string)
}
