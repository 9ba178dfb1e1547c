// Package dsn parses a Sentry DSN into what the exporter sends with:
// the project id, the envelope URL (the DSN's own or one under `endpoint`)
// and the X-Sentry-Auth header.
//
// Its one job is reading DSNs. A DSN carries its project's key: this
// package must never put the input, or the key, into an error; callers must
// never log a DSN's PublicKey or AuthHeader (only ProjectID).
package dsn
