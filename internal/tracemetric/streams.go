package tracemetric

import (
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

// Streams holds the previous point of each cumulative stream (a metric of a
// resource and scope with one set of attributes), so that its next point
// becomes a delta. It holds at most maxBytes / StreamBytes streams; when
// full, the stream used longest ago is evicted. It is safe for concurrent use.
type Streams struct {
	shards  [numShards]shard
	since   uint64 // ns: streams that start later are new to everyone
	held    atomic.Int64
	evicted atomic.Int64
}

// NewStreams holds at most maxBytes of stream state; since (ns since the
// epoch, the exporter's start) tells a stream that began after it, whose
// first point is all new, from one that may have been sent before.
func NewStreams(maxBytes int64, since uint64) *Streams {
	s := &Streams{since: since}
	per := max(int(maxBytes/StreamBytes/numShards), 1)
	for i := range s.shards {
		s.shards[i] = shard{index: map[uint64]int32{}, max: per, head: -1, tail: -1}
	}
	return s
}

// Held is the bytes of stream state held now.
func (s *Streams) Held() int64 { return s.held.Load() }

// Evicted is how many streams were evicted to keep within the bound.
func (s *Streams) Evicted() int64 { return s.evicted.Load() }

// Len is how many streams are held.
func (s *Streams) Len() int { return int(s.held.Load() / StreamBytes) }

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
// heldDelta is the change in bytes held.
func (s *Streams) delta(key uint64, p cum, fFalls bool) (d cum, o outcome, heldDelta int64) {
	sh := &s.shards[key%numShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	prev, ok := sh.get(key)
	if !ok {
		heldDelta = sh.put(key, p, s)
		s.held.Add(heldDelta)
		if p.start != 0 && p.start >= s.since && p.start > sh.evictedStart {
			return p, asDelta, heldDelta // began after we started, and after any eviction: all of it is new
		}
		return cum{}, noBaseline, heldDelta
	}
	reset := p.start != prev.start || p.i < prev.i || fFalls && p.f < prev.f
	switch {
	case reset && p.start != 0 && p.start < prev.start:
		return cum{}, noBaseline, 0 // an older start: a stale point, keep the newer
	case reset:
		*prev = p
		return p, asDelta, 0
	case p.time <= prev.time:
		return cum{}, noBaseline, 0 // a point older than the one held: stale
	}
	d = cum{start: prev.time, time: p.time, i: p.i - prev.i, f: p.f - prev.f}
	*prev = p
	return d, asDelta, 0
}

// shard is a part of the streams with its own lock: an index and slots
// linked from most to least recently used. A stream leaves only by
// eviction, its slot taken by the new one, so no slot is ever free.
type shard struct {
	mu           sync.Mutex
	index        map[uint64]int32
	slots        []slot
	head, tail   int32  // most and least recently used; -1 when empty
	max          int    // slots at most
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

// put holds a new stream, evicting the least recently used when full; it
// returns the change in bytes held.
func (sh *shard) put(key uint64, p cum, s *Streams) int64 {
	var at int32
	var grew int64 = StreamBytes
	switch {
	case len(sh.index) >= sh.max:
		at = sh.tail
		old := &sh.slots[at]
		sh.evictedStart = max(sh.evictedStart, old.p.start)
		delete(sh.index, old.key)
		sh.unlink(at)
		s.evicted.Add(1)
		grew = 0
	default:
		sh.slots = append(sh.slots, slot{})
		at = int32(len(sh.slots) - 1)
	}
	sh.slots[at] = slot{key: key, p: p, prev: -1, next: -1}
	sh.index[key] = at
	sh.pushFront(at)
	return grew
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
