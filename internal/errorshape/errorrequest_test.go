package errorshape

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otel-sentry/sentryexporter/internal/errorshape/errorshapetest"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

const testRequest = `{"method":"GET","url":"http://h/cart/7","query_string":"a=1","headers":{"User-Agent":"x"}}`

func TestWithSegmentRequest(t *testing.T) {
	l := errorshapetest.LogEvent(false)
	l.Payload = WithSegmentRequest(l.Payload, []byte(testRequest), 502)
	doc := errorshapetest.ValidEvent(t, l)
	assert.Equal(t, map[string]any{"method": "GET", "url": "http://h/cart/7", "query_string": "a=1", "headers": map[string]any{"User-Agent": "x"}}, doc["request"])
	ctx := doc["contexts"].(map[string]any)
	assert.Equal(t, map[string]any{"status_code": float64(502)}, ctx["response"])
	assert.Contains(t, ctx, "trace", "the other contexts are kept")
	assert.Equal(t, map[string]any{"formatted": "checkout failed"}, doc["message"])

	// What the event has is kept, never written twice.
	again := WithSegmentRequest(l.Payload, []byte(`{"method":"POST"}`), 404)
	doc = errorshapetest.ValidEvent(t, withPayload(l, again))
	assert.Equal(t, "GET", doc["request"].(map[string]any)["method"])
	assert.Equal(t, float64(502), doc["contexts"].(map[string]any)["response"].(map[string]any)["status_code"])
	assert.Equal(t, string(l.Payload), string(again), "nothing to add: the payload as it was")

	// Only one of the two.
	only := errorshapetest.LogEvent(false)
	doc = errorshapetest.ValidEvent(t, withPayload(only, WithSegmentRequest(only.Payload, nil, 200)))
	assert.NotContains(t, doc, "request")
	assert.Equal(t, float64(200), doc["contexts"].(map[string]any)["response"].(map[string]any)["status_code"])
	doc = errorshapetest.ValidEvent(t, withPayload(only, WithSegmentRequest(only.Payload, []byte(testRequest), 0)))
	assert.Contains(t, doc, "request")
	assert.NotContains(t, doc["contexts"], "response")

	// Nothing to add, or an unreadable payload: unchanged.
	assert.Equal(t, string(only.Payload), string(WithSegmentRequest(only.Payload, nil, 0)))
	assert.Equal(t, "{not json", string(WithSegmentRequest([]byte("{not json"), []byte(testRequest), 200)))
}

func withPayload(ev translate.ErrorEvent, p []byte) translate.ErrorEvent {
	ev.Payload = p
	return ev
}
