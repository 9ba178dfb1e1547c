package split

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
	f.SetSystemNameStrindex(b.str("sys." + name))
	f.SetFilenameStrindex(b.str(file))
	f.SetStartLine(3)
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
	m.AttributeIndices().Append(b.attr("process.executable.build_id.gnu", buildID))
	return int32(b.d.MappingTable().Len() - 1)
}

// loc adds a native location in mapping whose lines are fns, leaf first.
func (b *pb) loc(mapping int32, fns ...int32) int32 {
	l := b.d.LocationTable().AppendEmpty()
	l.SetAddress(0x401000 + uint64(b.d.LocationTable().Len()))
	l.SetMappingIndex(mapping)
	l.AttributeIndices().Append(b.attr("profile.frame.type", "native"))
	for i, f := range fns {
		x := l.Lines().AppendEmpty()
		x.SetFunctionIndex(f)
		x.SetLine(int64(10 + i))
	}
	return int32(b.d.LocationTable().Len() - 1)
}

func (b *pb) stack(locs ...int32) int32 {
	s := b.d.StackTable().AppendEmpty()
	s.LocationIndices().FromRaw(locs)
	return int32(b.d.StackTable().Len() - 1)
}

func (b *pb) link(trace byte) int32 {
	l := b.d.LinkTable().AppendEmpty()
	l.SetTraceID(pcommon.TraceID{trace, 1})
	l.SetSpanID(pcommon.SpanID{trace, 2})
	return int32(b.d.LinkTable().Len() - 1)
}

// profile adds a resource of service with one CPU profile.
func (b *pb) profile(service string) pprofile.Profile {
	rp := b.pd.ResourceProfiles().AppendEmpty()
	_ = rp.Resource().Attributes().FromRaw(map[string]any{
		"service.name": service, "telemetry.sdk.language": "cpp", "process.pid": int64(len(service)),
	})
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(b.str("samples"))
	p.SampleType().SetUnitStrindex(b.str("count"))
	p.PeriodType().SetTypeStrindex(b.str("cpu"))
	p.PeriodType().SetUnitStrindex(b.str("nanoseconds"))
	p.AttributeIndices().Append(b.attr("profile.owner", service))
	return p
}

const t0 = uint64(1_700_000_000_000_000_000)

// samples adds n samples of stack on thread tid, 10 ms apart, linked to
// link.
func (b *pb) samples(p pprofile.Profile, stack, link int32, tid int64, n int) {
	for i := range n {
		s := p.Samples().AppendEmpty()
		s.SetStackIndex(stack)
		s.SetLinkIndex(link)
		s.AttributeIndices().Append(b.attr("thread.id", tid))
		s.Values().Append(1)
		s.TimestampsUnixNano().Append(t0 + uint64(i)*10_000_000)
	}
}
