package split

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// resolved is a profiles batch's resource seen through its dictionary: one
// line per sample, every index followed to what it names, "?" for an index
// out of range. Two batches whose resources resolve alike say the same.
func resolved(pd pprofile.Profiles, res int) []string {
	d := pd.Dictionary()
	var out []string
	sps := pd.ResourceProfiles().At(res).ScopeProfiles()
	for j := 0; j < sps.Len(); j++ {
		ps := sps.At(j).Profiles()
		for k := 0; k < ps.Len(); k++ {
			p := ps.At(k)
			head := fmt.Sprintf("%s/%s %s/%s %s", str(d, p.SampleType().TypeStrindex()), str(d, p.SampleType().UnitStrindex()),
				str(d, p.PeriodType().TypeStrindex()), str(d, p.PeriodType().UnitStrindex()), attrs(d, p.AttributeIndices()))
			for s := 0; s < p.Samples().Len(); s++ {
				sm := p.Samples().At(s)
				out = append(out, fmt.Sprintf("%s | %s | %s | %s | %v", head, stack(d, sm.StackIndex()), attrs(d, sm.AttributeIndices()),
					link(d, sm.LinkIndex()), sm.Values().AsRaw()))
			}
		}
	}
	return out
}

func str(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.StringTable().Len() {
		return "?"
	}
	return d.StringTable().At(int(i))
}

func attrs(d pprofile.ProfilesDictionary, idx pcommon.Int32Slice) string {
	var b strings.Builder
	for _, i := range idx.All() {
		if i < 0 || int(i) >= d.AttributeTable().Len() {
			b.WriteString("? ")
			continue
		}
		a := d.AttributeTable().At(int(i))
		fmt.Fprintf(&b, "%s=%s[%s] ", str(d, a.KeyStrindex()), a.Value().AsString(), str(d, a.UnitStrindex()))
	}
	return b.String()
}

func link(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.LinkTable().Len() {
		return "?"
	}
	l := d.LinkTable().At(int(i))
	return fmt.Sprintf("%d:%s/%s", min(i, 1), l.TraceID(), l.SpanID()) // index 0 is "no link"; the others are compared by what they name
}

func stack(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.StackTable().Len() {
		return "?"
	}
	var b strings.Builder
	for _, l := range d.StackTable().At(int(i)).LocationIndices().All() {
		if l < 0 || int(l) >= d.LocationTable().Len() {
			b.WriteString("?; ")
			continue
		}
		loc := d.LocationTable().At(int(l))
		fmt.Fprintf(&b, "%#x %s {", loc.Address(), mapping(d, loc.MappingIndex()))
		for _, ln := range loc.Lines().All() {
			fmt.Fprintf(&b, "%s:%d:%d ", function(d, ln.FunctionIndex()), ln.Line(), ln.Column())
		}
		fmt.Fprintf(&b, "} %s; ", attrs(d, loc.AttributeIndices()))
	}
	return b.String()
}

func mapping(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.MappingTable().Len() {
		return "?"
	}
	m := d.MappingTable().At(int(i))
	return fmt.Sprintf("%s@%#x-%#x+%#x(%s)", str(d, m.FilenameStrindex()), m.MemoryStart(), m.MemoryLimit(), m.FileOffset(), attrs(d, m.AttributeIndices()))
}

func function(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.FunctionTable().Len() {
		return "?"
	}
	f := d.FunctionTable().At(int(i))
	return fmt.Sprintf("%s/%s@%s:%d", str(d, f.NameStrindex()), str(d, f.SystemNameStrindex()), str(d, f.FilenameStrindex()), f.StartLine())
}

