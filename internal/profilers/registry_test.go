package profilers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var t0 = time.Unix(1_700_000_000, 0)

const ttl = time.Minute

var (
	backend = Profiler{ID: "0123456789abcdef0123456789abcdef"}
	other   = Profiler{ID: "fedcba9876543210fedcba9876543210", UI: true}
)

// budget is a memory budget of max bytes.
type budget struct{ held, max int64 }

func (b *budget) TryTake(n int64) bool {
	if b.held+n > b.max {
		return false
	}
	b.held += n
	return true
}
func (b *budget) Add(n int64) { b.held += n }

// TestOfNamesOnlyARecentProfiler: a process names its last chunk's
// profiler for ttl after that chunk, and none before its first or after
// the ttl.
func TestOfNamesOnlyARecentProfiler(t *testing.T) {
	r := New(ttl, 10, nil)
	_, ok := r.Of("p1", t0)
	assert.False(t, ok, "never sent a chunk")
	r.Seen("p1", backend, t0)
	p, ok := r.Of("p1", t0.Add(ttl))
	assert.True(t, ok)
	assert.Equal(t, backend, p)
	_, ok = r.Of("p1", t0.Add(ttl+time.Nanosecond))
	assert.False(t, ok, "its last chunk is older than ttl")
	r.Seen("p1", other, t0.Add(2*ttl))
	p, _ = r.Of("p1", t0.Add(2*ttl))
	assert.Equal(t, other, p, "a new profiler of the process replaces the old")
	_, ok = r.Of("p2", t0)
	assert.False(t, ok, "another process")
}

// TestSeenIgnoresEmpty: no process or no profiler ID names nothing.
func TestSeenIgnoresEmpty(t *testing.T) {
	r := New(ttl, 10, nil)
	r.Seen("", backend, t0)
	r.Seen("p1", Profiler{}, t0)
	assert.Equal(t, 0, r.Len())
}

// TestBoundedInNumber: a full registry takes a new process only once an
// entry has expired.
func TestBoundedInNumber(t *testing.T) {
	r := New(ttl, 2, nil)
	r.Seen("p1", backend, t0)
	r.Seen("p2", backend, t0.Add(ttl/2))
	r.Seen("p3", backend, t0.Add(ttl/2))
	_, ok := r.Of("p3", t0.Add(ttl/2))
	assert.False(t, ok, "full of live entries")
	r.Seen("p3", backend, t0.Add(ttl+time.Second))
	_, ok = r.Of("p3", t0.Add(ttl+time.Second))
	assert.True(t, ok, "p1 expired and was swept")
	assert.Equal(t, 2, r.Len())
}

// TestHeldInTheBudget: each entry reserves its bytes; no room, not
// remembered; an evicted entry gives its bytes back.
func TestHeldInTheBudget(t *testing.T) {
	one := entryBytes("p1", backend)
	b := &budget{max: one}
	r := New(ttl, 10, b)
	r.Seen("p1", backend, t0)
	assert.Equal(t, one, b.held)
	r.Seen("p2", backend, t0)
	_, ok := r.Of("p2", t0)
	assert.False(t, ok, "no room in the budget")
	r.Seen("p1", backend, t0.Add(time.Second))
	assert.Equal(t, one, b.held, "a chunk of a known profiler reserves nothing more")
	r.Seen("p1", Profiler{ID: backend.ID, UI: true}, t0.Add(2*time.Second))
	assert.Equal(t, one, b.held, "a replaced entry gives its bytes back first")
}
