package profilechunk

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// dict reads the profiles dictionary defensively: every index comes from
// the input and may be out of range. Per-stack validity and per-location
// frame types are worked out once per call.
type dict struct {
	d       pprofile.ProfilesDictionary
	strs    pcommon.StringSlice
	stacks  pprofile.StackSlice
	locs    pprofile.LocationSlice
	funcs   pprofile.FunctionSlice
	maps    pprofile.MappingSlice
	attrs   pprofile.KeyValueAndUnitSlice
	links   pprofile.LinkSlice
	stackOK []int8  // 0 unknown, 1 valid, -1 dangling
	locPlat []int16 // 0 unknown, else 1 + readFrameType's value
}

func newDict(d pprofile.ProfilesDictionary) *dict {
	x := &dict{
		d: d, strs: d.StringTable(), stacks: d.StackTable(), locs: d.LocationTable(),
		funcs: d.FunctionTable(), maps: d.MappingTable(), attrs: d.AttributeTable(), links: d.LinkTable(),
	}
	x.stackOK = make([]int8, x.stacks.Len())
	x.locPlat = make([]int16, x.locs.Len())
	return x
}

// str returns the string at i, "" when out of range.
func (x *dict) str(i int32) string {
	if i < 0 || int(i) >= x.strs.Len() {
		return ""
	}
	return x.strs.At(int(i))
}

// attr returns the attribute at i and whether it exists.
func (x *dict) attr(i int32) (key string, v pcommon.Value, ok bool) {
	if i < 0 || int(i) >= x.attrs.Len() {
		return "", pcommon.Value{}, false
	}
	a := x.attrs.At(int(i))
	return x.str(a.KeyStrindex()), a.Value(), true
}

// validStack reports whether stack i exists and every location, line
// function and mapping it reaches is in range.
func (x *dict) validStack(i int32) bool {
	if i < 0 || int(i) >= len(x.stackOK) {
		return false
	}
	if x.stackOK[i] == 0 {
		x.stackOK[i] = -1
		if x.checkStack(x.stacks.At(int(i))) {
			x.stackOK[i] = 1
		}
	}
	return x.stackOK[i] == 1
}

func (x *dict) checkStack(st pprofile.Stack) bool {
	li := st.LocationIndices()
	for k := 0; k < li.Len(); k++ {
		l := li.At(k)
		if l < 0 || int(l) >= x.locs.Len() {
			return false
		}
		loc := x.locs.At(int(l))
		if m := loc.MappingIndex(); m < 0 || int(m) >= x.maps.Len() {
			return false
		}
		lines := loc.Lines()
		for j := 0; j < lines.Len(); j++ {
			if f := lines.At(j).FunctionIndex(); f < 0 || int(f) >= x.funcs.Len() {
				return false
			}
		}
	}
	return true
}

// link returns the trace and span ID of link i; ok is false for an index
// out of range or a zero trace or span ID (index 0 is the table's zero entry).
func (x *dict) link(i int32) (trace pcommon.TraceID, span pcommon.SpanID, ok bool) {
	if i <= 0 || int(i) >= x.links.Len() {
		return trace, span, false
	}
	l := x.links.At(int(i))
	trace, span = l.TraceID(), l.SpanID()
	return trace, span, !trace.IsEmpty() && !span.IsEmpty()
}
