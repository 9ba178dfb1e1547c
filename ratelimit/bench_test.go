package ratelimit

import (
	"testing"
	"time"
)

// populated returns a State holding a typical response's limits.
func populated(b *testing.B) *State {
	b.Helper()
	var s State
	l, _ := Parse("60:transaction:key, 2700:default;error;security:organization, 30:span;log_item;log_byte:project", now)
	s.Merge(l)
	return &s
}

// BenchmarkActive measures the drop path: one check per item. It must report
// 0 allocs/op.
func BenchmarkActive(b *testing.B) {
	s := populated(b)
	probe := now.Add(45 * time.Second)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Active(CategoryLogByte, probe)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s.Active(CategorySpan, probe)
			}
		})
	})
	b.Run("item", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Load().ItemActive("log", probe)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	const header = "60:transaction:key, 2700:default;error;security:organization, 30:span;log_item;log_byte:project"
	b.ReportAllocs()
	for b.Loop() {
		Parse(header, now)
	}
}

func BenchmarkStateMerge(b *testing.B) {
	s := populated(b)
	l, _ := Parse("3000:error", now)
	b.ReportAllocs()
	for b.Loop() {
		s.Merge(l)
	}
}
