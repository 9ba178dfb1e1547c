// Package send is the only code that speaks HTTP: it POSTs one envelope to
// its project's envelope URL, compressed (zstd, with a per-project fallback
// to gzip for a Relay that predates it), merges the rate limits of every
// answer (200 included) into the project's state, retries network errors and
// 5xx per retry_on_failure, and says what became of the envelope ([Result]).
//
// Its one job is one envelope's trip and its answer. It must not wait for a
// rate limit to end (a limited envelope is dropped at once), queue
// envelopes (the caller's pending queue does), build or split envelopes, or
// record an item's fate: it counts only its requests, by status, and the
// caller tells the accountant what the Result means for the items.
package send