// fleet is a batch of services, each with functions, locations and stacks
// of its own and one shared (the runtime's), attributes on samples,
// locations and mappings, and links to spans.
func fleet(services, funcsEach int) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("", "cpu", "nanoseconds", "samples", "count", "thread.name", "libc.so.6", "runtime.goexit", "proc.go")
	d.MappingTable().AppendEmpty()
	libc := d.MappingTable().AppendEmpty()
	libc.SetFilenameStrindex(6)
	libc.SetMemoryStart(0x7f00_0000_0000)
	libc.SetMemoryLimit(0x7f00_0010_0000)
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	shared := d.FunctionTable().Len()
	goexit := d.FunctionTable().AppendEmpty()
	goexit.SetNameStrindex(7)
	goexit.SetFilenameStrindex(8)
	sharedLoc := d.LocationTable().Len()
	sl := d.LocationTable().AppendEmpty()
	sl.SetMappingIndex(1)
	sl.Lines().AppendEmpty().SetFunctionIndex(int32(shared))
	for s := range services {
		name := fmt.Sprintf("svc-%02d", s)
		thread := d.AttributeTable().Len()
		a := d.AttributeTable().AppendEmpty()
		a.SetKeyStrindex(5)
		a.Value().SetStr(name + "-worker")
		li := d.LinkTable().Len()
		l := d.LinkTable().AppendEmpty()
		l.SetTraceID(pcommon.TraceID{byte(s + 1), 1})
		l.SetSpanID(pcommon.SpanID{byte(s + 1), 2})
		rp := pd.ResourceProfiles().AppendEmpty()
		rp.Resource().Attributes().PutStr("service.name", name)
		p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
		p.SampleType().SetTypeStrindex(3)
		p.SampleType().SetUnitStrindex(4)
		p.PeriodType().SetTypeStrindex(1)
		p.PeriodType().SetUnitStrindex(2)
		for f := range funcsEach {
			d.StringTable().Append(fmt.Sprintf("%s.handler%d", name, f))
			fn := d.FunctionTable().AppendEmpty()
			fn.SetNameStrindex(int32(d.StringTable().Len() - 1))
			loc := d.LocationTable().AppendEmpty()
			loc.SetAddress(uint64(0x1000 + f))
			loc.Lines().AppendEmpty().SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
			loc.AttributeIndices().Append(int32(thread))
			st := d.StackTable().AppendEmpty()
			st.LocationIndices().Append(int32(d.LocationTable().Len()-1), int32(sharedLoc))
			sm := p.Samples().AppendEmpty()
			sm.SetStackIndex(int32(d.StackTable().Len() - 1))
			sm.AttributeIndices().Append(int32(thread))
			sm.Values().Append(int64(f + 1))
			if f%2 == 0 {
				sm.SetLinkIndex(int32(li))
			}
		}
	}
	return pd
}

// TestByProfilesGivesEachPartItsShare: each part's dictionary holds what
// its own samples refer to, the shared entries in each, index 0 of each
// table still index 0, and every sample names what it named in the batch.
func TestByProfilesGivesEachPartItsShare(t *testing.T) {
	pd := fleet(4, 50)
	parts := By(Profiles(), pd, byService)
	require.Len(t, parts, 4)
	src := pd.Dictionary()
	for i, p := range parts {
		assert.Equal(t, resolved(pd, i), resolved(p.Batch, 0), "part %s names what the batch named", p.To)
		d := p.Batch.Dictionary()
		assert.Equal(t, 1+1+50, d.FunctionTable().Len(), "the empty entry, the shared one and its own 50")
		assert.Less(t, d.StringTable().Len(), src.StringTable().Len()/2, "its own strings, not the fleet's")
		assert.Empty(t, d.StringTable().At(0))
		assert.Equal(t, p.To+".handler0", d.StringTable().At(int(d.FunctionTable().At(1).NameStrindex())), "entries in the order first met, after index 0")
		assert.Equal(t, "runtime.goexit", d.StringTable().At(int(d.FunctionTable().At(2).NameStrindex())), "the shared function in every part")
		assert.Equal(t, 2, d.LinkTable().Len(), "no link at 0, and its own")
	}
	parts[0].Batch.Dictionary().StringTable().SetAt(1, "changed")
	assert.Equal(t, "cpu", src.StringTable().At(1), "a part's dictionary is its own")
}

