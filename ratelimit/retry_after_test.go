package ratelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseRetryAfter(t *testing.T) {
	ceiling := now.Add(MaxRetryAfter)
	tests := []struct {
		name   string
		value  string
		want   time.Time // ignored unless ok
		ok     bool
		capped bool
	}{
		// Not a Retry-After: the caller falls back to DefaultRetryAfter.
		{"empty", "", time.Time{}, false, false},
		{"blank", "   ", time.Time{}, false, false},
		{"word", "x", time.Time{}, false, false},
		{"nan", "NaN", time.Time{}, false, false},
		{"inner space", "6 0", time.Time{}, false, false},
		{"bad date", "Mon, 32 May 2008 16:27:19 GMT", time.Time{}, false, false},

		// delay-seconds, as an integer (RFC 9110 §10.2.3) or, like Relay's
		// retry_after, a float rounded up.
		{"zero", "0", now, true, false},
		{"integer", "1337", now.Add(1337 * time.Second), true, false},
		{"padded", " 60 ", now.Add(60 * time.Second), true, false},
		{"float", "5.0", now.Add(5 * time.Second), true, false},
		{"float rounds up", "5.2", now.Add(6 * time.Second), true, false},
		{"negative is now", "-1", now, true, false},
		{"exactly max", "86400", ceiling, true, false},
		{"over max", "86401", ceiling, true, true},
		{"1e12", "1e12", ceiling, true, true},
		{"sentry-go wraps", "18446744074", ceiling, true, true},
		{"out of float range", "1e400", ceiling, true, true},
		{"inf", "+Inf", ceiling, true, true},

		// HTTP-date in the three formats of RFC 9110 §5.6.7, via http.ParseTime.
		{"IMF-fixdate", "Mon, 12 May 2008 16:27:19 GMT", now.Add(time.Minute), true, false},
		{"RFC 850", "Monday, 12-May-08 16:27:19 GMT", now.Add(time.Minute), true, false},
		{"ANSI C asctime", "Mon May 12 16:27:19 2008", now.Add(time.Minute), true, false},
		{"date now", "Mon, 12 May 2008 16:26:19 GMT", now, true, false},
		{"date in the past", "Sat, 12 May 2007 16:26:19 GMT", now, true, false},
		{"year 1", "Mon, 01 Jan 0001 00:00:00 GMT", now, true, false},
		{"sentry-go test date, 11 years on", "Fri, 08 Mar 2019 11:17:09 GMT", ceiling, true, true},
		{"date exactly max", "Tue, 13 May 2008 16:26:19 GMT", ceiling, true, false},
		{"date a second over max", "Tue, 13 May 2008 16:26:20 GMT", ceiling, true, true},
		{"date in two days", "Wed, 14 May 2008 16:26:19 GMT", ceiling, true, true},
		{"year 9999", "Fri, 31 Dec 9999 23:59:59 GMT", ceiling, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, capped := ParseRetryAfter(tt.value, now)
			assert.Equal(t, tt.ok, ok, "ok")
			assert.Equal(t, tt.capped, capped, "capped")
			if tt.ok {
				assert.True(t, tt.want.Equal(got), "got %v, want %v", got, tt.want)
			} else {
				assert.True(t, got.IsZero(), "got %v, want zero", got)
			}
		})
	}
}
