package encode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/gate"
)

// halveAt cuts a payload at its middle byte; the first half lasts aMs.
func halveAt(aMs int64) ChunkHalver {
	return func(p []byte) ([]byte, []byte, int64, int64, bool) {
		if len(p) < 2 {
			return nil, nil, 0, 0, false
		}
		return p[:len(p)/2], p[len(p)/2:], aMs, 1_000_000, true
	}
}

// TestProfileChunkEnvelope: one profile_chunk item with its platform in the
// item header, counted one chunk and its milliseconds in its profile
// type's pair of categories, behind that pair's gate.
func TestProfileChunkEnvelope(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name           string
		ui             bool
		g              gate.Gate
		chunk, seconds account.Category
	}{
		{"backend", false, gate.GateProfileChunk, account.CatProfileChunk, account.CatProfileDuration},
		{"ui", true, gate.GateProfileChunkUI, account.CatProfileChunkUI, account.CatProfileDurationUI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := f.enc.ProfileChunk(&ProfileChunk{Payload: []byte(`{}`), Platform: "go", UI: tt.ui, DurationMs: 9_500}, nil)
			require.Len(t, o.Env.Items, 1)
			it := o.Env.Items[0]
			assert.Equal(t, envelope.ItemTypeProfileChunk, it.Type)
			assert.Equal(t, "go", it.Platform)
			assert.Empty(t, o.Env.Header.EventID)
			assert.Equal(t, tt.g, o.Gate)
			var want account.Counts
			want[tt.chunk], want[tt.seconds] = 1, 9_500
			assert.Equal(t, want, o.Counts)
			assert.False(t, o.Splittable(), "no halver: a 413 drops it")
		})
	}
}

// TestProfileChunkHalves: a 413 cuts a halvable chunk in two chunks whose
// durations add up to the whole one's, each a chunk of its own.
func TestProfileChunkHalves(t *testing.T) {
	f := newFixture(t)
	o := f.enc.ProfileChunk(&ProfileChunk{Payload: []byte("abcdef"), Platform: "python", UI: true, DurationMs: 10_000, Halvable: true}, halveAt(4_000))
	require.True(t, o.Splittable())
	o.Detach()
	h := o.Halves()
	assert.Equal(t, "abc", string(h[0].Env.Items[0].Payload))
	assert.Equal(t, "def", string(h[1].Env.Items[0].Payload))
	assert.Equal(t, account.Counts{account.CatProfileChunkUI: 1, account.CatProfileDurationUI: 4_000}, h[0].Counts)
	assert.Equal(t, account.Counts{account.CatProfileChunkUI: 1, account.CatProfileDurationUI: 6_000}, h[1].Counts,
		"the second half counts the rest of the duration")
	assert.Equal(t, "python", h[1].Env.Items[0].Platform)
	assert.False(t, h[0].Splittable() || h[1].Splittable(), "a half is not cut again")

	small := f.enc.ProfileChunk(&ProfileChunk{Payload: []byte("abcdef"), Platform: "go", DurationMs: 10_000}, halveAt(4_000))
	assert.False(t, small.Splittable(), "not Halvable (fewer than two sample times): not cut")
}

// TestProfileChunkHalvesWhenTheCutFails: the chunk goes once more, whole,
// and the other half carries nothing.
func TestProfileChunkHalvesWhenTheCutFails(t *testing.T) {
	f := newFixture(t)
	o := f.enc.ProfileChunk(&ProfileChunk{Payload: []byte("a"), Platform: "go", DurationMs: 10, Halvable: true}, halveAt(1))
	h := o.Halves()
	assert.Equal(t, o.Counts, h[0].Counts)
	assert.Equal(t, "a", string(h[0].Env.Items[0].Payload))
	assert.False(t, h[0].Splittable())
	assert.Empty(t, h[1].Env.Items)
	assert.Equal(t, account.Counts{}, h[1].Counts)
}
