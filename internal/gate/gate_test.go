package gate

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otel-sentry/sentryexporter/ratelimit"
)

var t0 = time.Unix(1_700_000_000, 0)

// limits parses an X-Sentry-Rate-Limits header at t0.
func limits(h string) ratelimit.Limits {
	l, _ := ratelimit.Parse(h, t0)
	return l
}

// TestGateLimited: which limits block which envelopes. A category's own
// limit or an all-category one blocks its envelopes; log containers are
// blocked by log_item or log_byte, as Relay enforces; client reports only by
// an all-category limit.
func TestGateLimited(t *testing.T) {
	tests := []struct {
		header  string
		limited []Gate
	}{
		{"", nil},
		{"60:error", []Gate{GateError}},
		{"60:transaction", []Gate{GateTransaction}},
		{"60:span", []Gate{GateSpan}},
		{"60:log_item", []Gate{GateLogs}},
		{"60:log_byte", []Gate{GateLogs}},
		{"60:trace_metric", []Gate{GateTraceMetric}},
		{"60:trace_metric_byte", []Gate{GateTraceMetric}},
		{"60:profile_chunk", []Gate{GateProfileChunk}},
		{"60:profile_duration", []Gate{GateProfileChunk}},
		{"60:profile_chunk_ui", []Gate{GateProfileChunkUI}},
		{"60:profile_duration_ui", []Gate{GateProfileChunkUI}},
		{"60:error;span", []Gate{GateError, GateSpan}},
		{"60::organization", []Gate{GateError, GateTransaction, GateSpan, GateLogs, GateTraceMetric, GateProfileChunk, GateProfileChunkUI, GateInternal}},
		{"60:default", nil}, // a category none of our envelopes carries
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			l := limits(tt.header)
			for g := range NumGates {
				want := false
				for _, x := range tt.limited {
					want = want || x == g
				}
				assert.Equal(t, want, g.Limited(l, t0), "gate %d", g)
				assert.False(t, g.Limited(l, t0.Add(61*time.Second)), "gate %d: the window is over", g)
			}
		})
	}
}

// TestGateDeadline: a log container waits for the later of log_item's and
// log_byte's windows; any gate for the later of its own and the all-category one.
func TestGateDeadline(t *testing.T) {
	l := limits("30:log_item, 90:log_byte, 10:error, 20::organization")
	assert.Equal(t, t0.Add(90*time.Second), GateLogs.Deadline(l))
	assert.Equal(t, t0.Add(20*time.Second), GateError.Deadline(l), "the all-category window is later")
	assert.Equal(t, t0.Add(20*time.Second), GateInternal.Deadline(l))
	assert.True(t, GateTransaction.Deadline(limits("")).IsZero(), "no limit: a zero deadline")
	p := limits("30:profile_chunk, 90:profile_duration, 40:profile_duration_ui")
	assert.Equal(t, t0.Add(90*time.Second), GateProfileChunk.Deadline(p), "a chunk waits for the later of its count's and its duration's windows")
	assert.Equal(t, t0.Add(40*time.Second), GateProfileChunkUI.Deadline(p))
}

// TestProbes: when a window ends, exactly one envelope per gate goes out
// first; the others are limited until its answer. Any answer but a 429
// confirms the window is over (no probe needed for it again); a 429 or no
// answer lets the next envelope probe.
func TestProbes(t *testing.T) {
	l := limits("60:transaction, 60:error")
	after := t0.Add(61 * time.Second)
	tests := []struct {
		name   string
		status int // the probe's answer
		want   Admission
	}{
		{"answered 200: the window is over", http.StatusOK, Free},
		{"answered 400: Sentry is there, the window is over", http.StatusBadRequest, Free},
		{"answered 429: a new window came with it; the next one probes", http.StatusTooManyRequests, Probe},
		{"no answer: the next one probes", 0, Probe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Probes
			adm, _ := p.Admit(GateTransaction, l, t0.Add(time.Second))
			assert.Equal(t, Limited, adm, "inside the window")
			adm, ended := p.Admit(GateTransaction, l, after)
			assert.Equal(t, Probe, adm, "the first after the window probes")
			other, _ := p.Admit(GateTransaction, l, after)
			assert.Equal(t, Limited, other, "the others wait for the probe's answer")
			errAdm, _ := p.Admit(GateError, l, after)
			assert.Equal(t, Probe, errAdm, "each gate probes on its own")
			free, _ := p.Admit(GateSpan, l, after)
			assert.Equal(t, Free, free, "a gate never limited needs no probe")
			p.Settle(GateTransaction, ended, tt.status)
			next, _ := p.Admit(GateTransaction, l, after)
			assert.Equal(t, tt.want, next)
		})
	}
}

// TestGateCategories: each gate is blocked by exactly its item type's
// categories (ratelimit.ItemCategories), so a category added there cannot
// be left out here; a UI profile chunk by Relay's UI pair instead.
func TestGateCategories(t *testing.T) {
	itemTypes := map[Gate]string{
		GateError: "event", GateTransaction: "transaction", GateSpan: "span", GateLogs: "log",
		GateTraceMetric: "trace_metric", GateProfileChunk: "profile_chunk",
	}
	for g, it := range itemTypes {
		assert.Equal(t, ratelimit.ItemCategories(it), g.Categories(), "%q", it)
	}
	assert.Equal(t, []ratelimit.Category{ratelimit.CategoryProfileChunkUI, ratelimit.CategoryProfileDurationUI}, GateProfileChunkUI.Categories())
	assert.Empty(t, GateInternal.Categories(), "a client report has no category")
	for g := range NumGates {
		for _, c := range g.Categories() {
			assert.True(t, g.Limited(limits("60:"+c.String()), t0), "gate %d under %q", g, c)
		}
	}
}
