package sentryexporter // import "github.com/otel-sentry/sentryexporter"

// reason says why items were not stored. The values are client-report discard
// reasons, plus rate_limited for items in an envelope Sentry answered 429.
type reason uint8

const (
	// reasonRateLimitBackoff: dropped locally while a Sentry rate limit was active.
	reasonRateLimitBackoff reason = iota
	// reasonRateLimited: in an envelope Sentry answered 429. Relay already
	// recorded these as outcomes, so they never go into a client report.
	reasonRateLimited
	// reasonSendError: Sentry answered 4xx (not 429) or 5xx, and retries, if
	// any, gave up.
	reasonSendError
	// reasonNetworkError: no answer (connection, TLS, timeout), and retries
	// gave up or the exporter was shutting down.
	reasonNetworkError
	// reasonInternalSDKError: the exporter could not encode the item.
	reasonInternalSDKError
	// reasonInvalid: the item could not be repaired into something Relay accepts.
	reasonInvalid
	// reasonUnroutable: the item's resource maps to no Sentry project (no
	// routing entry and no `dsn`, or discovery could not resolve it). There
	// is no project to send a client report to.
	reasonUnroutable
	// reasonDeduplicated: an error event merged into another one of the same
	// exception (the span event and the log record of one exception). Nothing
	// was lost, so it never goes into a client report.
	reasonDeduplicated
	// reasonQueueOverflow: the project's pending queue had no room for the
	// envelope (pending::max_bytes_per_project or pending::max_bytes), so it was
	// dropped instead of waiting. Reported to the project once it answers again.
	reasonQueueOverflow
	numReasons
)

// wire is the name in metrics and client reports.
func (r reason) wire() string {
	return [numReasons]string{
		"ratelimit_backoff", "rate_limited", "send_error", "network_error", "internal_sdk_error", "invalid", "unroutable", "deduplicated", "queue_overflow",
	}[r]
}

// reported tells whether the reason goes into client reports: the party that
// drops an item records it, and for a 429 that party is Relay; unroutable
// items have no project to report to; deduplicated items were not lost.
func (r reason) reported() bool {
	return r != reasonRateLimited && r != reasonUnroutable && r != reasonDeduplicated
}
