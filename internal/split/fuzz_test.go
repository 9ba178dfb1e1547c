package split

import (
	"math"
	"math/rand/v2"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// FuzzByProfiles builds a batch whose every dictionary index is read from
// the input, in range or not: cutting it must not panic, and each part
// must resolve and translate as its resources do in the whole batch.
func FuzzByProfiles(f *testing.F) {
	f.Add([]byte{})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		seed := make([]byte, 400)
		for i := range seed {
			seed[i] = byte(rng.UintN(256))
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		pd := fuzzBatch(&fuzzInput{raw: raw})
		assertPartsReadAsBatch(t, pd, By(Profiles(), pd, byService))
	})
}

// fuzzInput reads a fuzz input as the choices of a batch; past its end,
// every choice is 0.
type fuzzInput struct {
	raw []byte
	at  int
}

func (in *fuzzInput) byte() byte {
	if in.at >= len(in.raw) {
		return 0
	}
	in.at++
	return in.raw[in.at-1]
}

// count is a number of entries, 0 to n.
func (in *fuzzInput) count(n int) int { return int(in.byte()) % (n + 1) }

// index is an index into a table of up to 10 entries: mostly 0 to 5,
// else out of range for some tables or all.
func (in *fuzzInput) index() int32 {
	b := in.byte()
	if b < 208 {
		return int32(b % 6)
	}
	return []int32{-2, -1, 6, 7, 8, 9, 10, 11, 1 << 20, -1 << 20, math.MaxInt32, math.MinInt32}[b%12]
}

func (in *fuzzInput) indices(s interface{ Append(...int32) }, n int) {
	for range in.count(n) {
		s.Append(in.index())
	}
}

var fuzzWords = []string{
	"", "samples", "cpu", "wall", "thread.id", "thread.name", "process.pid",
	"profile.frame.type", "native", "kernel", "main", "/lib/libc.so.6", "process.executable.build_id.gnu",
}

func fuzzBatch(in *fuzzInput) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	for range in.count(10) {
		d.StringTable().Append(fuzzWords[int(in.byte())%len(fuzzWords)])
	}
	fuzzAttributes(in, d)
	fuzzFrames(in, d)
	for range 1 + in.count(3) {
		rp := pd.ResourceProfiles().AppendEmpty()
		rp.Resource().Attributes().PutStr("service.name", string(rune('a'+in.byte()%3)))
		rp.Resource().Attributes().PutStr("telemetry.sdk.language", []string{"go", "cpp", "python"}[in.byte()%3])
		profs := rp.ScopeProfiles().AppendEmpty().Profiles()
		for range 1 + in.count(1) {
			fuzzProfile(in, profs.AppendEmpty())
		}
	}
	return pd
}

func fuzzAttributes(in *fuzzInput, d pprofile.ProfilesDictionary) {
	for range in.count(10) {
		a := d.AttributeTable().AppendEmpty()
		a.SetKeyStrindex(in.index())
		a.SetUnitStrindex(in.index())
		if b := in.byte(); b%2 == 0 {
			a.Value().SetInt(int64(b % 5))
		} else {
			a.Value().SetStr(fuzzWords[int(b)%len(fuzzWords)])
		}
	}
	for range in.count(3) {
		l := d.LinkTable().AppendEmpty()
		l.SetTraceID([16]byte{in.byte(), 1})
		l.SetSpanID([8]byte{in.byte(), 1})
	}
}

func fuzzFrames(in *fuzzInput, d pprofile.ProfilesDictionary) {
	for range in.count(10) {
		fn := d.FunctionTable().AppendEmpty()
		fn.SetNameStrindex(in.index())
		fn.SetSystemNameStrindex(in.index())
		fn.SetFilenameStrindex(in.index())
	}
	for range in.count(6) {
		m := d.MappingTable().AppendEmpty()
		m.SetFilenameStrindex(in.index())
		m.SetMemoryStart(0x1000)
		m.SetMemoryLimit(0x1000 + uint64(in.byte())<<8)
		in.indices(m.AttributeIndices(), 2)
	}
	for range in.count(10) {
		l := d.LocationTable().AppendEmpty()
		l.SetMappingIndex(in.index())
		l.SetAddress(uint64(in.byte()))
		in.indices(l.AttributeIndices(), 2)
		for range in.count(2) {
			l.Lines().AppendEmpty().SetFunctionIndex(in.index())
		}
	}
	for range in.count(10) {
		in.indices(d.StackTable().AppendEmpty().LocationIndices(), 3)
	}
}

func fuzzProfile(in *fuzzInput, p pprofile.Profile) {
	p.SampleType().SetTypeStrindex(in.index())
	p.SampleType().SetUnitStrindex(in.index())
	p.PeriodType().SetTypeStrindex(in.index())
	p.PeriodType().SetUnitStrindex(in.index())
	in.indices(p.AttributeIndices(), 2)
	for range in.count(10) {
		s := p.Samples().AppendEmpty()
		s.SetStackIndex(in.index())
		s.SetLinkIndex(in.index())
		in.indices(s.AttributeIndices(), 3)
		for range in.count(2) {
			s.TimestampsUnixNano().Append(t0 + uint64(in.byte())*1e6)
		}
	}
}
