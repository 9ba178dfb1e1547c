package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"time"

	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// category indexes the Sentry data categories this exporter produces, so
// counts live in fixed arrays and a drop allocates nothing.
type category uint8

const (
	catError category = iota
	catTransaction
	catSpan
	catLogItem
	catLogByte
	numCategories
)

// wire is the data-category name on the wire, in metrics and in client reports.
func (c category) wire() ratelimit.Category {
	return [numCategories]ratelimit.Category{
		ratelimit.CategoryError, ratelimit.CategoryTransaction, ratelimit.CategorySpan,
		ratelimit.CategoryLogItem, ratelimit.CategoryLogByte,
	}[c]
}

// counts holds a quantity per data category; log_byte is in bytes.
type counts [numCategories]int64

func (c *counts) add(o counts) {
	for i := range c {
		c[i] += o[i]
	}
}

func (c counts) isZero() bool { return c == counts{} }

// gate is the rate-limit check an envelope must pass before it is sent.
type gate uint8

const (
	gateError gate = iota
	gateTransaction
	gateSpan
	gateLogs     // log_item or log_byte, as Relay enforces
	gateInternal // client reports: only an all-category limit blocks them
	numGates
)

// deadline is the end of the latest limit that applies to g: its category's,
// or the all-category one (log containers: log_item's or log_byte's).
func (g gate) deadline(l ratelimit.Limits) time.Time {
	switch g {
	case gateError:
		return l.Deadline(ratelimit.CategoryError)
	case gateTransaction:
		return l.Deadline(ratelimit.CategoryTransaction)
	case gateSpan:
		return l.Deadline(ratelimit.CategorySpan)
	case gateInternal:
		return l.Deadline(ratelimit.CategoryAll)
	default:
		a, b := l.Deadline(ratelimit.CategoryLogItem), l.Deadline(ratelimit.CategoryLogByte)
		if a.After(b) {
			return a
		}
		return b
	}
}

// limited reports whether l blocks envelopes behind g at now.
func (g gate) limited(l ratelimit.Limits, now time.Time) bool { return g.deadline(l).After(now) }
