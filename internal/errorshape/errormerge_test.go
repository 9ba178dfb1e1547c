package errorshape

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/errorshape/errorshapetest"
)

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
			s, l := errorshapetest.SpanEvent(tt.spanStack), errorshapetest.LogEvent(tt.logStack)
			m := MergeErrors(&s, &l)
			doc := errorshapetest.ValidEvent(t, m)
			assert.Equal(t, s.EventID, m.EventID, "the span-derived event is kept")
			assert.Equal(t, "GET /cart/{id}", doc["transaction"])
			assert.Equal(t, map[string]any{"formatted": "checkout failed"}, doc["message"], "the log's message is added")
			assert.Equal(t, "db", doc["contexts"].(map[string]any)["trace"].(map[string]any)["op"])
			assert.Equal(t, tt.wantFrames, errorshapetest.Frames(doc))
			vals := doc["exception"].(map[string]any)["values"].([]any)
			assert.Equal(t, tt.wantMechanism, vals[0].(map[string]any)["mechanism"].(map[string]any)["type"])
		})
	}
}

func TestMergeErrorsKeepsExistingMessage(t *testing.T) {
	s, l := errorshapetest.SpanEvent(false), errorshapetest.LogEvent(false)
	s.Payload = []byte(strings.Replace(string(s.Payload), `"level":"error"`, `"level":"error","message":{"formatted":"mine"}`, 1))
	m := MergeErrors(&s, &l)
	doc := errorshapetest.ValidEvent(t, m)
	assert.Equal(t, map[string]any{"formatted": "mine"}, doc["message"], "never a second message key")
}

func TestMergeErrorsUnreadablePayload(t *testing.T) {
	s, l := errorshapetest.SpanEvent(false), errorshapetest.LogEvent(false)
	l.Payload = []byte(`{"message":`)
	m := MergeErrors(&s, &l)
	assert.Equal(t, string(s.Payload), string(m.Payload), "the span-derived event goes out as it is")
}

func TestWithTransaction(t *testing.T) {
	l := errorshapetest.LogEvent(false)
	l.Payload = WithTransaction(l.Payload, "GET /a \"quoted\"")
	doc := errorshapetest.ValidEvent(t, l)
	assert.Equal(t, "GET /a \"quoted\"", doc["transaction"])
	assert.Equal(t, `{"transaction":"x"}`, string(WithTransaction([]byte(`{}`), "x")))

	// Why the caller must know the member is absent: a second key is rejected.
	s := errorshapetest.SpanEvent(false)
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
