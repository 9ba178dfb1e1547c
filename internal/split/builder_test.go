package split

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
	f.SetSystemNameStrindex(b.Str("sys." + name))
	f.SetFilenameStrindex(b.Str(file))
	f.SetStartLine(3)
	return int32(b.d.FunctionTable().Len() - 1)
}

func (b *pb) mapping(file, buildID string) int32 {
	m := b.d.MappingTable().AppendEmpty()
	m.SetFilenameStrindex(b.Str(file))
	m.SetMemoryStart(0x400000)
	m.SetMemoryLimit(0x500000)
	m.AttributeIndices().Append(b.Attr("process.executable.build_id.gnu", buildID))
	return int32(b.d.MappingTable().Len() - 1)
}

// loc adds a native location in mapping whose lines are fns, leaf first.
func (b *pb) loc(mapping int32, fns ...int32) int32 {
	l := b.d.LocationTable().AppendEmpty()
	l.SetAddress(0x401000 + uint64(b.d.LocationTable().Len()))
	l.SetMappingIndex(mapping)
	l.AttributeIndices().Append(b.Attr("profile.frame.type", "native"))
	for i, f := range fns {
		x := l.Lines().AppendEmpty()
		x.SetFunctionIndex(f)
		x.SetLine(int64(10 + i))
	}
	return int32(b.d.LocationTable().Len() - 1)
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
	p.SampleType().SetTypeStrindex(b.Str("samples"))
	p.SampleType().SetUnitStrindex(b.Str("count"))
	p.PeriodType().SetTypeStrindex(b.Str("cpu"))
	p.PeriodType().SetUnitStrindex(b.Str("nanoseconds"))
	p.AttributeIndices().Append(b.Attr("profile.owner", service))
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
		s.AttributeIndices().Append(b.Attr("thread.id", tid))
		s.Values().Append(1)
		s.TimestampsUnixNano().Append(t0 + uint64(i)*10_000_000)
	}
}
