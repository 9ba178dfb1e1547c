package tracemetric

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// StreamBytes is what one held stream costs at most: its slot (48 bytes,
// up to twice that while the slot slice grows by doubling) and its entry in
// the shard's index (a map[uint64]int32: about 24 bytes, up to twice that
// with the map's spare room). TestStreamsHeapWithinHeld holds it to the heap.
const StreamBytes = 160

// numShards spreads the streams over locks, so that concurrent pushes
// rarely wait for each other.
const numShards = 16

// Pool bounds the stream state of every project, in equal shares: while the
// pool has room any project's [Streams] may grow; when it is full, a new
// stream evicts the least recently used stream of the project holding most
// (the one furthest past its share). One project's churn evicts its own
// streams, never those of a project within its share (the pool / the
// projects). It is safe for concurrent use.
type Pool struct {
	max   int64  // streams
	since uint64 // ns: streams that start later are new to everyone
	held  atomic.Int64

	mu      sync.Mutex
	members []*Streams
}

// NewPool holds at most maxBytes of stream state; since (ns since the
// epoch, the exporter's start) tells a stream that began after it, whose
// first point is all new, from one that may have been sent before.
func NewPool(maxBytes int64, since uint64) *Pool {
	return &Pool{max: max(maxBytes/StreamBytes, 1), since: since}
}

// NewStreams is one more project's part of the pool, holding nothing yet.
func (p *Pool) NewStreams() *Streams {
	s := &Streams{pool: p}
	for i := range s.shards {
		s.shards[i] = shard{index: map[uint64]int32{}, head: -1, tail: -1}
	}
	p.mu.Lock()
	p.members = append(p.members, s)
	p.mu.Unlock()
	return s
}

// Held is the bytes of stream state the pool holds now.
func (p *Pool) Held() int64 { return p.held.Load() * StreamBytes }

// Streams holds one project's previous point of each cumulative stream (a
// metric of a resource and scope with one set of attributes), so that its
// next point becomes a delta. Its pool bounds it (see [Pool]); an evicted
// stream is the least recently used of its shard. It is safe for concurrent
// use.
type Streams struct {
	pool    *Pool
	shards  [numShards]shard
	held    atomic.Int64 // streams
	evicted atomic.Int64
	next    atomic.Uint32 // the shard another project's eviction tries first
}

// NewStreams is the streams of a pool of its own: at most maxBytes (see
// [NewPool]).
func NewStreams(maxBytes int64, since uint64) *Streams {
	return NewPool(maxBytes, since).NewStreams()
}

// Held is the bytes of stream state held now.
func (s *Streams) Held() int64 { return s.held.Load() * StreamBytes }

// Evicted is how many of these streams were evicted to keep within the bound.
func (s *Streams) Evicted() int64 { return s.evicted.Load() }

// Len is how many streams are held.
func (s *Streams) Len() int { return int(s.held.Load()) }

// cum is one cumulative point: for a number sum, i (int) or f (double) is the
// value; for a histogram or summary, i is the count and f the sum.
type cum struct {
	start, time uint64
	i           int64
	f           float64
}

// outcome is what became of a cumulative point.
type outcome uint8

const (
	asDelta    outcome = iota // d is the increase since the previous point
	noBaseline                // nothing to subtract: the stream's first (of unknown start) or stale
)

