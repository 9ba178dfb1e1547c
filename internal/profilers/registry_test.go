package profilers

import (
	"fmt"
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

const proj = "1"

// TestOfNamesOnlyARecentProfiler: a key names its last chunk's profiler
// for ttl after that chunk, and none before its first or after the ttl.
func TestOfNamesOnlyARecentProfiler(t *testing.T) {
	r := New(ttl, 10, nil)
	_, ok := r.Of(proj, "p1", t0)
	assert.False(t, ok, "never sent a chunk")
	r.Seen(proj, "p1", backend, t0)
	p, ok := r.Of(proj, "p1", t0.Add(ttl))
	assert.True(t, ok)
	assert.Equal(t, backend, p)
	_, ok = r.Of(proj, "p1", t0.Add(ttl+time.Nanosecond))
	assert.False(t, ok, "its last chunk is older than ttl")
	r.Seen(proj, "p1", other, t0.Add(2*ttl))
	p, _ = r.Of(proj, "p1", t0.Add(2*ttl))
	assert.Equal(t, other, p, "a new profiler after the old one expired replaces it")
	_, ok = r.Of(proj, "p2", t0)
	assert.False(t, ok, "another key")
	_, ok = r.Of("2", "p1", t0.Add(2*ttl))
	assert.False(t, ok, "another project")
}

// TestAKeyOfTwoProfilersNamesNeither: two live profilers under one key
// (two processes of one pod) name none until one has been silent for ttl.
func TestAKeyOfTwoProfilersNamesNeither(t *testing.T) {
	r := New(ttl, 10, nil)
	r.Seen(proj, "k8s.pod.uid=u", backend, t0)
	r.Seen(proj, "k8s.pod.uid=u", other, t0.Add(time.Second))
	_, ok := r.Of(proj, "k8s.pod.uid=u", t0.Add(2*time.Second))
	assert.False(t, ok, "ambiguous")
	r.Seen(proj, "k8s.pod.uid=u", other, t0.Add(ttl))
	_, ok = r.Of(proj, "k8s.pod.uid=u", t0.Add(ttl))
	assert.False(t, ok, "still within ttl of the conflict")
	p, ok := r.Of(proj, "k8s.pod.uid=u", t0.Add(ttl+2*time.Second))
	assert.True(t, ok, "only one profiler since ttl")
	assert.Equal(t, other, p)
	r.Seen(proj, "span", Profiler{ID: backend.ID, Thread: "7"}, t0)
	r.Seen(proj, "span", Profiler{ID: backend.ID, Thread: "8"}, t0)
	p, ok = r.Of(proj, "span", t0)
	assert.True(t, ok, "the same profiler on another thread is no conflict")
	assert.Equal(t, "8", p.Thread)
}

// TestSeenIgnoresEmpty: no key or no profiler ID names nothing.
func TestSeenIgnoresEmpty(t *testing.T) {
	r := New(ttl, 10, nil)
	r.Seen(proj, "", backend, t0)
	r.Seen(proj, "p1", Profiler{}, t0)
	assert.Equal(t, 0, r.Len(proj))
}

// TestFairSharePerProject: a project's churn replaces only its own
// entries; a project under its share takes room from the one holding the
// most, never beyond the total.
func TestFairSharePerProject(t *testing.T) {
	r := New(ttl, 4, nil)
	r.Seen("quiet", "q1", backend, t0)
	r.Seen("quiet", "q2", backend, t0)
	for i := range 100 {
		r.Seen("churn", fmt.Sprint("c", i), backend, t0.Add(time.Duration(i)*time.Millisecond))
	}
	for _, k := range []string{"q1", "q2"} {
		_, ok := r.Of("quiet", k, t0.Add(time.Second))
		assert.True(t, ok, "the quiet project keeps %s", k)
	}
	assert.Equal(t, 2, r.Len("churn"), "churn keeps its share")
	_, ok := r.Of("churn", "c99", t0.Add(time.Second))
	assert.True(t, ok, "its newest")
	alone := New(ttl, 4, nil)
	for i := range 10 {
		alone.Seen("one", fmt.Sprint("k", i), backend, t0)
	}
	assert.Equal(t, 4, alone.Len("one"), "a project alone may use it all")
	alone.Seen("two", "k", backend, t0)
	assert.Equal(t, 3, alone.Len("one"), "a newcomer takes from the largest")
	assert.Equal(t, 1, alone.Len("two"))
}

// TestExpiredSwept: expired entries are forgotten, their bytes given back.
func TestExpiredSwept(t *testing.T) {
	b := &budget{max: 1 << 20}
	r := New(ttl, 10, b)
	r.Seen(proj, "p1", backend, t0)
	r.Seen(proj, "p2", backend, t0.Add(ttl+time.Second))
	assert.Equal(t, 1, r.Len(proj), "p1 expired and was swept")
	assert.Equal(t, entryBytes("p2", backend), b.held)
}

// TestHeldInTheBudget: each entry reserves its bytes; a full budget takes
// the project's own oldest entry first; a replaced profiler's bytes move.
func TestHeldInTheBudget(t *testing.T) {
	one := entryBytes("p1", backend)
	b := &budget{max: one}
	r := New(ttl, 10, b)
	r.Seen(proj, "p1", backend, t0)
	assert.Equal(t, one, b.held)
	r.Seen(proj, "p2", backend, t0)
	_, ok := r.Of(proj, "p1", t0)
	assert.False(t, ok, "no room in the budget: the project's oldest gave way")
	_, ok = r.Of(proj, "p2", t0)
	assert.True(t, ok)
	r.Seen("2", "x", backend, t0)
	_, ok = r.Of("2", "x", t0)
	assert.False(t, ok, "a project with nothing to give way gets no room in a full budget")
	r.Seen(proj, "p2", Profiler{ID: backend.ID, Thread: "12345"}, t0)
	p, _ := r.Of(proj, "p2", t0)
	assert.Empty(t, p.Thread, "a larger entry that does not fit keeps the old")
	assert.LessOrEqual(t, b.held, b.max)
}

// TestForgetGivesTheShareBack: a forgotten project's entries are gone and
// their bytes given back, and the project left has the whole registry.
func TestForgetGivesTheShareBack(t *testing.T) {
	b := &budget{max: 1 << 20}
	r := New(ttl, 4, b)
	r.Seen("gone", "g1", backend, t0)
	r.Seen("gone", "g2", backend, t0)
	r.Forget("gone")
	r.Forget("never seen")
	assert.Zero(t, r.Len("gone"))
	assert.Zero(t, b.held, "its bytes given back")
	for i := range 4 {
		r.Seen("kept", fmt.Sprint("k", i), backend, t0)
	}
	assert.Equal(t, 4, r.Len("kept"), "the forgotten project's share went to the one left")
}
