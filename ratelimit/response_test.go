package ratelimit

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The headers TestFromResponse's cases set.
const (
	rateLimits = HeaderRateLimits
	retryAfter = HeaderRetryAfter
)

// fromResponseCases are TestFromResponse's answers and the limits each gives.
var fromResponseCases = []struct {
	name   string
	status int
	header http.Header
	want   secs
	capped bool
}{
	{"200 no headers", 200, nil, secs{}, false},
	{"200 Retry-After ignored", 200, http.Header{retryAfter: {"100"}}, secs{}, false},
	{
		"200 X-Sentry-Rate-Limits honored", 200,
		http.Header{rateLimits: {"50:transaction"}},
		secs{CategoryTransaction: 50},
		false,
	},
	{"200 reject all", 200, http.Header{rateLimits: {"60::organization"}}, secs{CategoryAll: 60}, false},
	{
		"200 both, Retry-After ignored", 200,
		http.Header{rateLimits: {"50:transaction"}, retryAfter: {"100"}},
		secs{CategoryTransaction: 50},
		false,
	},
	{
		"200 unusable X-Sentry-Rate-Limits", 200,
		http.Header{rateLimits: {"50:foobar"}, retryAfter: {"100"}},
		secs{},
		false,
	},
	{"200 capped", 200, http.Header{rateLimits: {"1e12:span"}}, secs{CategorySpan: day}, true},
	{"413 X-Sentry-Rate-Limits honored", 413, http.Header{rateLimits: {"50:error"}}, secs{CategoryError: 50}, false},
	{"503 Retry-After ignored", 503, http.Header{retryAfter: {"100"}}, secs{}, false},

	{"429 no headers: 60 s for all", 429, nil, secs{CategoryAll: 60}, false},
	{"429 Retry-After", 429, http.Header{retryAfter: {"100"}}, secs{CategoryAll: 100}, false},
	{
		"429 Retry-After HTTP-date", 429,
		http.Header{retryAfter: {"Mon, 12 May 2008 16:28:19 GMT"}},
		secs{CategoryAll: 120},
		false,
	},
	{"429 Retry-After unparsable", 429, http.Header{retryAfter: {"soon"}}, secs{CategoryAll: 60}, false},
	{"429 Retry-After capped", 429, http.Header{retryAfter: {"1e12"}}, secs{CategoryAll: day}, true},
	{"429 X-Sentry-Rate-Limits", 429, http.Header{rateLimits: {"50:error"}}, secs{CategoryError: 50}, false},
	{
		"429 both, Retry-After ignored", 429,
		http.Header{rateLimits: {"50:error"}, retryAfter: {"100"}},
		secs{CategoryError: 50},
		false,
	},
	{
		"429 zero seconds still wins", 429,
		http.Header{rateLimits: {"0:error"}, retryAfter: {"100"}},
		secs{CategoryError: 0},
		false,
	},

	// A 429 always yields a limit.
	{
		"429 all-unknown falls back to Retry-After", 429,
		http.Header{rateLimits: {"50:foobar"}, retryAfter: {"100"}},
		secs{CategoryAll: 100},
		false,
	},
	{"429 all-unknown falls back to 60 s", 429, http.Header{rateLimits: {"50:foobar"}}, secs{CategoryAll: 60}, false},
	{"429 empty value falls back", 429, http.Header{rateLimits: {""}, retryAfter: {"100"}}, secs{CategoryAll: 100}, false},
	{"429 malformed falls back", 429, http.Header{rateLimits: {"soon:error"}}, secs{CategoryAll: 60}, false},
	{
		"429 indexed only falls back", 429,
		http.Header{rateLimits: {"50:transaction_indexed"}, retryAfter: {"100"}},
		secs{CategoryAll: 100},
		false,
	},

	{
		"several header lines are one list", 200,
		http.Header{rateLimits: {"50:error", "70:span, 60:error"}},
		secs{CategoryError: 60, CategorySpan: 70},
		false,
	},
}

// TestFromResponse mirrors sentry-go's TestFromResponse (internal/ratelimit/map_test.go)
// and the precedence of develop-docs sdk/foundations/transport/rate-limiting.mdx.
func TestFromResponse(t *testing.T) {
	for _, tt := range fromResponseCases {
		t.Run(tt.name, func(t *testing.T) {
			l, capped := FromResponse(tt.status, tt.header, now)
			assert.Equal(t, tt.want, toSecs(t, l))
			assert.Equal(t, tt.capped, capped, "capped")
		})
	}
}
