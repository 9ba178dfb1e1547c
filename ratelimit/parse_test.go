package ratelimit

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

const day = int64(86400) // MaxRetryAfter in seconds

// parseCases are TestParse's X-Sentry-Rate-Limits headers and what they parse to.
var parseCases = []struct {
	name   string
	header string
	want   secs
	capped bool
}{
	// Relay relay-server/src/utils/rate_limits.rs test_parse_invalid_rate_limits.
	{"empty header", "", secs{}, false},
	{"no retry_after", "invalid", secs{}, false},
	{"only commas", ",,,", secs{}, false},
	// sentry-go internal/ratelimit/rate_limits_test.go.
	{"comma", ",", secs{}, false},
	{"blank groups", ",  ,   ,     ,", secs{}, false},
	{"colon", ":", secs{}, false},
	{"colons", ":::", secs{}, false},
	{"colons and commas", "::,,:,", secs{}, false},
	{"semicolons", ":,:;;;:", secs{}, false},
	{"all colons", ":::::", secs{}, false},

	// Relay test_parse_rate_limits: "invalid" is skipped, "foobar" ignored.
	{
		"relay example", "42::organization:my_limit, invalid, 4711:foobar;transaction;security:project",
		secs{CategoryAll: 42, CategoryTransaction: 4711, CategorySecurity: 4711},
		false,
	},
	// sentry-protocol.md §5, Relay's formatter output.
	{
		"two groups", "60:transaction:key, 2700:default;error;security:organization",
		secs{CategoryTransaction: 60, CategoryDefault: 2700, CategoryError: 2700, CategorySecurity: 2700},
		false,
	},
	{"reject all", "60::organization", secs{CategoryAll: 60}, false},

	// Empty category list = all categories.
	{"retry_after only", "1", secs{CategoryAll: 1}, false},
	{"scope and reason ignored", "2::ignored_scope:ignored_reason", secs{CategoryAll: 2}, false},
	{"empty names skipped", "3:;;:key", secs{CategoryAll: 3}, false},
	{"blank names skipped", "4: ; :key", secs{CategoryAll: 4}, false},

	// Categories.
	{"one category", "4:error", secs{CategoryError: 4}, false},
	{"two categories", "5:error;transaction", secs{CategoryError: 5, CategoryTransaction: 5}, false},
	{"two groups, two categories", "6:error, 7:transaction", secs{CategoryError: 6, CategoryTransaction: 7}, false},
	{"span is known", "60:span", secs{CategorySpan: 60}, false},
	{"log_byte is known", "60:log_byte", secs{CategoryLogByte: 60}, false},
	{"log_item and log_byte", "60:log_item;log_byte", secs{CategoryLogItem: 60, CategoryLogByte: 60}, false},
	{"feedback alias", "60:user_report_v2", secs{CategoryFeedback: 60}, false},
	{"unknown category ignored", "8:error;unknown", secs{CategoryError: 8}, false},
	{"all unknown is not all", "9:foobar;baz", secs{}, false},
	{"internal is not a Relay name", "10:internal", secs{}, false},
	{"names are exact", "60:ERROR", secs{}, false},
	{"indexed is not enforced", "11:transaction_indexed", secs{}, false},
	{"indexed beside span", "12:span_indexed;span", secs{CategorySpan: 12}, false},
	{"profile_indexed", "13:profile_indexed", secs{}, false},
	// Relay test_format_rate_limits: namespaces are read by Relay only.
	{"namespaces ignored", "42:metric_bucket:organization:my_limit:custom;spans", secs{CategoryMetricBucket: 42}, false},
	{"future fields ignored", "60:error:key:reason:ns:future:more", secs{CategoryError: 60}, false},
	{"whitespace trimmed", "  60 : error ; span : key  ", secs{CategoryError: 60, CategorySpan: 60}, false},

	// Later deadline wins within one header (sentry-go rate_limits_test.go).
	{"later wins", "30:error:scope1, 20:error:scope2, 40:error", secs{CategoryError: 40}, false},
	{"later wins, earlier last", "40:error, 20:error", secs{CategoryError: 40}, false},
	{"all beside a category", "30:error:scope1, 20:error:scope2, 40::", secs{CategoryAll: 40, CategoryError: 30}, false},
	{"all twice", "40::, 50::, 45::", secs{CategoryAll: 50}, false},

	// retry_after: Relay RetryAfter::from_str and test_parse_retry_after
	// (relay-quotas/src/rate_limit.rs): f64, max(0), ceil.
	{"float rounds up", "17.7:error", secs{CategoryError: 18}, false},
	{"small fraction rounds up", "0.0001:error", secs{CategoryError: 1}, false},
	{"float without fraction", "5.0:error", secs{CategoryError: 5}, false},
	{"exponent", "1e2:error", secs{CategoryError: 100}, false},
	{"zero", "0:error", secs{CategoryError: 0}, false},
	{"negative is zero", "-2:error", secs{CategoryError: 0}, false},
	{"negative fraction is zero", "-5.5:error", secs{CategoryError: 0}, false},
	{"nan is zero", "nan:span", secs{CategorySpan: 0}, false},
	{"-inf is zero", "-inf:error", secs{CategoryError: 0}, false},
	{"underflow is zero", "1e-400:error", secs{CategoryError: 0}, false},
	{"unparsable skipped", "x:error, 60:span", secs{CategorySpan: 60}, false},
	{"hex refused as Relay does", "0x1p4:error", secs{}, false},
	{"underscore refused as Relay does", "1_0:error", secs{}, false},
	{"inner space refused", "6 0:error", secs{}, false},

	// Clamping to MaxRetryAfter, in float seconds before any Duration.
	{"exactly max", "86400::", secs{CategoryAll: day}, false},
	{"just over max", "86400.5::", secs{CategoryAll: day}, true},
	{"sentry-go wraps to 0.29 s", "18446744074::", secs{CategoryAll: day}, true},
	{"sentry-go wraps to 49 years", "20000000000:error", secs{CategoryError: day}, true},
	{"1e12", "1e12::", secs{CategoryAll: day}, true},
	{"out of float range", "1e400::", secs{CategoryAll: day}, true},
	{"inf", "inf:error", secs{CategoryError: day}, true},
	{"infinity", "Infinity:error", secs{CategoryError: day}, true},
	{"capped only if applied", "1e12:foobar, 60:error", secs{CategoryError: 60}, false},
	{"capped indexed not applied", "1e12:span_indexed", secs{}, false},
}

