package profilechunk

import (
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
)

// MaxChunkSpan is the longest time between a chunk's first and last sample.
// Relay rejects a chunk whose samples span more than 66 s
// (MAX_PROFILE_CHUNK_DURATION in relay-profiling/src/lib.rs); the SDKs
// flush every 60 s, and so does this package.
const MaxChunkSpan = 60 * time.Second

// DefaultMaxChunkBytes is the payload size a chunk is cut at when
// Options.MaxChunkBytes is zero: well under Relay's max_profile_size
// (50 MiB), so a chunk also fits the envelope and request limits.
const DefaultMaxChunkBytes = 4 << 20

// Options configure a Translator.
type Options struct {
	// ProfilerSalt returns the exporter's salt, mixed into every profiler_id
	// so that two exporters fed the same process agree (same salt) or not
	// (different salts) by choice. Nil means no salt.
	ProfilerSalt func() string
	// Environment and Release are fixed values; "" means per resource, as
	// internal/translate does: deployment.environment.name, then
	// deployment.environment; service.version.
	Environment, Release string
	// NewID returns a fresh random 128-bit ID for chunk_id. Nil means
	// crypto/rand. Tests inject a deterministic one.
	NewID func() [16]byte
	// MaxChunkBytes cuts a chunk before its payload would pass this size;
	// 0 means DefaultMaxChunkBytes.
	MaxChunkBytes int
	// InApp is the user's in-app includes and excludes (NewInApp); nil
	// leaves every frame to its runtime's rule.
	InApp *InApp
	// SharedIdentity, one of SharedIdentities, derives the profiler_id of a
	// resource carrying it from it alone (SharedProfilerID); "" or a
	// resource without it: from the whole identity (ProfilerID).
	SharedIdentity string
}

// Want says which profile types (Relay's ProfileType::from_platform: UI for
// the platforms cocoa, android and javascript, backend for every other) to
// render. Chunks of an unwanted type are only counted, in Result.Skipped.
// Room, when set, is where a chunk's bytes are reserved before they are
// written.
type Want struct {
	Backend, UI bool
	Room        Room
}

// Room is the memory budget chunks are rendered in. Take reserves n bytes
// before a chunk's buffer grows by them (false: no room; the chunk is
// counted in Result.NoRoom, not rendered); Give returns what a chunk that
// was not rendered reserved. What a rendered chunk reserved stays taken:
// the caller gives it back once the chunk is handed on.
type Room interface {
	Take(n int64) bool
	Give(n int64)
}

// Result is what one call of Profiles produced. Counts are in the data
// categories of the chunks concerned: profile_chunk(_ui) in chunks,
// profile_duration(_ui) in milliseconds.
type Result struct {
	// Chunks are the rendered chunks, one envelope item each.
	Chunks []Chunk
	// Skipped: chunks not rendered because Want excluded their type; the
	// caller counts them as rate limited.
	Skipped account.Counts
	// Invalid: OTLP profiles of which no sample could be represented (every
	// sample has a dangling index or a timestamp outside 2000..2200, or its
	// thread kept fewer than two non-idle samples, which Relay would
	// remove). One profile_chunk each; their duration is unknown. Also
	// a window of samples whose chunk passes MaxChunkBytes however it is
	// cut, or is left once a call has thrown away its waste budget of
	// renders over the limit (emit.go): one chunk and its duration.
	Invalid account.Counts
	// NoRoom: chunks not rendered because Want.Room had no room for them
	// (the memory budget is full): one chunk and its duration each.
	NoRoom account.Counts
	// NoTimestamps: OTLP profiles whose samples carry no timestamps
	// (pprof-style aggregated counts). A chunk is a timeline of samples;
	// inventing their times would draw a timeline that never was, so they
	// are counted here (one profile_chunk each) and not sent.
	NoTimestamps account.Counts
	// Unsupported: OTLP profiles of a sample type a chunk cannot carry
	// (allocations, in-use memory, lock contention, off-CPU, goroutines:
	// anything but CPU or wall-clock samples). One profile_chunk each.
	Unsupported account.Counts
	// Duplicate: OTLP profiles that repeat the samples of another profile of
	// the same scope in another unit (pprof's cpu/nanoseconds column beside
	// samples/count). Nothing is lost; one profile_chunk each.
	Duplicate account.Counts
	// Samples counts the samples (one per timestamp) of rendered profiles
	// that went into no chunk, by why. They are part of chunks that were
	// sent, so no data category counts them; the caller may log them.
	Samples SampleDrops
}

