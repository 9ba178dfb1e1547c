// Package translate turns OTLP spans and logs (pdata) into Sentry JSON payloads:
// transactions, span v2 items, error events and log items.
//
// It knows nothing of HTTP, envelopes or rate limits: it must not send, build
// envelopes, read a rate limit or record an item's fate. The caller says what it wants
// serialized (TracesWant, LogsWant); anything else is only counted, so a rate-limited
// category costs no serialization. Every payload is valid UTF-8 JSON that Relay
// accepts: ids are repaired to non-zero lowercase hex, timestamps are microsecond
// seconds with start ≤ end, values JSON cannot hold are replaced (see value.go), and
// transactions larger than Options.MaxEventBytes are split (see transaction.go).
//
// JSON is written by hand into one output buffer per call; payloads are sub-slices
// of it, cut only after the buffer has stopped growing. A caller that is done
// with the payloads may hand that buffer back with Release.
package translate
