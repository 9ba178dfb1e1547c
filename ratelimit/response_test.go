package ratelimit

import (
	"net/http"
	"slices"
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
	{"429 X-Sentry-Rate-Limits", 429, http.Header{rateLimits: {"50:trace_metric"}}, secs{CategoryTraceMetric: 50}, false},
	{
		"429 both, Retry-After ignored", 429,
		http.Header{rateLimits: {"50:trace_metric_byte"}, retryAfter: {"100"}},
		secs{CategoryTraceMetricByte: 50},
		false,
	},
	{
		"429 zero seconds still wins", 429,
		http.Header{rateLimits: {"0:trace_metric"}, retryAfter: {"100"}},
		secs{CategoryTraceMetric: 0},
		false,
	},

	// A 429 always limits what it refused, and never everything unless
	// it says so: a header that names none of the refused envelope's
	// categories limits them for its time, else Retry-After's, else 60 s.
	{
		"429 unknown category limits the refused ones for the header's time", 429,
		http.Header{rateLimits: {"60:trace_metric_bytes_v2:organization:quota_exceeded"}, retryAfter: {"100"}},
		secs{CategoryTraceMetric: 60, CategoryTraceMetricByte: 60},
		false,
	},
	{
		"429 trace_metric_byte is known", 429,
		http.Header{rateLimits: {"60:trace_metric_byte:organization:quota_exceeded"}},
		secs{CategoryTraceMetricByte: 60},
		false,
	},
	{
		"429 naming only another category also limits the refused ones", 429,
		http.Header{rateLimits: {"30:transaction, 50:foobar"}},
		secs{CategoryTransaction: 30, CategoryTraceMetric: 50, CategoryTraceMetricByte: 50},
		false,
	},
	{
		"429 empty value: Retry-After's time", 429,
		http.Header{rateLimits: {""}, retryAfter: {"100"}},
		secs{CategoryTraceMetric: 100, CategoryTraceMetricByte: 100},
		false,
	},
	{
		"429 malformed: 60 s", 429,
		http.Header{rateLimits: {"soon:error"}},
		secs{CategoryTraceMetric: 60, CategoryTraceMetricByte: 60},
		false,
	},
	{
		"429 indexed only", 429,
		http.Header{rateLimits: {"50:span_indexed"}, retryAfter: {"100"}},
		secs{CategoryTraceMetric: 50, CategoryTraceMetricByte: 50},
		false,
	},
	{
		"429 capped header time", 429,
		http.Header{rateLimits: {"1e12:foobar"}},
		secs{CategoryTraceMetric: day, CategoryTraceMetricByte: day},
		true,
	},
	{
		"429 all-category limit needs nothing more", 429,
		http.Header{rateLimits: {"50::organization"}},
		secs{CategoryAll: 50},
		false,
	},
	{
		"200 unknown category limits nothing", 200,
		http.Header{rateLimits: {"60:foobar"}},
		secs{},
		false,
	},

	{
		"several header lines are one list", 200,
		http.Header{rateLimits: {"50:error", "70:span, 60:error"}},
		secs{CategoryError: 60, CategorySpan: 70},
		false,
	},
}

// refusedTraceMetric: every case answers a trace_metric container.
var refusedTraceMetric = ItemCategories("trace_metric")

// TestFromResponse mirrors sentry-go's TestFromResponse (internal/ratelimit/map_test.go)
// and the precedence of develop-docs sdk/foundations/transport/rate-limiting.mdx.
func TestFromResponse(t *testing.T) {
	for _, tt := range fromResponseCases {
		t.Run(tt.name, func(t *testing.T) {
			l, capped := FromResponse(tt.status, tt.header, now, refusedTraceMetric)
			assert.Equal(t, tt.want, toSecs(t, l))
			assert.Equal(t, tt.capped, capped, "capped")
		})
	}
}

// TestFromResponseRefusedWithoutCategories: a 429 to an envelope with no
// category (a client report alone) and a header naming only unknown
// categories limits nothing; a bare 429 still limits everything.
func TestFromResponseRefusedWithoutCategories(t *testing.T) {
	l, _ := FromResponse(429, http.Header{rateLimits: {"60:foobar"}}, now, ItemCategories("client_report"))
	assert.True(t, l.Empty(), "%s", l)
	l, _ = FromResponse(429, nil, now, ItemCategories("client_report"))
	assert.Equal(t, secs{CategoryAll: 60}, toSecs(t, l))
}

// TestFromResponseLimitsEachRefusedItem: the fallback covers every item
// type of the refused envelope, and only those.
func TestFromResponseLimitsEachRefusedItem(t *testing.T) {
	refused := slices.Concat(ItemCategories("transaction"), ItemCategories("event"))
	l, _ := FromResponse(429, http.Header{rateLimits: {"40:foobar"}}, now, refused)
	assert.Equal(t, secs{CategoryTransaction: 40, CategoryError: 40}, toSecs(t, l))
	for _, it := range []string{"span", "log", "trace_metric", "profile_chunk", "client_report"} {
		assert.False(t, l.ItemActive(it, now), "%q flows", it)
	}
}
