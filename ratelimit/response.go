package ratelimit

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// FromResponse returns the rate limits a Sentry response to an envelope
// announces, received at now; refused are the categories of that envelope's
// items (an item type's [ItemCategories]). It follows develop-docs
// sdk/foundations/transport/rate-limiting.mdx:
//
//   - X-Sentry-Rate-Limits is honored on any status, 200 included, and then
//     Retry-After is not read. Several header lines are read as one list.
//   - On a 429 without it, Retry-After limits all categories.
//   - On a 429 with neither, all categories are limited for DefaultRetryAfter.
//
// A 429 always limits the envelope it refused. If its X-Sentry-Rate-Limits
// limits none of refused (every quota limit malformed, or naming only
// categories that are not Enforced, such as ones newer than this package,
// or only other categories), refused are limited too, until the header's
// latest retry_after, else Retry-After, else DefaultRetryAfter: the refusal
// is evidence about that envelope only, and taking it for all categories
// would stop every signal of the project for a quota on one. A quota limit
// of 0 s still names its categories. capped reports that a value was
// clamped to MaxRetryAfter.
func FromResponse(status int, h http.Header, now time.Time, refused []Category) (l Limits, capped bool) {
	values := h.Values(HeaderRateLimits)
	if len(values) == 0 {
		if status != http.StatusTooManyRequests {
			return Limits{}, false
		}
		deadline, capped := retryAfterOr60(h, now)
		return Limits{all: deadline}, capped
	}
	l, longest, c := parse(strings.Join(values, ","), now)
	if status != http.StatusTooManyRequests || l.names(refused) {
		return l, c.limits
	}
	longestCapped := c.longest
	if longest.IsZero() {
		longest, longestCapped = retryAfterOr60(h, now)
	}
	fallback := limitsOn(refused, longest)
	return l.Merge(fallback), c.limits || longestCapped && !fallback.Empty()
}

// retryAfterOr60 is the deadline of a 429's Retry-After, or DefaultRetryAfter
// from now when it has none that parses.
func retryAfterOr60(h http.Header, now time.Time) (time.Time, bool) {
	deadline, ok, capped := ParseRetryAfter(h.Get(HeaderRetryAfter), now)
	if !ok {
		deadline = now.Add(DefaultRetryAfter)
	}
	return deadline, capped
}

// names reports whether l holds a deadline, expired or not, for all
// categories or for one of cs.
func (l Limits) names(cs []Category) bool {
	if !l.all.IsZero() {
		return true
	}
	for _, c := range cs {
		if !l.Deadline(c).IsZero() {
			return true
		}
	}
	return false
}

// limitsOn limits each Enforced category of cs until deadline.
func limitsOn(cs []Category, deadline time.Time) Limits {
	var l Limits
	for _, c := range cs {
		if c.Enforced() && !slices.ContainsFunc(l.entries, func(e entry) bool { return e.category == c }) {
			l.entries = append(l.entries, entry{c, deadline})
		}
	}
	slices.SortFunc(l.entries, func(a, b entry) int { return strings.Compare(string(a.category), string(b.category)) })
	return l
}
