package profilers

import (
	"container/list"
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

// entryOverhead is what one entry costs beyond its key's and its strings'
// bytes: the map's bucket share, the list element, the string headers, the
// times and the flag.
const entryOverhead = 192

// Profiler is what a process's chunks named: its profiler ID, whether its
// platform is a UI one (its chunks are limited by profile_chunk_ui and
// profile_duration_ui), and, for a span's key, the chunk's thread_id of
// the first sample linked to the span.
type Profiler struct {
	ID     string
	UI     bool
	Thread string
}

type entry struct {
	key string
	Profiler
	seen time.Time
	// conflictUntil: another profiler was seen under the same key; the key
	// names none until ttl after the last such change.
	conflictUntil time.Time
}

// share is one project's entries, the least recently seen last.
type share struct {
	byKey map[string]*list.Element
	order list.List // of *entry
}

// Registry is the profilers seen per project and key, safe for concurrent
// use. Every project gets an equal share of maxEntries: a project at its
// share replaces its own least recently seen entry, and one under its
// share takes room from the project holding the most.
type Registry struct {
	ttl        time.Duration
	maxEntries int
	budget     Budget // nil: only maxEntries bounds it

	mu       sync.Mutex
	projects map[string]*share
	total    int
	swept    time.Time // the last sweep of expired entries
}

// New is a registry whose entries live ttl after their last chunk, at most
// maxEntries of them over all projects, held in budget (nil: none).
func New(ttl time.Duration, maxEntries int, budget Budget) *Registry {
	return &Registry{ttl: ttl, maxEntries: max(1, maxEntries), budget: budget, projects: map[string]*share{}}
}

func entryBytes(key string, p Profiler) int64 {
	return int64(len(key) + len(p.ID) + len(p.Thread) + entryOverhead)
}

// Seen records that a chunk of profiler p was offered at now for project
// under key (a process identity or a span the chunk's samples ran in).
// A key seen with another profiler within ttl names neither for ttl.
func (r *Registry) Seen(project, key string, p Profiler, now time.Time) {
	if key == "" || p.ID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweep(now)
	sh := r.projects[project]
	if sh == nil {
		sh = &share{byKey: map[string]*list.Element{}}
		r.projects[project] = sh
	}
	if el, ok := sh.byKey[key]; ok {
		e := el.Value.(*entry)
		if e.ID != p.ID && now.Sub(e.seen) <= r.ttl {
			e.conflictUntil = now.Add(r.ttl)
		}
		if d := entryBytes(key, p) - entryBytes(key, e.Profiler); d <= 0 || r.budget == nil || r.budget.TryTake(d) {
			r.budgetAdd(min(d, 0))
			e.Profiler = p
		}
		e.seen = now
		sh.order.MoveToFront(el)
		return
	}
	r.makeRoom(sh)
	if r.budget != nil && !r.budget.TryTake(entryBytes(key, p)) {
		if sh.order.Len() == 0 {
			return
		}
		r.evict(sh) // the budget is full: this project's own oldest makes room
		if !r.budget.TryTake(entryBytes(key, p)) {
			return
		}
	}
	sh.byKey[key] = sh.order.PushFront(&entry{key: key, Profiler: p, seen: now})
	r.total++
}

// makeRoom evicts one entry when sh is at its share (its own oldest) or
// the registry is full (the oldest of the project holding the most).
func (r *Registry) makeRoom(sh *share) {
	fair := max(1, r.maxEntries/max(1, len(r.projects)))
	switch {
	case sh.order.Len() >= fair:
		r.evict(sh)
	case r.total >= r.maxEntries:
		var big *share
		for _, o := range r.projects {
			if big == nil || o.order.Len() > big.order.Len() {
				big = o
			}
		}
		r.evict(big)
	}
}

// Of is the profiler key last named in project, if that was within ttl
// before now and no other profiler was named under it since ttl before now.
func (r *Registry) Of(project, key string, now time.Time) (Profiler, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sh := r.projects[project]
	if sh == nil {
		return Profiler{}, false
	}
	el, ok := sh.byKey[key]
	if !ok {
		return Profiler{}, false
	}
	e := el.Value.(*entry)
	if now.Sub(e.seen) > r.ttl || now.Before(e.conflictUntil) {
		return Profiler{}, false
	}
	return e.Profiler, true
}

// Len is how many entries project holds, expired ones not yet swept included.
func (r *Registry) Len(project string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sh := r.projects[project]; sh != nil {
		return sh.order.Len()
	}
	return 0
}

// Forget drops project's entries (a retired project's), giving back what
// they held: the projects left share maxEntries.
func (r *Registry) Forget(project string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sh := r.projects[project]
	if sh == nil {
		return
	}
	for sh.order.Len() > 0 {
		r.evict(sh)
	}
	delete(r.projects, project)
}

// sweep forgets the expired entries, at most once per quarter ttl; each
// project's list is walked from its oldest end only as far as they go.
func (r *Registry) sweep(now time.Time) {
	if now.Sub(r.swept) < r.ttl/4 {
		return
	}
	r.swept = now
	for project, sh := range r.projects {
		for el := sh.order.Back(); el != nil && now.Sub(el.Value.(*entry).seen) > r.ttl; el = sh.order.Back() {
			r.evict(sh)
		}
		if sh.order.Len() == 0 {
			delete(r.projects, project)
		}
	}
}

// evict forgets the least recently seen entry of sh.
func (r *Registry) evict(sh *share) {
	el := sh.order.Back()
	if el == nil {
		return
	}
	e := sh.order.Remove(el).(*entry)
	delete(sh.byKey, e.key)
	r.total--
	r.budgetAdd(-entryBytes(e.key, e.Profiler))
}

func (r *Registry) budgetAdd(n int64) {
	if r.budget != nil && n != 0 {
		r.budget.Add(n)
	}
}
