package account

// Reason says why items were not stored. The values are client-report discard
// reasons, plus rate_limited for items in an envelope Sentry answered 429.
type Reason uint8

const (
	// ReasonRateLimitBackoff: dropped locally while a Sentry rate limit was active.
	ReasonRateLimitBackoff Reason = iota
	// ReasonRateLimited: in an envelope Sentry answered 429. Relay already
	// recorded these as outcomes, so they never go into a client report.
	ReasonRateLimited
	// ReasonSendError: Sentry answered 4xx (not 429) or 5xx, and retries, if
	// any, gave up.
	ReasonSendError
	// ReasonNetworkError: no answer (connection, TLS, timeout), and retries
	// gave up or the exporter was shutting down.
	ReasonNetworkError
	// ReasonInvalid: the item could not be repaired into something Relay accepts.
	ReasonInvalid
	// ReasonUnroutable: the item's resource maps to no Sentry project (no
	// routing entry and no `dsn`, or discovery could not resolve it). There
	// is no project to send a client report to.
	ReasonUnroutable
	// ReasonDeduplicated: an error event merged into another one of the same
	// exception (the span event and the log record of one exception). Nothing
	// was lost, so it never goes into a client report.
	ReasonDeduplicated
	// ReasonQueueOverflow: the project's pending queue had no room for the
	// envelope (pending::max_bytes_per_project or pending::max_bytes), so it was
	// dropped instead of waiting. Reported to the project once it answers again.
	ReasonQueueOverflow
	// ReasonNoBaseline: a point of a cumulative metric stream with no earlier
	// point to subtract (the stream's first, or one whose state was evicted
	// from the bounded stream state): it becomes the baseline of the stream's
	// next delta. Sentry never saw it, so it never goes into a client report.
	ReasonNoBaseline
	// ReasonUnchanged: a trace metric that would carry no information: a
	// counter of 0 (a cumulative sum that did not increase, a delta of 0),
	// or an item of a histogram point with no observation. An SDK sends
	// nothing for a counter nobody incremented, and Sentry bills every item,
	// so it is not sent. Nothing was lost: it never goes into a client report.
	ReasonUnchanged
	// ReasonNotAllowed: the item's resource asks for a project its sender
	// (routing::sender) may not write to, or its request names no sender
	// the exporter knows. It goes to no project, so it is never reported.
	ReasonNotAllowed
	NumReasons
)

// Wire is the name in metrics and client reports.
func (r Reason) Wire() string {
	return [NumReasons]string{
		"ratelimit_backoff", "rate_limited", "send_error", "network_error", "invalid", "unroutable", "deduplicated", "queue_overflow", "no_baseline", "unchanged", "not_allowed",
	}[r]
}

// Reported tells whether the reason goes into client reports: the party that
// drops an item records it, and for a 429 that party is Relay; unroutable
// and not_allowed items have no project to report to; deduplicated,
// no_baseline and unchanged items were not lost.
func (r Reason) Reported() bool {
	return r != ReasonRateLimited && r != ReasonUnroutable && r != ReasonNotAllowed && r != ReasonDeduplicated && r != ReasonNoBaseline && r != ReasonUnchanged
}
