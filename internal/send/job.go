package send

import (
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/settle"
)

// job is one envelope on its way through a lane: queued, waiting to retry,
// or in flight. Exactly one of the lane's queues, or one worker, has it at a
// time, and it is settled exactly once.
type job struct {
	out  encode.Outgoing // detached: it owns its payloads
	held int64           // bytes counted against the memory budget for it
	push *settle.Group   // the push that handed it on, told when it settles (nil: nobody waits)

	// Retry state.
	first     time.Time      // the first attempt's time, for retry_on_failure's max_elapsed_time
	interval  time.Duration  // the next backoff interval
	notBefore time.Time      // while waiting to retry: not sent before this time
	last      account.Reason // why its last attempt failed
	isHalf    bool           // a half of a container Sentry found too large: never split again
	seed      uint64         // its retries' jitter (retry.go)
	draws     uint64         // jitter draws so far
}
