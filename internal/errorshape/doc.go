// Package errorshape reshapes the JSON payload of one Sentry error event:
// merging the span-derived and log-derived renderings of one exception, and
// giving an event the transaction, request and response status code of its
// span's segment.
//
// Its one job is editing event payloads without ever writing a key twice or
// growing an event past Relay's max_event_size; when it cannot, the event goes
// out as it was. It must not decide which events to merge (the exporter's
// dedupe window does), look anything up, build envelopes, send, or count.
package errorshape
