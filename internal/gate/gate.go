package gate

import (
	"time"

	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Gate is the rate-limit check an envelope must pass before it is sent.
type Gate uint8

const (
	GateError Gate = iota
	GateTransaction
	GateSpan
	GateLogs        // log_item or log_byte, as Relay enforces
	GateTraceMetric // trace_metric
	GateInternal    // client reports: only an all-category limit blocks them
	NumGates
)

// Deadline is the end of the latest limit that applies to g: its category's,
// or the all-category one (log containers: log_item's or log_byte's).
func (g Gate) Deadline(l ratelimit.Limits) time.Time {
	switch g {
	case GateError:
		return l.Deadline(ratelimit.CategoryError)
	case GateTransaction:
		return l.Deadline(ratelimit.CategoryTransaction)
	case GateSpan:
		return l.Deadline(ratelimit.CategorySpan)
	case GateTraceMetric:
		return l.Deadline(ratelimit.CategoryTraceMetric)
	case GateInternal:
		return l.Deadline(ratelimit.CategoryAll)
	default:
		a, b := l.Deadline(ratelimit.CategoryLogItem), l.Deadline(ratelimit.CategoryLogByte)
		if a.After(b) {
			return a
		}
		return b
	}
}

// Limited reports whether l blocks envelopes behind g at now.
func (g Gate) Limited(l ratelimit.Limits, now time.Time) bool { return g.Deadline(l).After(now) }
