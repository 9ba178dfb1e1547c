package ratelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestLimitsDeadline mirrors sentry-go's TestMapDeadlineIsRateLimited
// (internal/ratelimit/map_test.go): a category's deadline is the later of its
// own and the one for all categories.
func TestLimitsDeadline(t *testing.T) {
	const unknown = Category("unknown")
	tests := []struct {
		name   string
		limits secs
		want   secs // deadline per category; missing = zero time
	}{
		{"empty", secs{}, secs{}},
		{"one category", secs{CategoryError: 5}, secs{CategoryError: 5}},
		{
			"only all",
			secs{CategoryAll: 5},
			secs{CategoryAll: 5, CategoryError: 5, CategoryTransaction: 5, CategoryInternal: 5, unknown: 5},
		},
		{
			"two categories",
			secs{CategoryError: 5, CategoryTransaction: 10},
			secs{CategoryError: 5, CategoryTransaction: 10},
		},
		{
			"all earlier",
			secs{CategoryAll: 5, CategoryTransaction: 10},
			secs{CategoryAll: 5, CategoryError: 5, CategoryTransaction: 10, CategoryInternal: 5, unknown: 5},
		},
		{
			"all later",
			secs{CategoryAll: 10, CategoryTransaction: 5},
			secs{CategoryAll: 10, CategoryError: 10, CategoryTransaction: 10, CategoryInternal: 10, unknown: 10},
		},
	}
	probe := []Category{CategoryAll, CategoryError, CategoryTransaction, CategoryInternal, unknown}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := fromSecs(tt.limits)
			for _, c := range probe {
				n, limited := tt.want[c]
				if !limited {
					assert.True(t, l.Deadline(c).IsZero(), "%q: %v", c, l.Deadline(c))
					assert.False(t, l.Active(c, now), "%q", c)
					continue
				}
				d := now.Add(time.Duration(n) * time.Second)
				assert.True(t, d.Equal(l.Deadline(c)), "%q: got %v, want %v", c, l.Deadline(c), d)
				assert.True(t, l.Active(c, d.Add(-time.Nanosecond)), "%q active just before its deadline", c)
				assert.False(t, l.Active(c, d), "%q expires at its deadline", c)
			}
		})
	}
}

func TestLimitsMerge(t *testing.T) {
	tests := []struct {
		name string
		a, b secs
		want secs
	}{
		{"both empty", secs{}, secs{}, secs{}},
		{"into empty", secs{}, secs{CategoryError: 5}, secs{CategoryError: 5}},
		{"from empty", secs{CategoryError: 5}, secs{}, secs{CategoryError: 5}},
		{"later wins", secs{CategoryError: 5}, secs{CategoryError: 9}, secs{CategoryError: 9}},
		{"earlier loses", secs{CategoryError: 9}, secs{CategoryError: 5}, secs{CategoryError: 9}},
		{
			"union",
			secs{CategoryError: 5, CategoryLogByte: 3},
			secs{CategorySpan: 7, CategoryLogItem: 1},
			secs{CategoryError: 5, CategoryLogByte: 3, CategorySpan: 7, CategoryLogItem: 1},
		},
		{"all later wins", secs{CategoryAll: 5}, secs{CategoryAll: 60}, secs{CategoryAll: 60}},
		{
			"all kept beside category",
			secs{CategoryAll: 60},
			secs{CategoryError: 5},
			secs{CategoryAll: 60, CategoryError: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := fromSecs(tt.a), fromSecs(tt.b)
			assert.Equal(t, tt.want, toSecs(t, a.Merge(b)), "a.Merge(b)")
			assert.Equal(t, tt.want, toSecs(t, b.Merge(a)), "b.Merge(a)")
			assert.Equal(t, tt.a, toSecs(t, a), "a unchanged")
			assert.Equal(t, tt.b, toSecs(t, b), "b unchanged")
		})
	}
}

// TestLimitsMergeAcrossResponses: the later deadline wins across responses,
// whichever arrives first (develop-docs rate-limiting.mdx).
func TestLimitsMergeAcrossResponses(t *testing.T) {
	first, _ := Parse("120:error, 10:span", now)
	second, _ := Parse("30:error, 60:span", now.Add(5*time.Second))
	want := secs{CategoryError: 120, CategorySpan: 65}
	assert.Equal(t, want, toSecs(t, first.Merge(second)))
	assert.Equal(t, want, toSecs(t, second.Merge(first)))
}

func TestLimitsEach(t *testing.T) {
	l, _ := Parse("3:span, 2:error, 1::, 4:log_byte", now)
	var order []Category
	l.Each(func(c Category, _ time.Time) { order = append(order, c) })
	assert.Equal(t, []Category{CategoryAll, CategoryError, CategoryLogByte, CategorySpan}, order)

	var zero Limits
	zero.Each(func(c Category, _ time.Time) { t.Errorf("zero Limits has %q", c) })
}

func TestLimitsZeroValue(t *testing.T) {
	var l Limits
	assert.True(t, l.Empty())
	assert.False(t, l.Active(CategoryError, now))
	assert.False(t, l.Active(CategoryAll, now))
	assert.False(t, l.LogsActive(now))
	assert.True(t, l.Deadline(CategoryError).IsZero())
	assert.True(t, l.Equal(Limits{}.Merge(Limits{})))
	assert.Equal(t, "none", l.String())
}

func TestLimitsEqual(t *testing.T) {
	a, _ := Parse("60:error, 30::", now)
	b, _ := Parse("30::, 60:error", now)
	c, _ := Parse("61:error, 30::", now)
	d, _ := Parse("60:error", now)
	assert.True(t, a.Equal(b))
	assert.False(t, a.Equal(c))
	assert.False(t, a.Equal(d))
	assert.True(t, a.Equal(fromSecs(secs{CategoryError: 60, CategoryAll: 30})))
}

func TestLimitsString(t *testing.T) {
	l, _ := Parse("60::, 2700:error", now)
	assert.Equal(t, "all until 2008-05-12T16:27:19Z, error until 2008-05-12T17:11:19Z", l.String())
}

// TestLimitsCovers: covers is true exactly when Merge would change nothing.
func TestLimitsCovers(t *testing.T) {
	headers := []string{"", "60::", "30::", "30:error", "90:error;span", "10:log_byte, 20:log_item", "60:span, 60::"}
	for _, a := range headers {
		for _, b := range headers {
			la, _ := Parse(a, now)
			lb, _ := Parse(b, now)
			assert.Equal(t, la.Merge(lb).Equal(la), la.covers(lb), "%q covers %q", a, b)
		}
	}
}
