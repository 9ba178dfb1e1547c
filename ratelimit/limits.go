package ratelimit

import (
	"slices"
	"strings"
	"time"
)

// Limits maps data categories to the instants their rate limits expire, plus
// one deadline for all categories. It is an immutable value: Merge returns a
// new one, so a reader never sees half an update. The zero value limits
// nothing. Compare two Limits with Equal.
type Limits struct {
	all     time.Time // deadline for all categories; zero if none
	entries []entry   // sorted by category, unique, never modified once built
}

// entry is the deadline of one category.
type entry struct {
	category Category
	deadline time.Time
}

// Empty reports whether l holds no deadline at all, expired or not.
func (l Limits) Empty() bool {
	return l.all.IsZero() && len(l.entries) == 0
}

// Deadline returns the instant at which items of category c may be sent again:
// the later of c's own deadline and the one for all categories. It is the zero
// time if neither exists. Deadline(CategoryAll) is the all-categories deadline.
func (l Limits) Deadline(c Category) time.Time {
	d := l.all
	if c == CategoryAll {
		return d
	}
	for _, e := range l.entries {
		if e.category >= c {
			if e.category == c && e.deadline.After(d) {
				d = e.deadline
			}
			break
		}
	}
	return d
}

// Active reports whether items of category c must be dropped at now. A limit
// on all categories counts for every category.
func (l Limits) Active(c Category, now time.Time) bool {
	return l.Deadline(c).After(now)
}

// Each calls f for every deadline in l, expired ones included: first
// CategoryAll if there is a limit on all categories, then each category in
// name order. It is meant for metrics and logs.
func (l Limits) Each(f func(c Category, deadline time.Time)) {
	if !l.all.IsZero() {
		f(CategoryAll, l.all)
	}
	for _, e := range l.entries {
		f(e.category, e.deadline)
	}
}

// Merge returns the union of l and o. Where both hold a deadline for the same
// category, the later one wins, as in Relay's RateLimits::merge
// (relay-quotas/src/rate_limit.rs). Neither l nor o is modified.
func (l Limits) Merge(o Limits) Limits {
	out := Limits{all: later(l.all, o.all)}
	switch {
	case len(o.entries) == 0:
		out.entries = l.entries
	case len(l.entries) == 0:
		out.entries = o.entries
	default:
		out.entries = mergeEntries(l.entries, o.entries)
	}
	return out
}

// covers reports whether l already holds every deadline of o, at the same
// instant or later, so that l.Merge(o) would be Equal to l. It does not
// allocate, which lets State skip a write.
func (l Limits) covers(o Limits) bool {
	if o.all.After(l.all) {
		return false
	}
	i := 0
	for _, e := range o.entries {
		for i < len(l.entries) && l.entries[i].category < e.category {
			i++
		}
		if i == len(l.entries) || l.entries[i].category != e.category || e.deadline.After(l.entries[i].deadline) {
			return false
		}
	}
	return true
}

// Equal reports whether l and o hold the same deadlines.
func (l Limits) Equal(o Limits) bool {
	return l.all.Equal(o.all) && slices.EqualFunc(l.entries, o.entries, func(a, b entry) bool {
		return a.category == b.category && a.deadline.Equal(b.deadline)
	})
}

// String formats l for debugging, for example
// "all until 2008-05-12T16:27:19Z, error until 2008-05-12T17:11:19Z".
func (l Limits) String() string {
	var b strings.Builder
	l.Each(func(c Category, d time.Time) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Label())
		b.WriteString(" until ")
		b.WriteString(d.Format(time.RFC3339Nano))
	})
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// mergeEntries merges two sorted entry lists into a new one, keeping the later
// deadline of a category found in both.
func mergeEntries(a, b []entry) []entry {
	out := make([]entry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].category < b[0].category:
			out, a = append(out, a[0]), a[1:]
		case a[0].category > b[0].category:
			out, b = append(out, b[0]), b[1:]
		default:
			out = append(out, entry{a[0].category, later(a[0].deadline, b[0].deadline)})
			a, b = a[1:], b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// later returns the later of two deadlines; a zero time is earlier than any.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
