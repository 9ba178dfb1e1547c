// Package send is the send stage: everything that happens to an envelope
// once it is built. It has one way in, [Lane.Offer] (a project's envelopes of
// one push), and one way out, the project's account.Accountant, which learns
// the fate of every item: stored by Sentry, or dropped and why.
//
// In between it owns, for every project, the queue of envelopes waiting to
// go, the delay queue of those waiting to retry (a failed envelope waits
// there with a not-before time; no worker ever sleeps in a retry), the
// workers and their adaptive concurrency (internal/concurrency), the memory
// held (internal/membudget: one budget for the exporter, shared fairly by
// projects; when it is full the oldest envelopes not in flight are dropped
// as queue_overflow), the
// one HTTP POST per attempt (compression, the rate limits of every answer,
// the answer's classification), and the client reports that tell Sentry what
// was dropped.
//
// It must not build, translate or split envelopes beyond the one split of a
// container Sentry answered 413, wait for a rate limit to end (a limited
// envelope is dropped at once), or call back into the exporter: it learns
// nothing from above but what Offer hands it.
package send
