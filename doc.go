// Package sentryexporter sends OTLP spans, logs, metrics and profiles to
// Sentry as envelopes.
//
// It honors Sentry's per-category rate limits by dropping, never queueing,
// and counts every item it could not deliver in
// otelcol_exporter_sentry_dropped_items by data category and reason.
//
// This package is the component's face: the factory, the configuration, the
// exporter's lifecycle, routing, and the wiring of each project's pipeline.
// Each stage of the flow lives in a package of its own under internal/, named
// for its one job, whose doc comment says what it must not do; the packages
// import downward only (docs/architecture.md, house_test.go).
//
//go:generate make generate
package sentryexporter
