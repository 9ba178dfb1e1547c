package ratelimit

// Category is a Sentry data category. Its value is the name used on the wire in
// X-Sentry-Rate-Limits and in client reports.
type Category string

// CategoryAll stands for every category: an empty category list in
// X-Sentry-Rate-Limits limits all of them.
const CategoryAll Category = ""

// Data categories, named as in Relay's DataCategory
// (relay-base-schema/src/data_category.rs). Categories no item of ours is
// counted in are listed so that Parse knows them; see [Category.Known].
const (
	CategoryDefault              Category = "default"
	CategoryError                Category = "error"
	CategoryTransaction          Category = "transaction"
	CategorySecurity             Category = "security"
	CategoryAttachment           Category = "attachment"
	CategorySession              Category = "session"
	CategoryProfile              Category = "profile"
	CategoryReplay               Category = "replay"
	CategoryTransactionProcessed Category = "transaction_processed"
	CategoryTransactionIndexed   Category = "transaction_indexed"
	CategoryMonitor              Category = "monitor"
	CategoryProfileIndexed       Category = "profile_indexed"
	CategorySpan                 Category = "span"
	CategoryMonitorSeat          Category = "monitor_seat"
	CategoryFeedback             Category = "feedback"
	CategoryMetricBucket         Category = "metric_bucket"
	CategorySpanIndexed          Category = "span_indexed"
	CategoryProfileDuration      Category = "profile_duration"
	CategoryProfileChunk         Category = "profile_chunk"
	CategoryMetricSecond         Category = "metric_second"
	CategoryReplayVideo          Category = "replay_video"
	CategoryUptime               Category = "uptime"
	CategoryAttachmentItem       Category = "attachment_item"
	CategoryLogItem              Category = "log_item"
	CategoryLogByte              Category = "log_byte"
	CategoryProfileDurationUI    Category = "profile_duration_ui"
	CategoryProfileChunkUI       Category = "profile_chunk_ui"
	CategorySeerAutofix          Category = "seer_autofix"
	CategorySeerScanner          Category = "seer_scanner"
	CategoryPreventUser          Category = "prevent_user"
	CategoryPreventReview        Category = "prevent_review"
	CategorySizeAnalysis         Category = "size_analysis"
	CategoryInstallableBuild     Category = "installable_build"
	CategoryTraceMetric          Category = "trace_metric"
	CategoryTraceMetricByte      Category = "trace_metric_byte"
	CategorySeerUser             Category = "seer_user"
	CategoryProfileBackend       Category = "profile_backend"
	CategoryProfileUI            Category = "profile_ui"
)

// CategoryInternal is the SDK-side category of client reports. Relay does not
// know it and promises never to name it in a rate limit, so it is not Known:
// only a limit on all categories blocks client reports
// (develop-docs sdk/foundations/transport/rate-limiting.mdx).
const CategoryInternal Category = "internal"

// known maps every name Parse accepts to its category. Names are matched
// exactly, as Relay's DataCategory::from_name does.
var known = func() map[string]Category {
	m := make(map[string]Category)
	for _, c := range []Category{
		CategoryDefault, CategoryError, CategoryTransaction, CategorySecurity,
		CategoryAttachment, CategorySession, CategoryProfile, CategoryReplay,
		CategoryTransactionProcessed, CategoryTransactionIndexed, CategoryMonitor,
		CategoryProfileIndexed, CategorySpan, CategoryMonitorSeat, CategoryFeedback,
		CategoryMetricBucket, CategorySpanIndexed, CategoryProfileDuration,
		CategoryProfileChunk, CategoryMetricSecond, CategoryReplayVideo,
		CategoryUptime, CategoryAttachmentItem, CategoryLogItem, CategoryLogByte,
		CategoryProfileDurationUI, CategoryProfileChunkUI, CategorySeerAutofix,
		CategorySeerScanner, CategoryPreventUser, CategoryPreventReview,
		CategorySizeAnalysis, CategoryInstallableBuild, CategoryTraceMetric,
		CategorySeerUser, CategoryProfileBackend, CategoryProfileUI,
		CategoryTraceMetricByte,
	} {
		m[string(c)] = c
	}
	m["user_report_v2"] = CategoryFeedback // Relay's code name, accepted as an alias
	return m
}()

// lookup returns the category a name in X-Sentry-Rate-Limits stands for.
func lookup(name string) (Category, bool) {
	c, ok := known[name]
	return c, ok
}

// String returns the wire name; CategoryAll is the empty string.
func (c Category) String() string { return string(c) }

// Label is c's name in logs and metrics: its wire name, or "all" for
// CategoryAll.
func (c Category) Label() string {
	if c == CategoryAll {
		return "all"
	}
	return string(c)
}

// Known reports whether Parse recognizes c as a category name in
// X-Sentry-Rate-Limits. CategoryAll and CategoryInternal are not names Relay
// sends, so they are not Known.
func (c Category) Known() bool {
	_, ok := known[string(c)]
	return ok
}

// Enforced reports whether a limit naming c is kept by Parse. The indexed
// categories are Known but not Enforced: Relay counts them beside transaction,
// span and profile, checks them only after those, and does not send them to
// SDKs as limits to apply (sentry-protocol.md §4; develop-docs
// ingestion/relay/transaction-span-ratelimits.mdx says "ignore"). Dropping them
// keeps a stray transaction_indexed limit from blocking anything.
func (c Category) Enforced() bool {
	switch c {
	case CategoryTransactionIndexed, CategorySpanIndexed, CategoryProfileIndexed:
		return false
	}
	return c.Known()
}
