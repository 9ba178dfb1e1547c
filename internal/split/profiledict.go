package split

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// A profiles part's dictionary holds what its own profiles refer to, not
// the batch's whole: a batch of a fleet's profiles routed to a hundred
// projects would otherwise cost its dictionary a hundred times while it is
// translated.

// reindex copies what part's profiles refer to in src (strings, functions,
// mappings, locations, stacks, attributes and links, each entry once, index
// 0 of each table first, as index 0 is by convention the table's empty
// entry) into part's own dictionary, and rewrites their indexes to it. An
// index out of range in src becomes -1, out of range in part too: the
// translator counts what refers to it as it would have.
func reindex(src pprofile.ProfilesDictionary, part pprofile.Profiles) {
	r := newReindexer(src, part.Dictionary())
	r.zeroEntries()
	rps := part.ResourceProfiles()
	for i := 0; i < rps.Len(); i++ {
		sps := rps.At(i).ScopeProfiles()
		for j := 0; j < sps.Len(); j++ {
			ps := sps.At(j).Profiles()
			for k := 0; k < ps.Len(); k++ {
				r.profile(ps.At(k))
			}
		}
	}
}

// reindexer maps src's indexes to dst's: for each table, src index → dst
// index + 1 (0: not copied yet).
type reindexer struct {
	src, dst                                      pprofile.ProfilesDictionary
	strs, funcs, maps, locs, stacks, attrs, links []int32
}

func newReindexer(src, dst pprofile.ProfilesDictionary) *reindexer {
	return &reindexer{
		src: src, dst: dst,
		strs:   make([]int32, src.StringTable().Len()),
		funcs:  make([]int32, src.FunctionTable().Len()),
		maps:   make([]int32, src.MappingTable().Len()),
		locs:   make([]int32, src.LocationTable().Len()),
		stacks: make([]int32, src.StackTable().Len()),
		attrs:  make([]int32, src.AttributeTable().Len()),
		links:  make([]int32, src.LinkTable().Len()),
	}
}

// zeroEntries copies entry 0 of every table that has one, so that it stays
// index 0 (an empty string, no link, no mapping).
func (r *reindexer) zeroEntries() {
	r.str(0)
	r.function(0)
	r.mapping(0)
	r.location(0)
	r.stack(0)
	r.attr(0)
	r.link(0)
}

// index returns the dst index of src entry i in memo, copying it with add
// the first time; -1 when i is out of range.
func index(memo []int32, i int32, add func(int) int32) int32 {
	if i < 0 || int(i) >= len(memo) {
		return -1
	}
	if memo[i] == 0 {
		memo[i] = add(int(i)) + 1
	}
	return memo[i] - 1
}

func (r *reindexer) str(i int32) int32 {
	return index(r.strs, i, func(i int) int32 {
		t := r.dst.StringTable()
		t.Append(r.src.StringTable().At(i))
		return int32(t.Len() - 1)
	})
}

func (r *reindexer) function(i int32) int32 {
	return index(r.funcs, i, func(i int) int32 {
		s := r.src.FunctionTable().At(i)
		d := r.dst.FunctionTable().AppendEmpty()
		d.SetNameStrindex(r.str(s.NameStrindex()))
		d.SetSystemNameStrindex(r.str(s.SystemNameStrindex()))
		d.SetFilenameStrindex(r.str(s.FilenameStrindex()))
		d.SetStartLine(s.StartLine())
		return int32(r.dst.FunctionTable().Len() - 1)
	})
}

func (r *reindexer) mapping(i int32) int32 {
	return index(r.maps, i, func(i int) int32 {
		s := r.src.MappingTable().At(i)
		d := r.dst.MappingTable().AppendEmpty()
		d.SetMemoryStart(s.MemoryStart())
		d.SetMemoryLimit(s.MemoryLimit())
		d.SetFileOffset(s.FileOffset())
		d.SetFilenameStrindex(r.str(s.FilenameStrindex()))
		r.attrIndices(s.AttributeIndices(), d.AttributeIndices())
		return int32(r.dst.MappingTable().Len() - 1)
	})
}

func (r *reindexer) location(i int32) int32 {
	return index(r.locs, i, func(i int) int32 {
		s := r.src.LocationTable().At(i)
		d := r.dst.LocationTable().AppendEmpty()
		d.SetMappingIndex(r.mapping(s.MappingIndex()))
		d.SetAddress(s.Address())
		lines := s.Lines()
		for k := 0; k < lines.Len(); k++ {
			sl, dl := lines.At(k), d.Lines().AppendEmpty()
			dl.SetFunctionIndex(r.function(sl.FunctionIndex()))
			dl.SetLine(sl.Line())
			dl.SetColumn(sl.Column())
		}
		r.attrIndices(s.AttributeIndices(), d.AttributeIndices())
		return int32(r.dst.LocationTable().Len() - 1)
	})
}

func (r *reindexer) stack(i int32) int32 {
	return index(r.stacks, i, func(i int) int32 {
		s := r.src.StackTable().At(i).LocationIndices()
		d := r.dst.StackTable().AppendEmpty().LocationIndices()
		d.EnsureCapacity(s.Len())
		for k := 0; k < s.Len(); k++ {
			d.Append(r.location(s.At(k)))
		}
		return int32(r.dst.StackTable().Len() - 1)
	})
}

func (r *reindexer) attr(i int32) int32 {
	return index(r.attrs, i, func(i int) int32 {
		s := r.src.AttributeTable().At(i)
		d := r.dst.AttributeTable().AppendEmpty()
		d.SetKeyStrindex(r.str(s.KeyStrindex()))
		d.SetUnitStrindex(r.str(s.UnitStrindex()))
		s.Value().CopyTo(d.Value())
		return int32(r.dst.AttributeTable().Len() - 1)
	})
}

func (r *reindexer) link(i int32) int32 {
	return index(r.links, i, func(i int) int32 {
		s := r.src.LinkTable().At(i)
		d := r.dst.LinkTable().AppendEmpty()
		d.SetTraceID(s.TraceID())
		d.SetSpanID(s.SpanID())
		return int32(r.dst.LinkTable().Len() - 1)
	})
}

// attrIndices writes src's attribute indexes, re-indexed, into dst.
func (r *reindexer) attrIndices(src, dst pcommon.Int32Slice) {
	dst.EnsureCapacity(src.Len())
	for k := 0; k < src.Len(); k++ {
		dst.Append(r.attr(src.At(k)))
	}
}

// inPlace rewrites the attribute indexes of s, which were src's.
func (r *reindexer) inPlace(s pcommon.Int32Slice) {
	for k := 0; k < s.Len(); k++ {
		s.SetAt(k, r.attr(s.At(k)))
	}
}

// profile rewrites one profile of the part, copied with src's indexes.
func (r *reindexer) profile(p pprofile.Profile) {
	for _, vt := range []pprofile.ValueType{p.SampleType(), p.PeriodType()} {
		vt.SetTypeStrindex(r.str(vt.TypeStrindex()))
		vt.SetUnitStrindex(r.str(vt.UnitStrindex()))
	}
	r.inPlace(p.AttributeIndices())
	samples := p.Samples()
	for k := 0; k < samples.Len(); k++ {
		s := samples.At(k)
		s.SetStackIndex(r.stack(s.StackIndex()))
		r.inPlace(s.AttributeIndices())
		s.SetLinkIndex(r.link(s.LinkIndex()))
	}
}
