package send

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otel-sentry/sentryexporter/internal/concurrency"
)

// TestVerdictOf: what an attempt tells the project's concurrency limit: a
// 5xx is overload, any other answer is Sentry being there, no answer is
// none, unless shutdown's drain time cancelled it (it tells nothing).
func TestVerdictOf(t *testing.T) {
	live := t.Context()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	for _, tt := range []struct {
		ctx    context.Context
		status int
		want   concurrency.Verdict
	}{
		{live, 200, concurrency.VerdictOK},
		{live, 429, concurrency.VerdictOK},
		{live, 413, concurrency.VerdictOK},
		{live, 499, concurrency.VerdictOK},
		{live, 500, concurrency.VerdictOverload},
		{live, 503, concurrency.VerdictOverload},
		{live, 0, concurrency.VerdictNone},
		{cancelled, 0, concurrency.VerdictIgnore},
		{cancelled, 503, concurrency.VerdictOverload},
		{cancelled, 200, concurrency.VerdictOK},
	} {
		assert.Equal(t, tt.want, verdictOf(tt.ctx, Result{Status: tt.status}), "status %d, cancelled %v", tt.status, tt.ctx.Err() != nil)
	}
}
