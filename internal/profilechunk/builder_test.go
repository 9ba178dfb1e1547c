package profilechunk

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// pb builds pprofile.Profiles for tests; every dictionary table starts with
// its zero entry, as OTLP producers write them.
type pb struct {
	pd   pprofile.Profiles
	d    pprofile.ProfilesDictionary
	strs map[string]int32
}

func newPB() *pb {
	b := &pb{pd: pprofile.NewProfiles(), strs: map[string]int32{}}
	b.d = b.pd.Dictionary()
	b.str("")
	b.d.StackTable().AppendEmpty()
	b.d.LocationTable().AppendEmpty()
	b.d.FunctionTable().AppendEmpty()
	b.d.MappingTable().AppendEmpty()
	b.d.LinkTable().AppendEmpty()
	b.d.AttributeTable().AppendEmpty()
	return b
}

func (b *pb) str(s string) int32 {
	if i, ok := b.strs[s]; ok {
		return i
	}
	i := int32(b.d.StringTable().Len())
	b.d.StringTable().Append(s)
	b.strs[s] = i
	return i
}

func (b *pb) fn(name, file string) int32 {
	f := b.d.FunctionTable().AppendEmpty()
	f.SetNameStrindex(b.str(name))
	f.SetFilenameStrindex(b.str(file))
	return int32(b.d.FunctionTable().Len() - 1)
}

func (b *pb) attr(key string, v any) int32 {
	a := b.d.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(b.str(key))
	_ = a.Value().FromRaw(v)
	return int32(b.d.AttributeTable().Len() - 1)
}

func (b *pb) mapping(file, buildID string) int32 {
	m := b.d.MappingTable().AppendEmpty()
	m.SetFilenameStrindex(b.str(file))
	m.SetMemoryStart(0x400000)
	m.SetMemoryLimit(0x500000)
	if buildID != "" {
		m.AttributeIndices().Append(b.attr(buildIDKey, buildID))
	}
	return int32(b.d.MappingTable().Len() - 1)
}

// loc adds a location; lines are (function, line) pairs, leaf first.
func (b *pb) loc(addr uint64, mapping int32, frameType string, lines ...[2]int64) int32 {
	l := b.d.LocationTable().AppendEmpty()
	l.SetAddress(addr)
	l.SetMappingIndex(mapping)
	if frameType != "" {
		l.AttributeIndices().Append(b.attr("profile.frame.type", frameType))
	}
	for _, ln := range lines {
		x := l.Lines().AppendEmpty()
		x.SetFunctionIndex(int32(ln[0]))
		x.SetLine(ln[1])
	}
	return int32(b.d.LocationTable().Len() - 1)
}

func (b *pb) stack(locs ...int32) int32 {
	s := b.d.StackTable().AppendEmpty()
	s.LocationIndices().FromRaw(locs)
	return int32(b.d.StackTable().Len() - 1)
}

func (b *pb) link(trace, span byte) int32 {
	l := b.d.LinkTable().AppendEmpty()
	l.SetTraceID(pcommon.TraceID{trace, 1})
	l.SetSpanID(pcommon.SpanID{span, 1})
	return int32(b.d.LinkTable().Len() - 1)
}

func (b *pb) resource(attrs map[string]any) pprofile.ResourceProfiles {
	rp := b.pd.ResourceProfiles().AppendEmpty()
	_ = rp.Resource().Attributes().FromRaw(attrs)
	rp.ScopeProfiles().AppendEmpty()
	return rp
}

func (b *pb) profile(rp pprofile.ResourceProfiles, typ string) pprofile.Profile {
	p := rp.ScopeProfiles().At(0).Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(b.str(typ))
	return p
}

// sample adds a sample of stack on thread tid (named name, "" for none)
// with the given timestamps.
func (b *pb) sample(p pprofile.Profile, stack int32, tid int64, name string, link int32, ts ...uint64) {
	s := p.Samples().AppendEmpty()
	s.SetStackIndex(stack)
	s.SetLinkIndex(link)
	s.AttributeIndices().Append(b.attr("thread.id", tid))
	if name != "" {
		s.AttributeIndices().Append(b.attr("thread.name", name))
	}
	s.TimestampsUnixNano().FromRaw(ts)
}

const t0 = uint64(1_700_000_000_000_000_000)

func ms(n uint64) uint64 { return t0 + n*1_000_000 }

func fixedIDs() func() [16]byte {
	var n byte
	return func() [16]byte { n++; return [16]byte{0xc0, 15: n} }
}
