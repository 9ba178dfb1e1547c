package split

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Signal is what split needs of one pdata batch type: how many resources a
// batch has, the i-th resource, a new empty batch, and the copy of the i-th
// resource (with its scopes and items) into another batch.
type Signal[B any] struct {
	Len      func(B) int
	Resource func(B, int) pcommon.Resource
	New      func() B
	CopyTo   func(src B, i int, dst B)
}

// Traces is the Signal of ptrace.Traces.
func Traces() Signal[ptrace.Traces] {
	return Signal[ptrace.Traces]{
		Len:      func(b ptrace.Traces) int { return b.ResourceSpans().Len() },
		Resource: func(b ptrace.Traces, i int) pcommon.Resource { return b.ResourceSpans().At(i).Resource() },
		New:      ptrace.NewTraces,
		CopyTo: func(src ptrace.Traces, i int, dst ptrace.Traces) {
			src.ResourceSpans().At(i).CopyTo(dst.ResourceSpans().AppendEmpty())
		},
	}
}

// Logs is the Signal of plog.Logs.
func Logs() Signal[plog.Logs] {
	return Signal[plog.Logs]{
		Len:      func(b plog.Logs) int { return b.ResourceLogs().Len() },
		Resource: func(b plog.Logs, i int) pcommon.Resource { return b.ResourceLogs().At(i).Resource() },
		New:      plog.NewLogs,
		CopyTo: func(src plog.Logs, i int, dst plog.Logs) {
			src.ResourceLogs().At(i).CopyTo(dst.ResourceLogs().AppendEmpty())
		},
	}
}

// Metrics is the Signal of pmetric.Metrics.
func Metrics() Signal[pmetric.Metrics] {
	return Signal[pmetric.Metrics]{
		Len:      func(b pmetric.Metrics) int { return b.ResourceMetrics().Len() },
		Resource: func(b pmetric.Metrics, i int) pcommon.Resource { return b.ResourceMetrics().At(i).Resource() },
		New:      pmetric.NewMetrics,
		CopyTo: func(src pmetric.Metrics, i int, dst pmetric.Metrics) {
			src.ResourceMetrics().At(i).CopyTo(dst.ResourceMetrics().AppendEmpty())
		},
	}
}

// Part is one target's share of a batch.
type Part[T comparable, B any] struct {
	To    T
	Batch B
}

// By asks target for each resource of batch, in order, and returns a part
// per target, in the order each target first appears. When every resource
// goes to one target, its part is batch itself (not a copy). A batch with no
// resource has no part.
func By[T comparable, B any](s Signal[B], batch B, target func(pcommon.Resource) T) []Part[T, B] {
	n := s.Len(batch)
	if n == 0 {
		return nil
	}
	targets := make([]T, n)
	one := true
	for i := range targets {
		targets[i] = target(s.Resource(batch, i))
		one = one && targets[i] == targets[0]
	}
	if one {
		return []Part[T, B]{{To: targets[0], Batch: batch}}
	}
	var parts []Part[T, B]
	index := map[T]int{}
	for i, t := range targets {
		k, ok := index[t]
		if !ok {
			k = len(parts)
			index[t] = k
			parts = append(parts, Part[T, B]{To: t, Batch: s.New()})
		}
		s.CopyTo(batch, i, parts[k].Batch)
	}
	return parts
}
