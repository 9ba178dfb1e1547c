package ratelimit

import (
	"sync/atomic"
	"time"
)

// State holds the current Limits of one DSN. It is safe for concurrent use. A
// read is one atomic load, with no lock and no allocation; a write, which
// happens only when a response carries limits, swaps in a merged copy. The
// zero value limits nothing.
//
// Expired deadlines are not removed: they no longer block anything, and there
// is at most one per Known category.
type State struct {
	p atomic.Pointer[Limits]
}

// Load returns the current limits.
func (s *State) Load() Limits {
	if p := s.p.Load(); p != nil {
		return *p
	}
	return Limits{}
}

// Active reports whether items of category c must be dropped at now.
func (s *State) Active(c Category, now time.Time) bool {
	p := s.p.Load()
	return p != nil && p.Active(c, now)
}

// Merge merges l into the current limits, keeping the later deadline per
// category. It does nothing if l is empty or extends no deadline.
func (s *State) Merge(l Limits) {
	if l.Empty() {
		return
	}
	for {
		old := s.p.Load()
		var cur Limits
		if old != nil {
			cur = *old
		}
		if old != nil && cur.covers(l) {
			return
		}
		next := cur.Merge(l)
		if s.p.CompareAndSwap(old, &next) {
			return
		}
	}
}