// SampleDrops counts samples left out of the chunks of a profile that was
// rendered.
type SampleDrops struct {
	// Invalid: a dangling stack, location, function or string index, or a
	// timestamp outside 2000..2200.
	Invalid int64
	// NoTimestamp: samples without timestamps beside timestamped ones.
	NoTimestamp int64
	// Lonely: samples of a thread with fewer than two non-idle samples in
	// their chunk, which Relay removes (remove_single_samples_per_thread).
	Lonely int64
}

// Chunk is one rendered profile_chunk payload and what the caller needs
// around it: the item header's platform, the data categories and quantity
// to account, and what links it to transactions of the same process.
type Chunk struct {
	// Payload is the profile_chunk JSON.
	Payload []byte
	// Platform is the chunk's platform; it also goes into the item header's
	// `platform`, which Relay reads to pick the data category before parsing.
	Platform string
	// UI is true for profile_chunk_ui / profile_duration_ui, false for
	// profile_chunk / profile_duration (ProfileType::from_platform(Platform)).
	UI bool
	// DurationMs is the time from the chunk's first to its last sample, in
	// milliseconds, at least 1: what profile_duration(_ui) counts.
	DurationMs int64
	// ProfilerID is the chunk's profiler_id (32 lowercase hex digits), the
	// same for every chunk of one process (ProfilerID, profilerid.go).
	ProfilerID string
	// ChunkID is the chunk's chunk_id (32 lowercase hex digits), fresh for
	// every chunk.
	ChunkID string
	// Resource is the index in the input's ResourceProfiles the chunk came
	// from, and PID its process's process.pid ("" when unknown).
	Resource int
	PID      string
	// Environment and Release are the chunk's, "" when absent.
	Environment, Release string
	// Start and End are the times of the first and last sample.
	Start, End time.Time
	// Threads are the chunk's thread_ids, each once, in first-seen order.
	Threads []string
	// Spans are the spans the chunk's samples were linked to (OTLP sample
	// links), each once. The v2 format has no field for them; a
	// transaction of one of them is linked to this chunk by setting its
	// contexts.profile.profiler_id to ProfilerID.
	Spans []SpanLink
	// Samples is the number of samples the chunk carries.
	Samples int
}

// SpanLink is a span some samples of a chunk were recorded in.
type SpanLink struct {
	TraceID [16]byte
	SpanID  [8]byte
	// Thread is the thread_id of the first sample linked to the span.
	Thread string
}

// Category returns the chunk's count category: profile_chunk or
// profile_chunk_ui.
func (c *Chunk) Category() account.Category {
	if c.UI {
		return account.CatProfileChunkUI
	}
	return account.CatProfileChunk
}

// DurationCategory returns the category DurationMs is counted in:
// profile_duration or profile_duration_ui.
func (c *Chunk) DurationCategory() account.Category {
	if c.UI {
		return account.CatProfileDurationUI
	}
	return account.CatProfileDuration
}

// Counts returns the chunk's quantities: one chunk and its duration.
func (c *Chunk) Counts() account.Counts {
	var n account.Counts
	n[c.Category()] = 1
	n[c.DurationCategory()] = c.DurationMs
	return n
}

// IsUI is Relay's ProfileType::from_platform (relay-profiling/src/lib.rs):
// cocoa, android and javascript are UI profiles, every other platform a
// backend profile.
func IsUI(platform string) bool {
	return platform == "cocoa" || platform == "android" || platform == "javascript"
}
