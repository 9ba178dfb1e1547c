// Package tracemetric turns OTLP metrics (pdata) into Sentry trace metrics:
// the JSON objects of a `trace_metric` container, as sentry-go 0.50 writes
// them (timestamp, trace_id, span_id, type, name, value, unit, typed
// attributes), one or more per data point (docs/mapping.md#metrics):
//
//   - gauge → gauge; sum: monotonic → counter of the increase, non-monotonic
//     cumulative → gauge of the level, non-monotonic delta → counter of the change;
//   - histogram and exponential histogram → counters <name>.count and
//     <name>.sum, and for delta points gauges <name>.min and <name>.max;
//   - summary → counters <name>.count and <name>.sum, and a gauge
//     <name>.quantile per quantile, with the quantile as an attribute.
//
// Each item is held to sentry.io's 2 KiB a metric ([MaxItemBytes]): one
// over it is cut (values, arrays, attributes beyond the SDK's defaults), and
// counted invalid if it still does not fit.
//
// Cumulative counts become deltas against each stream's previous point, held
// in a project's [Streams] under its [Pool]'s byte bound, shared fairly by
// the projects (the least recently used stream of the project furthest past
// its share evicted first); a point with no previous point to subtract is
// counted ([Result.NoBaseline]). A counter
// of 0, which adds nothing Sentry can chart, is counted, not sent
// ([Result.Unchanged]); gauges are sent at every point.
//
// Its one job is that translation. It must not send, build envelopes, read a
// rate limit, read a clock or record a fate: the caller says what is wanted,
// passes now, and counts what [Result] says was skipped, invalid or without a
// baseline.
package tracemetric
