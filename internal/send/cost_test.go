package send

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otel-sentry/sentryexporter/internal/admit"
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
		want   admit.Verdict
	}{
		{live, 200, admit.VerdictOK},
		{live, 429, admit.VerdictOK},
		{live, 413, admit.VerdictOK},
		{live, 499, admit.VerdictOK},
		{live, 500, admit.VerdictOverload},
		{live, 503, admit.VerdictOverload},
		{live, 0, admit.VerdictNone},
		{cancelled, 0, admit.VerdictIgnore},
		{cancelled, 503, admit.VerdictOverload},
		{cancelled, 200, admit.VerdictOK},
	} {
		assert.Equal(t, tt.want, verdictOf(tt.ctx, Result{Status: tt.status}), "status %d, cancelled %v", tt.status, tt.ctx.Err() != nil)
	}
}