func TestParse(t *testing.T) {
	for _, tt := range parseCases {
		t.Run(tt.name, func(t *testing.T) {
			l, capped := Parse(tt.header, now)
			assert.Equal(t, tt.want, toSecs(t, l), "header %q", tt.header)
			assert.Equal(t, tt.capped, capped, "capped")
			assert.Equal(t, len(tt.want) == 0, l.Empty(), "Empty")
		})
	}
}

// TestParseMerge checks that the groups of one header combine exactly as
// separate headers merged: Parse(a+", "+b) == Parse(a).Merge(Parse(b)).
func TestParseMerge(t *testing.T) {
	headers := []string{
		"", "60::", "30:error", "90:error;span", "10:log_byte, 20:log_item",
		"1e12::", "nan:span", "5:foobar", "120:transaction:key:reason",
	}
	for _, a := range headers {
		for _, b := range headers {
			joined, jc := Parse(a+", "+b, now)
			la, ca := Parse(a, now)
			lb, cb := Parse(b, now)
			merged := la.Merge(lb)
			assert.True(t, joined.Equal(merged), "%q + %q: %v != %v", a, b, joined, merged)
			assert.Equal(t, joined, merged, "%q + %q: canonical form", a, b)
			assert.Equal(t, ca || cb, jc, "%q + %q: capped", a, b)
		}
	}
}

func TestParseManyCategories(t *testing.T) {
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	l, _ := Parse("60:"+strings.Join(names, ";"), now)
	l.Each(func(c Category, _ time.Time) {
		assert.True(t, c.Enforced(), "%q", c)
	})
	for _, c := range []Category{CategoryError, CategorySpan, CategoryLogByte, CategoryTraceMetric} {
		assert.True(t, l.Active(c, now), "%q", c)
	}
}
