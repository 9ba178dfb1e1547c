package account

import (
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// Category indexes the Sentry data categories this exporter produces, so
// counts live in fixed arrays and a drop allocates nothing.
type Category uint8

const (
	CatError Category = iota
	CatTransaction
	CatSpan
	CatLogItem
	CatLogByte
	CatTraceMetric
	CatTraceMetricByte
	// A profile chunk counts in one of two pairs, by its platform's profile
	// type (Relay's ProfileType::from_platform): profile_chunk and
	// profile_duration (milliseconds) for a backend platform,
	// profile_chunk_ui and profile_duration_ui for a UI one.
	CatProfileChunk
	CatProfileChunkUI
	CatProfileDuration
	CatProfileDurationUI
	NumCategories
)

// Wire is the data-category name on the wire, in metrics and in client reports.
func (c Category) Wire() ratelimit.Category {
	return [NumCategories]ratelimit.Category{
		ratelimit.CategoryError, ratelimit.CategoryTransaction, ratelimit.CategorySpan,
		ratelimit.CategoryLogItem, ratelimit.CategoryLogByte, ratelimit.CategoryTraceMetric,
		ratelimit.CategoryTraceMetricByte, ratelimit.CategoryProfileChunk, ratelimit.CategoryProfileChunkUI,
		ratelimit.CategoryProfileDuration, ratelimit.CategoryProfileDurationUI,
	}[c]
}

// Counts holds a quantity per data category; log_byte and trace_metric_byte
// are in bytes (each item's serialized JSON), profile_duration and profile_duration_ui in milliseconds.
type Counts [NumCategories]int64
