package ratelimit

import (
	"testing"
	"time"
)

// FuzzParse checks properties, not values: no panic, every deadline within
// [now, now+MaxRetryAfter] and on a whole second, and the groups of one header
// combine as separate headers merged.
func FuzzParse(f *testing.F) {
	for _, seed := range [][2]string{
		{"60:transaction:key, 2700:default;error;security:organization", "60::organization"},
		{"42::organization:my_limit, invalid, 4711:foobar;transaction;security:project", ""},
		{"18446744074::", "20000000000:error"}, // sentry-go's arithmetic wraps these
		{"1e400::", "-1e400:span"},
		{"-5:error", "nan:span"},
		{":::::", ",,,"},
		{"60:span", "60:log_byte"},
		{"17.7:error;transaction", "3:;;:key"},
		{"42:metric_bucket:organization:my_limit:custom;spans", "1_0:error"},
		{"inf:transaction_indexed;span", "0x1p4:error"},
		{"86401:error", "100000:span"}, // just over MaxRetryAfter: the clamp, not only the overflow guard
	} {
		f.Add(seed[0], seed[1])
	}
	ceiling := now.Add(MaxRetryAfter)
	f.Fuzz(func(t *testing.T, a, b string) {
		la, ca := Parse(a, now)
		lb, cb := Parse(b, now)
		joined, cj := Parse(a+", "+b, now)
		for _, l := range []Limits{la, lb, joined} {
			l.Each(func(c Category, d time.Time) {
				if d.Before(now) || d.After(ceiling) {
					t.Fatalf("%q: deadline %v outside [now, now+MaxRetryAfter]", c, d)
				}
				if d.Sub(now)%time.Second != 0 {
					t.Fatalf("%q: deadline %v not on a whole second", c, d)
				}
				if c != CategoryAll && !c.Enforced() {
					t.Fatalf("%q: category is not enforced", c)
				}
			})
		}
		if merged := la.Merge(lb); !joined.Equal(merged) {
			t.Fatalf("Parse(a+\", \"+b) = %v, Parse(a).Merge(Parse(b)) = %v", joined, merged)
		}
		if la.covers(lb) != la.Merge(lb).Equal(la) {
			t.Fatalf("covers(%v, %v) disagrees with Merge", la, lb)
		}
		if cj != (ca || cb) {
			t.Fatalf("capped: joined %v, a %v, b %v", cj, ca, cb)
		}
	})
}

// FuzzParseRetryAfter checks that no Retry-After escapes [now, now+MaxRetryAfter].
func FuzzParseRetryAfter(f *testing.F) {
	for _, seed := range []string{
		"120", "5.2", "-1", "NaN", "1e400", "18446744074", "86401", "100000", // the last two just over MaxRetryAfter
		"Mon, 12 May 2008 16:27:19 GMT", "Monday, 12-May-08 16:27:19 GMT",
		"Mon May 12 16:27:19 2008", "Fri, 31 Dec 9999 23:59:59 GMT",
	} {
		f.Add(seed)
	}
	ceiling := now.Add(MaxRetryAfter)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok, capped := ParseRetryAfter(v, now)
		if !ok {
			if !d.IsZero() || capped {
				t.Fatalf("not ok, yet deadline %v, capped %v", d, capped)
			}
			return
		}
		if d.Before(now) || d.After(ceiling) {
			t.Fatalf("deadline %v outside [now, now+MaxRetryAfter]", d)
		}
		if capped && !d.Equal(ceiling) {
			t.Fatalf("capped at %v, not at now+MaxRetryAfter", d)
		}
	})
}