// delta returns the increase of the stream key since its previous point,
// and keeps p as its new previous point. A new start time, or a count that
// fell (fell too: f, when fFalls), is a reset: the increase is p itself.
// heldDelta is the change in bytes the pool holds.
func (s *Streams) delta(key uint64, p cum, fFalls bool) (d cum, o outcome, heldDelta int64) {
	sh := &s.shards[key%numShards]
	sh.mu.Lock()
	if prev, ok := sh.get(key); ok {
		d, o = advance(prev, p, fFalls)
		sh.mu.Unlock()
		return d, o, 0
	}
	sh.mu.Unlock()
	// a new stream: make room first, holding no lock (room may evict
	// another project's stream, under its shard's lock)
	if s.pool.room(s, int(key%numShards)) {
		heldDelta = StreamBytes
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if prev, ok := sh.get(key); ok { // another push added it meanwhile: the room is not needed
		s.held.Add(-1)
		s.pool.held.Add(-1)
		d, o = advance(prev, p, fFalls)
		return d, o, heldDelta - StreamBytes
	}
	sh.put(key, p)
	if p.start != 0 && p.start >= s.pool.since && p.start > sh.evictedStart {
		return p, asDelta, heldDelta // began after we started, and after any eviction: all of it is new
	}
	return cum{}, noBaseline, heldDelta
}

// advance is the increase from prev to p, which becomes prev.
func advance(prev *cum, p cum, fFalls bool) (cum, outcome) {
	reset := p.start != prev.start || p.i < prev.i || fFalls && p.f < prev.f
	switch {
	case reset && p.start != 0 && p.start < prev.start:
		return cum{}, noBaseline // an older start: a stale point, keep the newer
	case reset:
		*prev = p
		return p, asDelta
	case p.time <= prev.time:
		return cum{}, noBaseline // a point older than the one held: stale
	}
	d := cum{start: prev.time, time: p.time, i: p.i - prev.i, f: p.f - prev.f}
	*prev = p
	return d, asDelta
}

// room counts one more stream for s, true when the pool grew: while the
// pool has room it grows; when full, the project holding most (s counted
// with its new stream; s itself on a tie) evicts its least
// recently used stream, from shard prefer first when it is s. Should no
// stream be left to evict (they were just taken), the pool grows by this
// one stream past its bound.
func (p *Pool) room(s *Streams, prefer int) bool {
	for {
		n := p.held.Load()
		if n >= p.max {
			break
		}
		if p.held.CompareAndSwap(n, n+1) {
			s.held.Add(1)
			return true
		}
	}
	for range numShards {
		v := p.holdingMost(s)
		from := prefer
		if v != s {
			from = int(v.next.Add(1))
		}
		if v.evictOne(from) {
			s.held.Add(1)
			return false
		}
	}
	p.held.Add(1)
	s.held.Add(1)
	return true
}

// holdingMost is the project holding most streams, s counted with one
// more; s when no other holds more.
func (p *Pool) holdingMost(s *Streams) *Streams {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, most := s, s.held.Load()+1
	for _, m := range p.members {
		if h := m.held.Load(); h > most {
			v, most = m, h
		}
	}
	return v
}

// evictOne evicts the least recently used stream of the first shard from
// from on that holds any; false when none does.
func (s *Streams) evictOne(from int) bool {
	for i := range numShards {
		sh := &s.shards[(from+i)%numShards]
		sh.mu.Lock()
		ok := sh.tail >= 0
		if ok {
			sh.remove(sh.tail)
			s.held.Add(-1)
			s.evicted.Add(1)
		}
		sh.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// shard is a part of one project's streams with its own lock: an index and
// slots linked from most to least recently used. The slots are dense: a
// stream evicted leaves its place to the last slot.
type shard struct {
	mu           sync.Mutex
	index        map[uint64]int32
	slots        []slot
	head, tail   int32  // most and least recently used; -1 when empty
	evictedStart uint64 // the latest start time of an evicted stream
}

type slot struct {
	key        uint64
	p          cum
	prev, next int32
}

// get finds key's previous point and marks the stream used.
func (sh *shard) get(key uint64) (*cum, bool) {
	at, ok := sh.index[key]
	if !ok {
		return nil, false
	}
	sh.unlink(at)
	sh.pushFront(at)
	return &sh.slots[at].p, true
}

// put holds a new stream, its room already made.
func (sh *shard) put(key uint64, p cum) {
	sh.slots = append(sh.slots, slot{key: key, p: p, prev: -1, next: -1})
	at := int32(len(sh.slots) - 1)
	sh.index[key] = at
	sh.pushFront(at)
}

// remove evicts the stream at, moving the last slot into its place; once
// less than half the slots' room is used, the slots and the index are
// rebuilt at their size, so that what the heap holds follows what is held.
func (sh *shard) remove(at int32) {
	old := &sh.slots[at]
	sh.evictedStart = max(sh.evictedStart, old.p.start)
	delete(sh.index, old.key)
	sh.unlink(at)
	last := int32(len(sh.slots) - 1)
	if at != last {
		sh.slots[at] = sh.slots[last]
		moved := &sh.slots[at]
		sh.index[moved.key] = at
		if moved.prev >= 0 {
			sh.slots[moved.prev].next = at
		} else {
			sh.head = at
		}
		if moved.next >= 0 {
			sh.slots[moved.next].prev = at
		} else {
			sh.tail = at
		}
	}
	sh.slots = sh.slots[:last]
	if len(sh.slots) < cap(sh.slots)/2 {
		sh.slots = append([]slot(nil), sh.slots...)
		index := make(map[uint64]int32, len(sh.slots))
		maps.Copy(index, sh.index)
		sh.index = index
	}
}

func (sh *shard) unlink(at int32) {
	sl := &sh.slots[at]
	if sl.prev >= 0 {
		sh.slots[sl.prev].next = sl.next
	} else {
		sh.head = sl.next
	}
	if sl.next >= 0 {
		sh.slots[sl.next].prev = sl.prev
	} else {
		sh.tail = sl.prev
	}
	sl.prev, sl.next = -1, -1
}

func (sh *shard) pushFront(at int32) {
	sl := &sh.slots[at]
	sl.prev, sl.next = -1, sh.head
	if sh.head >= 0 {
		sh.slots[sh.head].prev = at
	}
	sh.head = at
	if sh.tail < 0 {
		sh.tail = at
	}
}

// Release gives s's part of the pool back: its streams are forgotten and
// it leaves the pool (a retired project's). It returns the bytes it held.
// s must not be used again.
func (s *Streams) Release() int64 {
	p := s.pool
	p.mu.Lock()
	p.members = slices.DeleteFunc(p.members, func(m *Streams) bool { return m == s })
	p.mu.Unlock()
	var n int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += int64(len(sh.slots))
		sh.index, sh.slots, sh.head, sh.tail = map[uint64]int32{}, nil, -1, -1
		sh.mu.Unlock()
	}
	s.held.Add(-n)
	p.held.Add(-n)
	return n * StreamBytes
}
