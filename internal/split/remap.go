package split

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// remap is what one part keeps of one dictionary table: to holds, for each
// entry of the source table, its index in the part's table (-1 while it is
// not kept), and kept the source indexes kept. One remap serves the parts
// of a batch in turn (reset), so marking costs what a part refers to, not
// the size of the source table.
type remap struct {
	to   []int32
	kept []int32
}

func newRemap(n int) remap {
	r := remap{to: make([]int32, n)}
	for i := range r.to {
		r.to[i] = -1
	}
	return r
}

// keep marks entry i kept and reports whether it was not kept before. An
// index out of range is never kept.
func (r *remap) keep(i int32) bool {
	if i < 0 || int(i) >= len(r.to) || r.to[i] >= 0 {
		return false
	}
	r.to[i] = 0
	r.kept = append(r.kept, i)
	return true
}

// number gives the kept entries their indexes in the part's table, in
// their order in the source table.
func (r *remap) number() {
	slices.Sort(r.kept)
	for k, i := range r.kept {
		r.to[i] = int32(k)
	}
}

// index is the part's index of source entry i. An index out of range
// stays as it is: the part's table is no longer than the source's, so it
// stays out of range, and a reader meets the same dangling index in the
// part as in the batch.
func (r *remap) index(i int32) int32 {
	if i < 0 || int(i) >= len(r.to) {
		return i
	}
	return r.to[i]
}

// indices rewrites every index of s into the part's.
func (r *remap) indices(s pcommon.Int32Slice) {
	for k := 0; k < s.Len(); k++ {
		s.SetAt(k, r.index(s.At(k)))
	}
}

// reset forgets the kept entries, for the next part.
func (r *remap) reset() {
	for _, i := range r.kept {
		r.to[i] = -1
	}
	r.kept = r.kept[:0]
}
