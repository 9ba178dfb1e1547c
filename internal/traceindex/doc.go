// Package traceindex remembers, per project and trace seen recently, its
// head segment and which segment each span belongs to, so every envelope of
// a trace carries the same dynamic sampling context and log-derived error
// events find their span's segment, never another project's.
//
// Its one job is that bounded, trace-scoped memory. It must not build,
// gate or send envelopes, record an item's fate, or hold pdata: it keeps
// copies only, within fixed bounds.
package traceindex
