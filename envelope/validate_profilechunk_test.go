package envelope

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const profileChunkJSON = `{"version":"2","platform":"go","profiler_id":"0123456789abcdef0123456789abcdef",` +
	`"chunk_id":"fedcba9876543210fedcba9876543210","profile":{"samples":[],"stacks":[],"frames":[]}}`

func profileChunkEnvelope(platform, payload string) *Envelope {
	return &Envelope{Items: []Item{{Type: ItemTypeProfileChunk, Platform: platform, Payload: []byte(payload)}}}
}

// TestProfileChunkPlatformRoundTrip: the item header carries `platform`,
// which Parse reads back.
func TestProfileChunkPlatformRoundTrip(t *testing.T) {
	b := profileChunkEnvelope("go", profileChunkJSON).AppendTo(nil)
	assert.Contains(t, string(b), `{"type":"profile_chunk","length":`)
	assert.Contains(t, string(b), `,"platform":"go"}`)
	e, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, "go", e.Items[0].Platform)
	assert.NoError(t, Validate(e, RelayDefaults()))
}

// TestValidateProfileChunk: what Relay drops or rejects of a profile chunk.
func TestValidateProfileChunk(t *testing.T) {
	tests := []struct {
		name, platform, payload, want string
	}{
		{"no platform header", "", profileChunkJSON, "platform is missing"},
		{"platforms differ", "node", profileChunkJSON, "differs from the item header"},
		{"version 1", "go", strings.Replace(profileChunkJSON, `"version":"2"`, `"version":"1"`, 1), "version"},
		{"no profiler_id", "go", strings.Replace(profileChunkJSON, `"profiler_id"`, `"x"`, 1), "profiler_id is missing"},
		{"no samples", "go", strings.Replace(profileChunkJSON, `"samples"`, `"x"`, 1), "profile.samples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(profileChunkEnvelope(tt.platform, tt.payload), RelayDefaults())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestCheckProfileChunk: one profile chunk per envelope, at most MaxProfileSize.
func TestCheckProfileChunk(t *testing.T) {
	l := RelayDefaults()
	l.MaxProfileSize = 100
	assert.NoError(t, l.Check(profileChunkEnvelope("go", strings.Repeat("x", 100))))
	assert.ErrorIs(t, l.Check(profileChunkEnvelope("go", strings.Repeat("x", 101))), ErrTooLarge)
	two := profileChunkEnvelope("go", "{}")
	two.Items = append(two.Items, two.Items[0])
	assert.ErrorIs(t, l.Check(two), ErrTooLarge)
}
