package assemble

// spanKey names one span of one trace of one owner.
type spanKey struct {
	owner uint32
	trace [16]byte
	id    [8]byte
}

// recent remembers the span ids that were sent recently (local roots, and
// spans released from holding), so that a child arriving after its parent went
// out passes at once instead of waiting for nothing. Two generations: when
// the current one holds max keys it becomes the old one and the old one is
// dropped, so at least the last max ids are remembered, at most 2 × max.
type recent struct {
	max      int
	cur, old map[spanKey]struct{}
}

func newRecent(limit int) recent {
	return recent{max: limit, cur: make(map[spanKey]struct{}), old: make(map[spanKey]struct{})}
}

func (r *recent) add(k spanKey) {
	if r.max <= 0 {
		return
	}
	if len(r.cur) >= r.max {
		r.old, r.cur = r.cur, r.old
		clear(r.cur)
	}
	r.cur[k] = struct{}{}
}

func (r *recent) has(k spanKey) bool {
	if _, ok := r.cur[k]; ok {
		return true
	}
	_, ok := r.old[k]
	return ok
}
