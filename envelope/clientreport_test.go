package envelope

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAppendClientReport(t *testing.T) {
	tests := []struct {
		name      string
		ts        time.Time
		discarded []Discard
		want      string
	}{
		{"no discards keeps the array", time.Time{}, nil, `{"discarded_events":[]}`},
		{
			"two discards", sentAt,
			[]Discard{{Reason: "ratelimit_backoff", Category: "log_item", Quantity: 3}, {Reason: "send_error", Category: "span", Quantity: 18446744073709551615}},
			`{"timestamp":"2026-11-30T21:58:19.123456Z","discarded_events":[` +
				`{"reason":"ratelimit_backoff","category":"log_item","quantity":3},` +
				`{"reason":"send_error","category":"span","quantity":18446744073709551615}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendClientReport(nil, tt.ts, tt.discarded)
			assert.Equal(t, tt.want, string(got))
			e := &Envelope{Items: []Item{{Type: ItemTypeClientReport, Payload: got}}}
			assert.NoError(t, Validate(e, RelayDefaults()))
		})
	}
}
