package ratelimit

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// HeaderRateLimits is the response header that carries Sentry's rate limits.
const HeaderRateLimits = "X-Sentry-Rate-Limits"

// Parse reads the value of an X-Sentry-Rate-Limits header received at now.
//
// Quota limits are separated by commas; surrounding whitespace and empty
// entries are skipped. Of each, only retry_after and categories are read; the
// scope, reason code, namespaces and any later fields are ignored. retry_after
// is seconds as an integer or float: a negative value or NaN counts as 0, a
// fraction rounds up, and a value over MaxRetryAfter is clamped to it (capped
// is then true). A quota limit whose retry_after does not parse is skipped.
// Categories are separated by semicolons and matched by exact name; an empty
// list means all categories. Unknown names are ignored, and a quota limit that
// names only unknown categories is ignored as a whole, never taken for all
// categories. Categories that are not Enforced are dropped likewise. Where
// deadlines meet, the later one wins.
//
// This mirrors parse_rate_limits in Relay's relay-server/src/utils/rate_limits.rs
// and RetryAfter::from_str in relay-quotas/src/rate_limit.rs.
func Parse(header string, now time.Time) (l Limits, capped bool) {
	l, _, c := parse(header, now)
	return l, c.limits
}

// parseCapped says which of parse's results hold a value clamped to
// MaxRetryAfter.
type parseCapped struct{ limits, longest bool }

// parse is Parse that also returns the latest deadline of any quota limit
// whose retry_after parsed, whatever its categories (zero if none did): the
// header's time, which FromResponse gives a refused envelope's categories
// when the header names none of them.
func parse(header string, now time.Time) (l Limits, longest time.Time, capped parseCapped) {
	for group := range strings.SplitSeq(header, ",") {
		retryAfter, categories, ok := parseGroup(strings.TrimSpace(group))
		if !ok {
			continue
		}
		d, clamped := clampSeconds(retryAfter)
		if deadline := now.Add(d); deadline.After(longest) {
			longest, capped.longest = deadline, clamped
		}
		if l.add(categories, now.Add(d)) && clamped {
			capped.limits = true
		}
	}
	slices.SortFunc(l.entries, func(a, b entry) int { return cmp.Compare(a.category, b.category) })
	return l, longest, capped
}

// parseGroup splits one quota limit into its retry_after in seconds and its
// category list. ok is false for an empty entry or an unparsable retry_after.
func parseGroup(group string) (seconds float64, categories string, ok bool) {
	if group == "" {
		return 0, "", false
	}
	retryAfter, rest, _ := strings.Cut(group, ":")
	seconds, ok = parseSeconds(strings.TrimSpace(retryAfter))
	categories, _, _ = strings.Cut(rest, ":")
	return seconds, categories, ok
}

// add sets deadline for each Enforced category in the ';'-separated list, or
// for all categories if the list names none. It keeps the later deadline and
// leaves l.entries unsorted. It reports whether it set anything.
func (l *Limits) add(categories string, deadline time.Time) bool {
	named, set := false, false
	for name := range strings.SplitSeq(categories, ";") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		named = true
		c, ok := lookup(name)
		if !ok || !c.Enforced() {
			continue
		}
		set = true
		if i := slices.IndexFunc(l.entries, func(e entry) bool { return e.category == c }); i >= 0 {
			l.entries[i].deadline = later(l.entries[i].deadline, deadline)
		} else {
			l.entries = append(l.entries, entry{c, deadline})
		}
	}
	if !named {
		l.all = later(l.all, deadline)
		return true
	}
	return set
}
