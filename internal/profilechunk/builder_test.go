package profilechunk

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/internal/profiletest"
)

// pb builds pprofile.Profiles for tests on profiletest's start (every
// dictionary table opened with its zero entry), with the entries this
// package's cases need.
type pb struct {
	*profiletest.Dict
	pd pprofile.Profiles
	d  pprofile.ProfilesDictionary
}

func newPB() *pb {
	x := profiletest.NewDict()
	return &pb{Dict: x, pd: x.Profiles, d: x.Profiles.Dictionary()}
}

func (b *pb) fn(name, file string) int32 {
	f := b.d.FunctionTable().AppendEmpty()
	f.SetNameStrindex(b.Str(name))
	f.SetFilenameStrindex(b.Str(file))
	return int32(b.d.FunctionTable().Len() - 1)
}

func (b *pb) mapping(file, buildID string) int32 {
	m := b.d.MappingTable().AppendEmpty()
	m.SetFilenameStrindex(b.Str(file))
	m.SetMemoryStart(0x400000)
	m.SetMemoryLimit(0x500000)
	if buildID != "" {
		m.AttributeIndices().Append(b.Attr(buildIDKey, buildID))
	}
	return int32(b.d.MappingTable().Len() - 1)
}

// loc adds a location; lines are (function, line) pairs, leaf first.
func (b *pb) loc(addr uint64, mapping int32, frameType string, lines ...[2]int64) int32 {
	l := b.d.LocationTable().AppendEmpty()
	l.SetAddress(addr)
	l.SetMappingIndex(mapping)
	if frameType != "" {
		l.AttributeIndices().Append(b.Attr("profile.frame.type", frameType))
	}
	for _, ln := range lines {
		x := l.Lines().AppendEmpty()
		x.SetFunctionIndex(int32(ln[0]))
		x.SetLine(ln[1])
	}
	return int32(b.d.LocationTable().Len() - 1)
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
	p.SampleType().SetTypeStrindex(b.Str(typ))
	return p
}

// sample adds a sample of stack on thread tid (named name, "" for none)
// with the given timestamps.
func (b *pb) sample(p pprofile.Profile, stack int32, tid int64, name string, link int32, ts ...uint64) {
	s := p.Samples().AppendEmpty()
	s.SetStackIndex(stack)
	s.SetLinkIndex(link)
	s.AttributeIndices().Append(b.Attr("thread.id", tid))
	if name != "" {
		s.AttributeIndices().Append(b.Attr("thread.name", name))
	}
	s.TimestampsUnixNano().FromRaw(ts)
}

const t0 = uint64(1_700_000_000_000_000_000)

func ms(n uint64) uint64 { return t0 + n*1_000_000 }

func fixedIDs() func() [16]byte {
	var n byte
	return func() [16]byte { n++; return [16]byte{0xc0, 15: n} }
}
