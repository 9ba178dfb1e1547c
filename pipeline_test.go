package sentryexporter

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnePipelineStoppingKeepsTheOthersRetries: the traces pipeline shuts
// down while the logs pipeline of the same exporter goes on; a log envelope
// that then meets a 503 is still retried and stored, not given up as if the
// whole exporter were stopping.
func TestOnePipelineStoppingKeepsTheOthersRetries(t *testing.T) {
	synctest.Test(t, testOnePipelineStoppingKeepsTheOthersRetries)
}

func testOnePipelineStoppingKeepsTheOthersRetries(t *testing.T) {
	h := newHarness(t, noDedupe)
	require.NoError(t, h.traces.Shutdown(t.Context()))

	h.sentry.setRespond(firstThenOK(answer{status: http.StatusServiceUnavailable}))
	h.consumeLogs(3)

	assert.Equal(t, int64(3), h.sent("log_item"), "the logs pipeline still retries")
	assert.Zero(t, h.droppedAll("log_item"))
	assert.Len(t, h.sentry.envelopes(), 2, "the 503'd envelope and its retry")
	require.NoError(t, h.logs.Shutdown(t.Context()))
	require.NoError(t, h.metrics.Shutdown(t.Context()))
	require.NoError(t, h.profiles.Shutdown(t.Context()))
}
