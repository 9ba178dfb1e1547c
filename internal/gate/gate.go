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
	// GateProfileChunk: a backend platform's profile chunk, limited by
	// profile_chunk or profile_duration (Relay counts it in both).
	GateProfileChunk
	// GateProfileChunkUI: a UI platform's profile chunk, limited by
	// profile_chunk_ui or profile_duration_ui.
	GateProfileChunkUI
	GateInternal // client reports: only an all-category limit blocks them
	NumGates
)

// Deadline is the end of the latest limit that applies to g: its category's,
// or the all-category one (log containers: log_item's or log_byte's;
// profile chunks: their chunk count's or their duration's).
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
	case GateProfileChunk:
		return later(l.Deadline(ratelimit.CategoryProfileChunk), l.Deadline(ratelimit.CategoryProfileDuration))
	case GateProfileChunkUI:
		return later(l.Deadline(ratelimit.CategoryProfileChunkUI), l.Deadline(ratelimit.CategoryProfileDurationUI))
	default:
		return later(l.Deadline(ratelimit.CategoryLogItem), l.Deadline(ratelimit.CategoryLogByte))
	}
}

// later is the later of two deadlines.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Limited reports whether l blocks envelopes behind g at now.
func (g Gate) Limited(l ratelimit.Limits, now time.Time) bool { return g.Deadline(l).After(now) }
