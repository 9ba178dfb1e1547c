package split

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// subset gives each profiles part a dictionary of its own: the entries of
// the batch's dictionary that the part's resources refer to, directly or
// through other entries, in their order in the batch's, each table's entry
// 0 (OTLP's zero entry) first and still at 0; and rewrites the part's
// indexes to match. The indexes that can refer into a table, at pdata
// pprofile v0.165.0:
//
//	profile:   attribute_indices; sample_type, period_type: type_strindex, unit_strindex
//	sample:    stack_index, attribute_indices, link_index
//	stack:     location_indices
//	location:  mapping_index, attribute_indices; lines: function_index
//	function:  name_strindex, system_name_strindex, filename_strindex
//	mapping:   filename_strindex, attribute_indices
//	attribute: key_strindex, unit_strindex
//
// Links, attribute values, resources and scopes hold no index.
type subset struct {
	src                                       pprofile.ProfilesDictionary
	strs, attrs, links, stacks, locs, fns, ms remap
}

func newSubset(src pprofile.ProfilesDictionary) *subset {
	return &subset{
		src:    src,
		strs:   newRemap(src.StringTable().Len()),
		attrs:  newRemap(src.AttributeTable().Len()),
		links:  newRemap(src.LinkTable().Len()),
		stacks: newRemap(src.StackTable().Len()),
		locs:   newRemap(src.LocationTable().Len()),
		fns:    newRemap(src.FunctionTable().Len()),
		ms:     newRemap(src.MappingTable().Len()),
	}
}

// give puts into part's dictionary (empty) what part's resources refer to,
// and rewrites their indexes.
func (x *subset) give(part pprofile.Profiles) {
	x.markZeros()
	eachProfile(part, x.markProfile)
	for _, r := range x.remaps() {
		r.number()
	}
	x.copyTo(part.Dictionary())
	eachProfile(part, x.rewriteProfile)
	for _, r := range x.remaps() {
		r.reset()
	}
}

func (x *subset) remaps() []*remap {
	return []*remap{&x.strs, &x.attrs, &x.links, &x.stacks, &x.locs, &x.fns, &x.ms}
}

// eachProfile calls fn on every profile of pd.
func eachProfile(pd pprofile.Profiles, fn func(pprofile.Profile)) {
	rps := pd.ResourceProfiles()
	for i := 0; i < rps.Len(); i++ {
		sps := rps.At(i).ScopeProfiles()
		for j := 0; j < sps.Len(); j++ {
			profs := sps.At(j).Profiles()
			for k := 0; k < profs.Len(); k++ {
				fn(profs.At(k))
			}
		}
	}
}

// markZeros keeps every table's entry 0, with what it refers to.
func (x *subset) markZeros() {
	x.strs.keep(0)
	x.links.keep(0)
	x.markAttr(0)
	x.markStack(0)
	x.markLocation(0)
	x.markFunction(0)
	x.markMapping(0)
}

func (x *subset) markProfile(p pprofile.Profile) {
	x.markAttrs(p.AttributeIndices())
	x.markValueType(p.SampleType())
	x.markValueType(p.PeriodType())
	ss := p.Samples()
	for i := 0; i < ss.Len(); i++ {
		s := ss.At(i)
		x.markStack(s.StackIndex())
		x.markAttrs(s.AttributeIndices())
		x.links.keep(s.LinkIndex())
	}
}

func (x *subset) markValueType(v pprofile.ValueType) {
	x.strs.keep(v.TypeStrindex())
	x.strs.keep(v.UnitStrindex())
}

func (x *subset) markAttrs(idx pcommon.Int32Slice) {
	for i := 0; i < idx.Len(); i++ {
		x.markAttr(idx.At(i))
	}
}

func (x *subset) markAttr(i int32) {
	if !x.attrs.keep(i) {
		return
	}
	a := x.src.AttributeTable().At(int(i))
	x.strs.keep(a.KeyStrindex())
	x.strs.keep(a.UnitStrindex())
}

func (x *subset) markStack(i int32) {
	if !x.stacks.keep(i) {
		return
	}
	li := x.src.StackTable().At(int(i)).LocationIndices()
	for k := 0; k < li.Len(); k++ {
		x.markLocation(li.At(k))
	}
}

func (x *subset) markLocation(i int32) {
	if !x.locs.keep(i) {
		return
	}
	loc := x.src.LocationTable().At(int(i))
	x.markMapping(loc.MappingIndex())
	x.markAttrs(loc.AttributeIndices())
	lines := loc.Lines()
	for k := 0; k < lines.Len(); k++ {
		x.markFunction(lines.At(k).FunctionIndex())
	}
}

func (x *subset) markFunction(i int32) {
	if !x.fns.keep(i) {
		return
	}
	fn := x.src.FunctionTable().At(int(i))
	x.strs.keep(fn.NameStrindex())
	x.strs.keep(fn.SystemNameStrindex())
	x.strs.keep(fn.FilenameStrindex())
}

func (x *subset) markMapping(i int32) {
	if !x.ms.keep(i) {
		return
	}
	m := x.src.MappingTable().At(int(i))
	x.strs.keep(m.FilenameStrindex())
	x.markAttrs(m.AttributeIndices())
}

func (x *subset) rewriteProfile(p pprofile.Profile) {
	x.attrs.indices(p.AttributeIndices())
	x.rewriteValueType(p.SampleType())
	x.rewriteValueType(p.PeriodType())
	ss := p.Samples()
	for i := 0; i < ss.Len(); i++ {
		s := ss.At(i)
		s.SetStackIndex(x.stacks.index(s.StackIndex()))
		x.attrs.indices(s.AttributeIndices())
		s.SetLinkIndex(x.links.index(s.LinkIndex()))
	}
}

func (x *subset) rewriteValueType(v pprofile.ValueType) {
	v.SetTypeStrindex(x.strs.index(v.TypeStrindex()))
	v.SetUnitStrindex(x.strs.index(v.UnitStrindex()))
}
