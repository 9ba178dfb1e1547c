// Package account names and tallies the fate of items: the Sentry data
// categories and per-category counts, the reasons an item was not stored,
// the rate-limit gate an envelope must pass, and the per-DSN tally of
// discards that goes into client reports.
//
// Its one job is the vocabulary of accounting, so that every drop is counted
// by category and reason the same way everywhere. It must not decide a drop,
// send, encode or gate anything itself, and it must not record metrics: the
// exporter's accountant is the one place that records an item's fate. It
// imports no collector types and nothing above it.
package account
