package ratelimit

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultRetryAfter is how long all categories are limited after a 429 that
// carries no usable X-Sentry-Rate-Limits or Retry-After, as in sentry-go and
// develop-docs sdk/foundations/transport/rate-limiting.mdx.
const DefaultRetryAfter = 60 * time.Second

// MaxRetryAfter bounds every deadline this package returns. A retry_after of
// 1e12 s, +Inf, or a Retry-After in the year 9999 is a bug or corruption, not a
// quota: unbounded, it would silence a category for good, and converting it to
// a Duration can overflow. Relay's real limits are far shorter; should a
// genuine one be longer, the cost of clamping is one request a day, which
// Relay answers with a fresh limit.
const MaxRetryAfter = 24 * time.Hour

// HeaderRetryAfter is the standard HTTP header Sentry sends with a 429.
const HeaderRetryAfter = "Retry-After"

// ParseRetryAfter reads a Retry-After header value received at now. It accepts
// delay-seconds, as an integer or a float rounded up, and an HTTP-date in any
// of the three formats http.ParseTime knows (RFC 1123, RFC 850, ANSI C). The
// deadline is clamped to [now, now+MaxRetryAfter]; capped reports that it was
// over the maximum. ok is false if the value is empty, NaN or neither form.
func ParseRetryAfter(value string, now time.Time) (deadline time.Time, ok, capped bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return time.Time{}, false, false
	}
	if seconds, ok := parseSeconds(value); ok {
		if math.IsNaN(seconds) {
			return time.Time{}, false, false
		}
		d, capped := clampSeconds(seconds)
		return now.Add(d), true, capped
	}
	date, err := http.ParseTime(value)
	if err != nil {
		return time.Time{}, false, false
	}
	switch d := date.Sub(now); { // Sub saturates, so year 9999 cannot wrap
	case d <= 0:
		return now, true, false
	case d > MaxRetryAfter:
		return now.Add(MaxRetryAfter), true, true
	default:
		// Keep now's monotonic reading and location, as for delay-seconds.
		return now.Add(d), true, false
	}
}

// parseSeconds parses a retry_after the way Rust's f64::from_str does, which
// Relay uses: decimal numbers, inf, infinity and nan, with an optional sign.
// A number too large for a float64 is +Inf or -Inf, not an error. Go syntax
// that Rust rejects (hex floats, underscores) is refused.
func parseSeconds(s string) (float64, bool) {
	if strings.ContainsAny(s, "xX_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// clampSeconds converts seconds to a Duration in [0, MaxRetryAfter], rounding
// up. It clamps in float seconds before converting, so no input overflows:
// converting first, as sentry-go does, wraps 18446744074 s to about 0.29 s.
// NaN and negative values are 0, as in Relay. capped reports clamping at the
// maximum.
func clampSeconds(seconds float64) (d time.Duration, capped bool) {
	switch {
	case math.IsNaN(seconds) || seconds <= 0:
		return 0, false
	case seconds > MaxRetryAfter.Seconds():
		return MaxRetryAfter, true
	}
	return time.Duration(math.Ceil(seconds)) * time.Second, false
}
