// Package ratelimit parses Sentry's rate limits and holds them per DSN.
//
// Relay answers an envelope with an X-Sentry-Rate-Limits header on any
// status, 200 included, and with Retry-After on a 429:
//
//	X-Sentry-Rate-Limits: 60:transaction:key, 2700:default;error;security:organization
//
// Each comma-separated quota limit is retry_after:categories:scope[:reason_code[:namespaces]].
// An empty category list limits all categories. [FromResponse] applies the
// precedence of develop-docs sdk/foundations/transport/rate-limiting.mdx:
// X-Sentry-Rate-Limits on any status, else Retry-After on a 429, else 60 s on a
// 429. [Limits] is an immutable value that maps each data category to the
// instant its rate limit expires; merging keeps the later deadline, as Relay's
// RateLimits::add keeps the longer limit (relay-quotas/src/rate_limit.rs).
// [State] holds the current Limits of one DSN for lock-free reads on the drop
// path.
//
// The parsers are forgiving, like Relay's parse_rate_limits
// (relay-server/src/utils/rate_limits.rs): a malformed quota limit is skipped,
// and the header never fails as a whole.
//
// Nothing here reads the clock. Every function takes now, so the caller owns
// time and tests use a fixed instant.
//
// This package improves on sentry-go's internal/ratelimit in three ways: it
// knows every category Relay names (sentry-go silently ignores span and
// log_byte limits), it clamps retry_after in float seconds before converting to
// a Duration (sentry-go's arithmetic wraps 18446744074 s to about 0.29 s), and
// it parses every HTTP-date format of Retry-After.
package ratelimit
