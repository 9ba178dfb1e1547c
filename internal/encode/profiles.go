package encode

import (
	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
)

// ChunkHalver cuts a profile chunk's payload in two by time, for one more
// try after a 413: each half's payload and duration in milliseconds. ok is
// false when the chunk cannot be cut (fewer than two sample times).
type ChunkHalver func(payload []byte) (a, b []byte, aMs, bMs int64, ok bool)

// ProfileChunk is one translated profile chunk as encode wraps it: its
// payload, its platform (the item header Relay reads the profile type
// from), whether that platform is a UI one (profile_chunk_ui and
// profile_duration_ui, else profile_chunk and profile_duration), its
// duration in milliseconds, and whether Halve may cut it.
type ProfileChunk struct {
	Payload    []byte
	Platform   string
	UI         bool
	DurationMs int64
	Halvable   bool
}

// ProfileChunk wraps one profile chunk: one profile_chunk item per
// envelope (Relay's size check allows one), with the item header
// `platform` (without it Relay counts the item in no category and drops
// it as invalid). The envelope counts one chunk and the chunk's duration in
// the chunk's pair of categories, and is behind that pair's gate. halve,
// when set and c is Halvable, splits it on a 413.
func (*Encoder) ProfileChunk(c *ProfileChunk, halve ChunkHalver) Outgoing {
	o := profileChunkOutgoing(c.Payload, c.Platform, c.UI, c.DurationMs)
	if c.Halvable {
		o.halve = halve
	}
	return o
}

func profileChunkOutgoing(payload []byte, platform string, ui bool, durationMs int64) Outgoing {
	o := Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{SDK: sdkinfo.Envelope()},
			Items:  []envelope.Item{{Type: envelope.ItemTypeProfileChunk, Platform: platform, Payload: payload}},
		},
		Gate: gate.GateProfileChunk,
	}
	chunk, duration := account.CatProfileChunk, account.CatProfileDuration
	if ui {
		o.Gate, chunk, duration = gate.GateProfileChunkUI, account.CatProfileChunkUI, account.CatProfileDurationUI
	}
	o.Counts[chunk] = 1
	o.Counts[duration] = durationMs
	return o
}

// chunkHalves is Halves for a profile chunk: the halver's two payloads, the
// first counted with its own duration and the second with the rest. A chunk the halver cannot cut goes out
// whole as the first half, and the second is empty (no item, no count):
// the send stage tries the chunk once more, and a second 413 drops it.
func (o *Outgoing) chunkHalves() [2]Outgoing {
	it := &o.Env.Items[0]
	ui := o.Gate == gate.GateProfileChunkUI
	a, b, aMs, _, ok := o.halve(it.Payload)
	if !ok {
		whole := *o
		whole.halve = nil
		return [2]Outgoing{whole, {Env: envelope.Envelope{Header: o.Env.Header}, Gate: o.Gate}}
	}
	// The halves' durations add up to the chunk's, so that every
	// millisecond counted in is counted out once.
	total := o.Counts[account.CatProfileDuration] + o.Counts[account.CatProfileDurationUI]
	aMs = min(max(aMs, 0), total)
	return [2]Outgoing{profileChunkOutgoing(a, it.Platform, ui, aMs), profileChunkOutgoing(b, it.Platform, ui, total-aMs)}
}
