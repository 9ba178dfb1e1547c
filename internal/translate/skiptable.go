package translate

import "encoding/binary"

// skipTable is the skip path's open-addressing table of span ids: each slot
// holds 1 + the index in s.skip of a span, 0 when free. Its size is a power
// of two at least twice the spans', and the top bits of skipHash index it.
type skipTable struct {
	slots []int32
	shift uint
	mask  uint64
}

// skipTable returns the reused table, cleared, sized for n spans.
func (s *state) skipTable(n int) skipTable {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	shift := uint(64)
	for m := size; m > 1; m >>= 1 {
		shift--
	}
	slots := grow(s.skipTab, size)
	clear(slots)
	s.skipTab = slots
	return skipTable{slots: slots, shift: shift, mask: uint64(size - 1)}
}

// find looks up the span id of trace (t0, t1) in sk: it returns the span's
// index, or -1 and the free slot where the id would go.
func (t skipTable) find(sk []skipRef, t0, t1, id uint64) (idx int32, slot uint64) {
	h := skipHash(t0, t1, id) >> t.shift
	for {
		e := t.slots[h]
		if e == 0 {
			return -1, h
		}
		if q := &sk[e-1]; q.id == id && q.t0 == t0 && q.t1 == t1 {
			return e - 1, h
		}
		h = (h + 1) & t.mask
	}
}

// dedupeSkipIDs puts every span id into the table: the first occurrence in
// a trace keeps its id, later ones get a generated one (which is inserted
// like any other).
func (s *state) dedupeSkipIDs(tab skipTable) {
	sk := s.skip
	for i := range sk {
		r := &sk[i]
		for {
			idx, slot := tab.find(sk, r.t0, r.t1, r.id)
			if idx < 0 {
				tab.slots[slot] = int32(i + 1)
				break
			}
			id := s.newSpanID()
			r.id = binary.LittleEndian.Uint64(id[:])
		}
	}
}

// linkSkipParents sets each span's parent index: the parent is in this
// batch, in the same trace, not the span itself, and of the same resource
// or the same service.
func (s *state) linkSkipParents(tab skipTable) {
	sk, svc := s.skip, s.skipSvc
	for i := range sk {
		r := &sk[i]
		if r.parent == 0 {
			continue
		}
		p, _ := tab.find(sk, r.t0, r.t1, r.parent)
		if p < 0 || p == int32(i) {
			continue
		}
		if r.res != sk[p].res && svc[r.res] != svc[sk[p].res] {
			continue
		}
		r.parentIdx = p
	}
}

// skipHash mixes a trace id and a span id; the top bits index the table.
func skipHash(t0, t1, id uint64) uint64 {
	return (id ^ t0*0x9E3779B97F4A7C15 ^ t1*0xC2B2AE3D27D4EB4F) * 0xFF51AFD7ED558CCD
}
