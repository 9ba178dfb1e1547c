package ratelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// now is the fixed instant every test receives its responses at.
var now = time.Date(2008, 5, 12, 16, 26, 19, 0, time.UTC)

// secs describes Limits as whole seconds from now per category, with
// CategoryAll for the limit on all categories. It makes tables read like the
// header they test.
type secs map[Category]int64

// toSecs turns l into secs, failing tb if a deadline is not a whole number of
// seconds after now.
func toSecs(tb testing.TB, l Limits) secs {
	tb.Helper()
	got := secs{}
	l.Each(func(c Category, d time.Time) {
		off := d.Sub(now)
		require.Zero(tb, off%time.Second, "%s: %v is not whole seconds from now", c, d)
		got[c] = int64(off / time.Second)
	})
	return got
}

// fromSecs builds the Limits that s describes.
func fromSecs(s secs) Limits {
	var l Limits
	for c, n := range s {
		d := now.Add(time.Duration(n) * time.Second)
		if c == CategoryAll {
			l = l.Merge(Limits{all: d})
		} else {
			l = l.Merge(Limits{entries: []entry{{c, d}}})
		}
	}
	return l
}
