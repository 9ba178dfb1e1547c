package profilers

import (
	"sync"
	"time"
)

// Budget is the memory budget's part the registry holds its entries in
// (membudget.Holder): TryTake reserves before an entry is added, Add gives
// back (a negative n) what an evicted entry held.
type Budget interface {
	TryTake(n int64) bool
	Add(n int64)
}

// entryOverhead is what one entry costs beyond its key's and its ID's
// bytes: the map's bucket share, the two string headers, the time and the
// flag (a map[string]entry of this shape measures ~100 bytes an entry).
const entryOverhead = 112

// Profiler is what a process's last chunk named: its profiler ID and
// whether its platform is a UI one (its chunks are limited by
// profile_chunk_ui and profile_duration_ui).
type Profiler struct {
	ID string
	UI bool
}

type entry struct {
	Profiler
	seen time.Time
}

// Registry is the profilers seen per process, safe for concurrent use.
type Registry struct {
	ttl        time.Duration
	maxEntries int
	budget     Budget // nil: only maxEntries bounds it

	mu        sync.Mutex
	byProcess map[string]entry
	swept     time.Time // the last sweep of expired entries
}

// New is a registry whose entries live ttl after their process's last
// chunk, at most maxEntries of them, held in budget (nil: none).
func New(ttl time.Duration, maxEntries int, budget Budget) *Registry {
	return &Registry{ttl: ttl, maxEntries: maxEntries, budget: budget, byProcess: map[string]entry{}}
}

func entryBytes(process string, p Profiler) int64 {
	return int64(len(process) + len(p.ID) + entryOverhead)
}

// Seen records that process sent a chunk of profiler p at now. A new
// process is not remembered when the registry is full of live entries or
// the budget has no room.
func (r *Registry) Seen(process string, p Profiler, now time.Time) {
	if process == "" || p.ID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.byProcess[process]
	if ok && old.Profiler == p {
		old.seen = now
		r.byProcess[process] = old
		return
	}
	if ok {
		r.forget(process, old.Profiler)
	}
	if len(r.byProcess) >= r.maxEntries {
		r.sweep(now)
		if len(r.byProcess) >= r.maxEntries {
			return
		}
	}
	if r.budget != nil && !r.budget.TryTake(entryBytes(process, p)) {
		return
	}
	r.byProcess[process] = entry{Profiler: p, seen: now}
}

// Of is the profiler process's last chunk named, if that was within the
// registry's ttl before now.
func (r *Registry) Of(process string, now time.Time) (Profiler, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byProcess[process]
	if !ok || now.Sub(e.seen) > r.ttl {
		return Profiler{}, false
	}
	return e.Profiler, true
}

// Len is how many processes it remembers, expired ones not yet swept included.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byProcess)
}

// sweep forgets the expired entries, at most once per quarter ttl: a full
// registry of live entries is not walked on every chunk.
func (r *Registry) sweep(now time.Time) {
	if now.Sub(r.swept) < r.ttl/4 {
		return
	}
	r.swept = now
	for process, e := range r.byProcess {
		if now.Sub(e.seen) > r.ttl {
			r.forget(process, e.Profiler)
		}
	}
}

func (r *Registry) forget(process string, p Profiler) {
	delete(r.byProcess, process)
	if r.budget != nil {
		r.budget.Add(-entryBytes(process, p))
	}
}
