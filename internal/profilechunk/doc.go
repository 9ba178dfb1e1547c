// Package profilechunk turns OTLP profiles (pprofile, pdata v0.165.0) into
// Sentry continuous-profiling `profile_chunk` payloads, sample format
// version "2", as Relay's relay-profiling parses and normalises them
// (src/sample/v2.rs, src/lib.rs, src/debug_image.rs at getsentry/relay
// 10a858e and later; docs/mapping.md, "Profiles", says every decision).
//
// It knows nothing of HTTP, envelopes or rate limits: it must not send,
// build envelopes, read a rate limit or record an item's fate. The caller
// says which profile types it wants rendered (Want); anything else is only
// counted. Every payload is one chunk Relay accepts: at least two non-idle
// samples per thread, every stack and frame index in range, finite
// timestamps no more than MaxChunkSpan apart, valid UTF-8 JSON. What cannot
// be represented is counted in the Result, never dropped silently.
package profilechunk
