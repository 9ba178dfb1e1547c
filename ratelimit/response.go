package ratelimit

import (
	"net/http"
	"strings"
	"time"
)

// FromResponse returns the rate limits a Sentry response announces, received
// at now. It follows develop-docs sdk/foundations/transport/rate-limiting.mdx:
//
//   - X-Sentry-Rate-Limits is honored on any status, 200 included, and then
//     Retry-After is not read. Several header lines are read as one list.
//   - On a 429 without it, Retry-After limits all categories.
//   - On a 429 with neither, all categories are limited for DefaultRetryAfter.
//
// A 429 always yields a limit: if X-Sentry-Rate-Limits is present but yields
// nothing (every quota limit malformed or naming only unknown categories), the
// 429 falls back to Retry-After and then to DefaultRetryAfter. A quota limit
// of 0 s is still a limit Relay sent, so it does not fall back. capped reports
// that a value was clamped to MaxRetryAfter.
func FromResponse(status int, h http.Header, now time.Time) (l Limits, capped bool) {
	if values := h.Values(HeaderRateLimits); len(values) > 0 {
		l, capped = Parse(strings.Join(values, ","), now)
		if !l.Empty() || status != http.StatusTooManyRequests {
			return l, capped
		}
	}
	if status != http.StatusTooManyRequests {
		return Limits{}, false
	}
	deadline, ok, capped := ParseRetryAfter(h.Get(HeaderRetryAfter), now)
	if !ok {
		deadline = now.Add(DefaultRetryAfter)
	}
	return Limits{all: deadline}, capped
}
