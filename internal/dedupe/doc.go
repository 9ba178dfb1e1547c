// Package dedupe makes one Sentry error event of an exception that arrives
// twice: as a span event (traces pipeline) and as a log record with
// exception.* attributes (logs pipeline), in separate pushes, in either
// order, seconds apart. A [Window] holds each linked event for its length,
// bounded in events and bytes (each project its share), and merges it with
// its counterpart of the same project when that arrives in time
// (errorshape.MergeErrors).
//
// Its one job is deciding which two events are one. It must not edit
// payloads itself (internal/errorshape does), build envelopes, send, or
// count: the caller sends what Offer and Due return and counts the merged
// duplicates. It never drops an event: what it cannot hold is sent at once.
package dedupe
