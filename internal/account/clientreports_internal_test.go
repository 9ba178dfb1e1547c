package account

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClientReportsFlag: Take looks at one flag before it swaps the counters,
// so the flag is set exactly when a count is pending. Counts of zero set
// nothing; reasons Sentry records itself (a 429) set nothing either.
func TestClientReportsFlag(t *testing.T) {
	tests := []struct {
		name string
		why  Reason
		c    Counts
		want bool
	}{
		{"nothing", ReasonQueueOverflow, Counts{}, false},
		{"a count", ReasonQueueOverflow, Counts{CatSpan: 1}, true},
		{"Sentry's own 429", ReasonRateLimited, Counts{CatSpan: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ClientReports
			r.Add(tt.why, tt.c)
			assert.Equal(t, tt.want, r.some.Load(), "flag after Add")
			assert.Equal(t, tt.want, r.Take() != nil, "Take finds a count")
			assert.False(t, r.some.Load(), "Take clears the flag")
		})
	}
}
