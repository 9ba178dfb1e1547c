package gate

import (
	"time"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Gate is the rate-limit check an envelope must pass before it is sent.
type Gate uint8

const (
	GateError Gate = iota
	GateTransaction
	GateSpan
	GateLogs        // log_item or log_byte, as Relay enforces
	GateTraceMetric // trace_metric or trace_metric_byte, likewise
	// GateProfileChunk: a backend platform's profile chunk, limited by
	// profile_chunk or profile_duration (Relay counts it in both).
	GateProfileChunk
	// GateProfileChunkUI: a UI platform's profile chunk, limited by
	// profile_chunk_ui or profile_duration_ui.
	GateProfileChunkUI
	GateInternal // client reports: only an all-category limit blocks them
	NumGates
)

// categories are the data categories whose limits block each gate's
// envelopes: ratelimit.ItemCategories of its item type, and for a UI
// profile chunk Relay's ProfileType::Ui pair. GateInternal has none.
var categories = [NumGates][]ratelimit.Category{
	GateError:          ratelimit.ItemCategories(envelope.ItemTypeEvent),
	GateTransaction:    ratelimit.ItemCategories(envelope.ItemTypeTransaction),
	GateSpan:           ratelimit.ItemCategories(envelope.ItemTypeSpan),
	GateLogs:           ratelimit.ItemCategories(envelope.ItemTypeLog),
	GateTraceMetric:    ratelimit.ItemCategories(envelope.ItemTypeTraceMetric),
	GateProfileChunk:   ratelimit.ItemCategories(envelope.ItemTypeProfileChunk),
	GateProfileChunkUI: {ratelimit.CategoryProfileChunkUI, ratelimit.CategoryProfileDurationUI},
}

// Categories are the data categories whose limits block g's envelopes: what a
// 429 refusing one of them limits when its header names none of them. The
// slice is shared: do not modify it.
func (g Gate) Categories() []ratelimit.Category { return categories[g] }

// Deadline is the end of the latest limit that applies to g: one of its
// Categories', or the all-category one.
func (g Gate) Deadline(l ratelimit.Limits) time.Time {
	d := l.Deadline(ratelimit.CategoryAll)
	for _, c := range categories[g] {
		d = later(d, l.Deadline(c))
	}
	return d
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
