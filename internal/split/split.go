package split

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Signal is what split needs of one pdata batch type: how many resources a
// batch has, the i-th resource, a new empty batch for a part of src, the
// copy of the i-th resource (with its scopes and items) into another batch,
// and, when set, Finish: what completes the parts cut from src once every
// resource is in its part (profiles: each part's own dictionary). Finish is
// not called on a batch handed on whole.
type Signal[B any] struct {
	Len      func(B) int
	Resource func(B, int) pcommon.Resource
	New      func(src B) B
	CopyTo   func(src B, i int, dst B)
	Finish   func(src B, parts []B)
}

// resources is what a pdata resource slice offers split: ptrace.ResourceSpansSlice,
// plog.ResourceLogsSlice, pmetric.ResourceMetricsSlice.
type resources[R any] interface {
	Len() int
	At(int) R
	AppendEmpty() R
}

// resource is one element of such a slice, with its scopes and items.
type resource[R any] interface {
	Resource() pcommon.Resource
	CopyTo(R)
}

// signal is the Signal of a batch whose resources list returns.
func signal[B any, L resources[R], R resource[R]](list func(B) L, newBatch func() B) Signal[B] {
	return Signal[B]{
		Len:      func(b B) int { return list(b).Len() },
		Resource: func(b B, i int) pcommon.Resource { return list(b).At(i).Resource() },
		New:      func(B) B { return newBatch() },
		CopyTo:   func(src B, i int, dst B) { list(src).At(i).CopyTo(list(dst).AppendEmpty()) },
	}
}

// Traces is the Signal of ptrace.Traces.
func Traces() Signal[ptrace.Traces] {
	return signal(ptrace.Traces.ResourceSpans, ptrace.NewTraces)
}

// Logs is the Signal of plog.Logs.
func Logs() Signal[plog.Logs] {
	return signal(plog.Logs.ResourceLogs, plog.NewLogs)
}

// Metrics is the Signal of pmetric.Metrics.
func Metrics() Signal[pmetric.Metrics] {
	return signal(pmetric.Metrics.ResourceMetrics, pmetric.NewMetrics)
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
			parts = append(parts, Part[T, B]{To: t, Batch: s.New(batch)})
		}
		s.CopyTo(batch, i, parts[k].Batch)
	}
	if s.Finish != nil {
		batches := make([]B, len(parts))
		for k := range parts {
			batches[k] = parts[k].Batch
		}
		s.Finish(batch, batches)
	}
	return parts
}
