package split

import (
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// table is what a pprofile dictionary table offers: FunctionSlice,
// LocationSlice, and the others but the string table.
type table[E any] interface {
	At(int) E
	AppendEmpty() E
	EnsureCapacity(int)
}

// copyKept appends to dst a copy of each entry of src that r keeps, in
// order, and lets fix rewrite the copy's indexes.
func copyKept[E interface{ CopyTo(E) }, T table[E]](src, dst T, r *remap, fix func(E)) {
	dst.EnsureCapacity(len(r.kept))
	for _, i := range r.kept {
		e := dst.AppendEmpty()
		src.At(int(i)).CopyTo(e)
		fix(e)
	}
}

// copyTo fills dst (empty) with the kept entries of every table, their
// indexes rewritten into dst's.
func (x *subset) copyTo(dst pprofile.ProfilesDictionary) {
	strs, src := dst.StringTable(), x.src.StringTable()
	strs.EnsureCapacity(len(x.strs.kept))
	for _, i := range x.strs.kept {
		strs.Append(src.At(int(i)))
	}
	copyKept(x.src.AttributeTable(), dst.AttributeTable(), &x.attrs, func(a pprofile.KeyValueAndUnit) {
		a.SetKeyStrindex(x.strs.index(a.KeyStrindex()))
		a.SetUnitStrindex(x.strs.index(a.UnitStrindex()))
	})
	copyKept(x.src.LinkTable(), dst.LinkTable(), &x.links, func(pprofile.Link) {})
	copyKept(x.src.StackTable(), dst.StackTable(), &x.stacks, func(s pprofile.Stack) {
		x.locs.indices(s.LocationIndices())
	})
	copyKept(x.src.LocationTable(), dst.LocationTable(), &x.locs, func(l pprofile.Location) {
		l.SetMappingIndex(x.ms.index(l.MappingIndex()))
		x.attrs.indices(l.AttributeIndices())
		lines := l.Lines()
		for k := 0; k < lines.Len(); k++ {
			lines.At(k).SetFunctionIndex(x.fns.index(lines.At(k).FunctionIndex()))
		}
	})
	copyKept(x.src.FunctionTable(), dst.FunctionTable(), &x.fns, func(f pprofile.Function) {
		f.SetNameStrindex(x.strs.index(f.NameStrindex()))
		f.SetSystemNameStrindex(x.strs.index(f.SystemNameStrindex()))
		f.SetFilenameStrindex(x.strs.index(f.FilenameStrindex()))
	})
	copyKept(x.src.MappingTable(), dst.MappingTable(), &x.ms, func(m pprofile.Mapping) {
		m.SetFilenameStrindex(x.strs.index(m.FilenameStrindex()))
		x.attrs.indices(m.AttributeIndices())
	})
}
