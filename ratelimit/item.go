package ratelimit

import "time"

// itemCategories maps an envelope item type to the data categories whose
// limits drop it (sentry-protocol.md §5; Relay's Item::quantities in
// relay-server/src/envelope/item.rs). Indexed categories are left out, since
// they are not Enforced.
var itemCategories = map[string][]Category{
	"event":         {CategoryError},
	"transaction":   {CategoryTransaction},
	"span":          {CategorySpan},
	"log":           {CategoryLogItem, CategoryLogByte},
	"client_report": {CategoryInternal},
	"attachment":    {CategoryAttachment, CategoryAttachmentItem},
	"check_in":      {CategoryMonitor},
	"trace_metric":  {CategoryTraceMetric, CategoryTraceMetricByte},
	// A profile chunk of a backend platform; one of a UI platform (Relay's
	// ProfileType::Ui, read from the item header `platform`) is counted in
	// profile_chunk_ui and profile_duration_ui instead.
	"profile_chunk":    {CategoryProfileChunk, CategoryProfileDuration},
	"session":          {CategorySession},
	"sessions":         {CategorySession},
	"profile":          {CategoryProfile},
	"replay_event":     {CategoryReplay},
	"replay_recording": {CategoryReplay},
	"replay_video":     {CategoryReplay},
	"feedback":         {CategoryFeedback},
}

// ItemCategories returns the data categories whose rate limits apply to an
// envelope item of the given type: an item is dropped if any of them is
// Active. A log container has two, log_item and log_byte, and either one blocks
// it, as in Relay's EnvelopeLimiter; a trace_metric container likewise has
// trace_metric and trace_metric_byte. A client report is in CategoryInternal,
// which only a limit on all categories blocks. An unknown item type has none.
// The returned slice is shared: do not modify it.
func ItemCategories(itemType string) []Category {
	return itemCategories[itemType]
}

// ItemActive reports whether an item of the given type must be dropped at now:
// a limit on any of its ItemCategories, or on all categories, is active. An
// item type without categories is blocked only by a limit on all categories.
func (l Limits) ItemActive(itemType string, now time.Time) bool {
	if l.all.After(now) {
		return true
	}
	for _, c := range itemCategories[itemType] {
		if l.Active(c, now) {
			return true
		}
	}
	return false
}

// LogsActive reports whether log items must be dropped at now: log_item or
// log_byte, or all categories, is limited.
func (l Limits) LogsActive(now time.Time) bool {
	return l.Active(CategoryLogItem, now) || l.Active(CategoryLogByte, now)
}
