package ratelimit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestItemCategories pins the mapping of sentry-protocol.md §5 for the item
// types the exporter sends.
func TestItemCategories(t *testing.T) {
	tests := []struct {
		itemType string
		want     []Category
	}{
		{"event", []Category{CategoryError}},
		{"transaction", []Category{CategoryTransaction}},
		{"span", []Category{CategorySpan}},
		{"log", []Category{CategoryLogItem, CategoryLogByte}},
		{"client_report", []Category{CategoryInternal}},
		{"attachment", []Category{CategoryAttachment, CategoryAttachmentItem}},
		{"check_in", []Category{CategoryMonitor}},
		{"trace_metric", []Category{CategoryTraceMetric, CategoryTraceMetricByte}},
		{"profile_chunk", []Category{CategoryProfileChunk, CategoryProfileDuration}},
		{"no_such_item", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ItemCategories(tt.itemType), "%q", tt.itemType)
	}
}

// TestKnownCategories derives its list from the item mapping, so a category
// that items are counted in cannot be forgotten by Parse, as sentry-go forgot
// span and log_byte: its TestKnownCategories copied the list it tested.
func TestKnownCategories(t *testing.T) {
	require.NotEmpty(t, itemCategories)
	for itemType, categories := range itemCategories {
		require.NotEmpty(t, categories, "%q", itemType)
		for _, c := range categories {
			header := "60:" + c.String()
			l, _ := Parse(header, now)
			if c == CategoryInternal {
				// Relay never names it; only a limit on all categories applies.
				assert.False(t, c.Known(), "%q", c)
				assert.True(t, l.Empty(), "%q", header)
				all, _ := Parse("60::", now)
				assert.True(t, all.ItemActive(itemType, now), "%q under 60::", itemType)
				continue
			}
			assert.True(t, c.Known(), "%q", c)
			assert.True(t, c.Enforced(), "%q", c)
			assert.True(t, l.Active(c, now), "%q", header)
			assert.True(t, l.ItemActive(itemType, now), "%q under %q", itemType, header)
			assert.Equal(t, secs{c: 60}, toSecs(t, l), "%q", header)
		}
	}
}

func TestIndexedCategoriesNotEnforced(t *testing.T) {
	for _, c := range []Category{CategoryTransactionIndexed, CategorySpanIndexed, CategoryProfileIndexed} {
		assert.True(t, c.Known(), "%q", c)
		assert.False(t, c.Enforced(), "%q", c)
		l, _ := Parse("60:"+c.String(), now)
		assert.True(t, l.Empty(), "%q", c)
	}
	assert.False(t, CategoryAll.Known())
	assert.False(t, Category("foobar").Enforced())
}

func TestCategoryString(t *testing.T) {
	assert.Equal(t, "log_item", CategoryLogItem.String())
	assert.Empty(t, CategoryAll.String())
	assert.Equal(t, "internal", CategoryInternal.String())
}

// TestItemActive: either log_item or log_byte blocks a log (Relay's
// EnvelopeLimiter); transaction and span do not block each other (Relay PR
// #5188, develop-docs ingestion/relay/transaction-span-ratelimits.mdx).
func TestItemActive(t *testing.T) {
	tests := []struct {
		header  string
		blocked []string
		allowed []string
	}{
		{"", nil, []string{"event", "transaction", "span", "log", "client_report", "no_such_item"}},
		{"60:log_item", []string{"log"}, []string{"event", "span", "client_report"}},
		{"60:log_byte", []string{"log"}, []string{"event", "span", "client_report"}},
		{"60:trace_metric_byte", []string{"trace_metric"}, []string{"event", "transaction", "log", "client_report"}},
		{"60:trace_metric", []string{"trace_metric"}, []string{"event", "transaction", "log", "client_report"}},
		{"60:transaction", []string{"transaction"}, []string{"span", "event", "log"}},
		{"60:span", []string{"span"}, []string{"transaction", "event", "log"}},
		{"60:error", []string{"event"}, []string{"transaction", "client_report"}},
		{"60::", []string{"event", "transaction", "span", "log", "client_report", "no_such_item"}, nil},
		{"0::", nil, []string{"event", "client_report"}},
	}
	for _, tt := range tests {
		l, _ := Parse(tt.header, now)
		for _, it := range tt.blocked {
			assert.True(t, l.ItemActive(it, now), "%q blocks %q", tt.header, it)
		}
		for _, it := range tt.allowed {
			assert.False(t, l.ItemActive(it, now), "%q lets %q through", tt.header, it)
		}
		assert.Equal(t, l.ItemActive("log", now), l.LogsActive(now), "%q: LogsActive", tt.header)
	}
}
