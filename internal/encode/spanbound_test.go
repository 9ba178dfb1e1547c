package encode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// A chunked span container stays within maxSpanContainerBytes, as a log
// container stays within maxLogContainerBytes. envelope.Chunk measures the
// log frame {"items":[ ]}, 12 bytes shorter than the span v2 frame
// {"version":2,"items":[ ]}: without allowing for it, a span of limit+1 ..
// limit+12 bytes was sent instead of counted invalid.
func TestAppendSpansByteBoundIsExact(t *testing.T) {
	// the largest span that fits alone: the span v2 container head
	// {"version":2,"items":[ is 24 bytes, the tail ]} 2
	limit := maxSpanContainerBytes - len(envelope.SpanContainerHead) - len(`]}`)
	tests := []struct {
		name string
		size int
	}{
		{"largest that fits", limit},
		{"one byte over", limit + 1},
		{"twelve bytes over", limit + 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			items := [][]byte{spanItem(0, tt.size)}
			require.Len(t, items[0], tt.size)
			g := &translate.SpanGroup{TraceID: testTraceID, Segment: "s", Items: items, Container: envelope.SpanContainer(items)}
			out := f.enc.AppendSpans(t.Context(), nil, g, &Arena{})
			for i := range out {
				assert.LessOrEqual(t, len(out[i].Env.Items[0].Payload), maxSpanContainerBytes, "envelope %d", i)
			}
			if tt.size <= limit {
				assert.Len(t, out, 1)
				assert.Empty(t, f.dropped(t))
			} else {
				assert.Empty(t, out, "a span too large for any container is not sent")
				assert.Equal(t, map[string]int64{"span/invalid": 1}, f.dropped(t))
			}
		})
	}
}
