// Package sentryexporter sends OTLP spans and logs to Sentry as envelopes.
//
// It honours Sentry's per-category rate limits by dropping, never queueing,
// and counts every item it could not deliver in
// otelcol_exporter_sentry_dropped_items by data category and reason.
//
//go:generate make generate
package sentryexporter
