package membudget

import "sync/atomic"

// Memory is the exporter's one memory budget (memory::max_bytes): every byte
// the exporter holds on data's way to Sentry counts against it, whoever
// holds it: each project's envelopes queued, waiting to retry and in flight
// (every copy of a request's body), the spans held for trace assembly and
// the error events held in the dedupe window. Holders reserve before they
// hold (TryTake, or the send stage's room check); Add is for what is held
// under a bound of its own, or given back.
//
// It is shared fairly, as the request budget is: each project may hold its
// share (max_bytes / routing::max_projects) whatever the others hold, and
// more while the total has room. When the total is full, the holder furthest
// past its share makes room (max-min fairness): a project whose Sentry hangs
// gives way to a busy healthy one, never the reverse. Memory only counts;
// the holders decide what goes, and drop (and count) it.
type Memory struct {
	max, share int64
	held       atomic.Int64
}

// NewMemory is a budget of maxBytes shared by up to maxProjects projects.
func NewMemory(maxBytes int64, maxProjects int) *Memory {
	return &Memory{max: maxBytes, share: maxBytes / int64(max(maxProjects, 1))}
}

// Max is the budget.
func (m *Memory) Max() int64 { return m.max }

// Held is what all holders hold now.
func (m *Memory) Held() int64 { return m.held.Load() }

// Holder is one holder's part of the budget.
type Holder struct {
	m    *Memory
	held atomic.Int64
}

// NewHolder is a part of m, holding nothing yet.
func (m *Memory) NewHolder() *Holder { return &Holder{m: m} }

// Add counts n more bytes held (fewer when n is negative), whether or not
// they fit: the caller made room first (the send stage's makeRoom), or holds
// them under a bound of its own (docs/memory.md names each).
func (h *Holder) Add(n int64) {
	h.held.Add(n)
	h.m.held.Add(n)
}

// TryTake counts n more bytes for h if the budget has room for them: a
// holder outside the stage (the dedupe window) reserves so before it holds,
// and gives way (holds nothing) when there is no room; the stage's room
// check tries it first.
func (h *Holder) TryTake(n int64) bool {
	for {
		cur := h.m.held.Load()
		if cur+n > h.m.max {
			return false
		}
		if h.m.held.CompareAndSwap(cur, cur+n) {
			h.held.Add(n)
			return true
		}
	}
}

// Held is what h holds now.
func (h *Holder) Held() int64 { return h.held.Load() }

// Over is how far h is past its share (0 or less: within it).
func (h *Holder) Over() int64 { return h.held.Load() - h.m.share }

// Share is what each project may hold whatever the others hold.
func (m *Memory) Share() int64 { return m.share }
