// Package account records the fate of items: the Sentry data categories
// and per-category counts, the reasons an item was not stored, the per-DSN
// tally of discards that goes into client reports, and the [Accountant]
// that records every item's fate in the exporter's metrics.
//
// Its one job is accounting, so that every item is counted by category and
// reason the same way everywhere. It must not decide a drop, send, encode or
// gate anything itself: callers decide, and tell the Accountant, the one
// place that records an item's fate. Only the Accountant touches the
// collector's telemetry (internal/metadata); the vocabulary (Category,
// Counts, Reason, ClientReports) imports no collector types. It
// imports nothing above it.
package account
