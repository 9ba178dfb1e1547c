// Package admit decides whether an envelope may go out now: the rate-limit
// [Gate] of each kind of envelope (checked before translation, so that a
// limited category costs nothing, and again before each attempt), the in-flight
// budget (requests and bytes over the whole exporter, shared fairly between
// projects, with each project's adaptive concurrency limit) and the one probe
// per gate when a rate-limit window ends.
//
// Its one job is admission. It must not send or speak HTTP (it reads only the
// answer's status), queue or hold envelopes, or record an item's fate: what
// it refuses, the caller drops and counts.
package admit