// TestByProfilesOutOfRangeStaysOutOfRange: an index past its table (hostile
// input) stays past it in the part, so the translator counts it as it
// would have; nothing panics.
func TestByProfilesOutOfRangeStaysOutOfRange(t *testing.T) {
	pd := fleet(2, 3)
	d := pd.Dictionary()
	p := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	p.Samples().At(0).SetStackIndex(9999)
	p.Samples().At(1).SetStackIndex(-3)
	p.Samples().At(1).SetLinkIndex(777)
	p.Samples().At(2).AttributeIndices().Append(555)
	p.SampleType().SetUnitStrindex(4242)
	d.StackTable().At(int(p.Samples().At(2).StackIndex())).LocationIndices().Append(8888)
	d.LocationTable().At(2).SetMappingIndex(99)
	d.LocationTable().At(2).Lines().AppendEmpty().SetFunctionIndex(-1)
	d.FunctionTable().At(2).SetNameStrindex(31337)
	parts := By(Profiles(), pd, byService)
	require.Len(t, parts, 2)
	for i, part := range parts {
		assert.Equal(t, resolved(pd, i), resolved(part.Batch, 0), "part %d", i)
	}
	assert.Contains(t, strings.Join(resolved(parts[0].Batch, 0), "\n"), "| ? |", "the stack out of range still is")
}

// TestByProfilesEmptyTables: a batch whose dictionary is empty (every index
// 0 is then out of range) splits into parts as empty.
func TestByProfilesEmptyTables(t *testing.T) {
	pd := pprofile.NewProfiles()
	for _, s := range []string{"a", "b"} {
		rp := pd.ResourceProfiles().AppendEmpty()
		rp.Resource().Attributes().PutStr("service.name", s)
		rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty().Samples().AppendEmpty()
	}
	parts := By(Profiles(), pd, byService)
	require.Len(t, parts, 2)
	for i, part := range parts {
		assert.Equal(t, resolved(pd, i), resolved(part.Batch, 0))
		assert.Zero(t, part.Batch.Dictionary().StringTable().Len())
	}
}

// FuzzByProfiles: whatever the indexes, splitting never panics and each
// part names what the batch named.
func FuzzByProfiles(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{255, 128, 7, 0, 0, 200, 3})
	f.Fuzz(func(t *testing.T, idx []byte) {
		pd := fleet(3, 4)
		at := func(k int) int32 {
			if len(idx) == 0 {
				return 0
			}
			return int32(int8(idx[k%len(idx)]))
		}
		d := pd.Dictionary()
		k := 0
		for _, p := range pd.ResourceProfiles().All() {
			for _, sm := range p.ScopeProfiles().At(0).Profiles().At(0).Samples().All() {
				sm.SetStackIndex(at(k))
				sm.SetLinkIndex(at(k + 1))
				sm.AttributeIndices().Append(at(k + 2))
				k += 3
			}
		}
		for _, loc := range d.LocationTable().All() {
			loc.SetMappingIndex(at(k))
			loc.Lines().AppendEmpty().SetFunctionIndex(at(k + 1))
			k += 2
		}
		for _, fn := range d.FunctionTable().All() {
			fn.SetNameStrindex(at(k))
			k++
		}
		parts := By(Profiles(), pd, byService)
		require.Len(t, parts, 3)
		for i, part := range parts {
			require.Equal(t, resolved(pd, i), resolved(part.Batch, 0), "part %d", i)
		}
	})
}

// BenchmarkByProfilesFleet cuts a fleet's batch, 100 services with 200
// functions each, into a part per service: what one fleet-wide request
// costs its routing.
func BenchmarkByProfilesFleet(b *testing.B) {
	pd := fleet(100, 200)
	b.ReportAllocs()
	for b.Loop() {
		if len(By(Profiles(), pd, byService)) != 100 {
			b.Fatal("100 parts")
		}
	}
}
