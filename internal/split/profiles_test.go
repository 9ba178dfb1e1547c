package split

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// fleetBatch is four resources of services a, b, a and c: each with a
// mapping, functions, stacks and a link of its own, and a frame of libc
// that every stack shares.
func fleetBatch() *pb {
	b := newPB()
	libc := b.mapping("/lib/libc.so.6", fmt.Sprintf("%040x", 0xc))
	start := b.loc(libc, b.fn("__libc_start_main", "libc-start.c"))
	for i, s := range []string{"a", "b", "a", "c"} {
		p := b.profile(s)
		m := b.mapping("/bin/"+s, fmt.Sprintf("%040x", i+1))
		leaf := b.loc(m, b.fn(s+".work", s+".c"), b.fn(s+".inlined", s+".c"))
		main := b.loc(m, b.fn(s+".main", s+".c"))
		b.samples(p, b.Stack(leaf, main, start), b.link(byte(i+1)), int64(i), 3)
		b.samples(p, b.Stack(main, start), 0, int64(i), 2)
	}
	return b
}

// TestByProfilesPartsTranslateAsTheBatch: each part's resources resolve
// through the part's own dictionary, and translate, exactly as they do
// through the batch's.
func TestByProfilesPartsTranslateAsTheBatch(t *testing.T) {
	pd := fleetBatch().pd
	parts := By(Profiles(), pd, byService)
	require.Len(t, parts, 3)
	assert.Equal(t, 2, parts[0].Batch.ResourceProfiles().Len())
	assert.Len(t, translator.Profiles(pd, everyType).Chunks, 4, "every resource renders a chunk: the comparison compares something")
	assertPartsReadAsBatch(t, pd, parts)
}

// TestByProfilesPartsKeepOnlyWhatTheyReferTo: a part's dictionary holds
// its resources' entries and the shared ones, not the other services'.
func TestByProfilesPartsKeepOnlyWhatTheyReferTo(t *testing.T) {
	pd := fleetBatch().pd
	src := pd.Dictionary()
	parts := By(Profiles(), pd, byService)
	for _, p := range parts {
		d := p.Batch.Dictionary()
		n := p.Batch.ResourceProfiles().Len()
		assert.Equal(t, 1+1+3*n, d.FunctionTable().Len(), "%s: the zero function, libc's and its own", p.To)
		assert.Equal(t, 1+1+2*n, d.LocationTable().Len(), p.To)
		assert.Equal(t, 1+1+n, d.MappingTable().Len(), p.To)
		assert.Equal(t, 1+2*n, d.StackTable().Len(), p.To)
		assert.Equal(t, 1+n, d.LinkTable().Len(), p.To)
		assert.Less(t, d.StringTable().Len(), src.StringTable().Len(), p.To)
		assert.Less(t, d.AttributeTable().Len(), src.AttributeTable().Len(), p.To)
		assert.True(t, inOrder(d.StringTable().AsRaw(), src.StringTable().AsRaw()), "%s: strings in the batch's order", p.To)
		names := map[string]bool{}
		for i := 0; i < d.FunctionTable().Len(); i++ {
			names[d.StringTable().At(int(d.FunctionTable().At(i).NameStrindex()))] = true
		}
		assert.True(t, names["__libc_start_main"], "%s: the shared function", p.To)
		assert.True(t, names[p.To+".main"], p.To)
		for _, other := range []string{"a", "b", "c"} {
			assert.Equal(t, other == p.To, names[other+".main"], "%s holds %s's function", p.To, other)
		}
	}
}

// TestByProfilesKeepsEachTableEntryZero: entry 0 of every table stays at
// 0, as the batch has it (here not the empty entry OTLP asks for), with
// what it refers to.
func TestByProfilesKeepsEachTableEntryZero(t *testing.T) {
	b := fleetBatch()
	b.d.FunctionTable().At(0).SetNameStrindex(b.Str("zero function"))
	b.d.MappingTable().At(0).SetFilenameStrindex(b.Str("zero mapping"))
	b.d.StackTable().At(0).LocationIndices().Append(1)
	b.d.LinkTable().At(0).SetTraceID([16]byte{0xee})
	b.d.AttributeTable().At(0).SetKeyStrindex(b.Str("zero attribute"))
	zero := pcommon.NewInt32Slice()
	zero.Append(0)
	parts := By(Profiles(), b.pd, byService)
	src := resolver{b.d}
	for _, p := range parts {
		r := resolver{p.Batch.Dictionary()}
		assert.Equal(t, `""`, r.str(0), p.To)
		assert.Equal(t, src.function(0), r.function(0), p.To)
		assert.Equal(t, src.mapping(0), r.mapping(0), p.To)
		assert.Equal(t, src.location(0), r.location(0), p.To)
		assert.Equal(t, src.stack(0), r.stack(0), p.To)
		assert.Equal(t, src.link(0), r.link(0), p.To)
		assert.Equal(t, src.attrs(zero), r.attrs(zero), p.To)
	}
	assertPartsReadAsBatch(t, b.pd, parts)
}

// TestByProfilesLeavesIndexesOutOfRangeOutOfRange: a hostile batch's
// dangling indexes, in every field that holds one, neither panic nor
// change meaning: they dangle in the part too, and the translator counts
// the same samples invalid.
func TestByProfilesLeavesIndexesOutOfRangeOutOfRange(t *testing.T) {
	b := fleetBatch()
	d := b.d
	for k, i := range []int32{-1, math.MaxInt32, 1 << 20, math.MinInt32} {
		d.FunctionTable().At(1 + k).SetNameStrindex(i)
		d.FunctionTable().At(2 + k).SetFilenameStrindex(i)
		d.FunctionTable().At(3 + k).SetSystemNameStrindex(i)
		d.MappingTable().At(1 + k).SetFilenameStrindex(i)
		d.MappingTable().At(1 + k).AttributeIndices().Append(i)
		d.AttributeTable().At(1 + k).SetKeyStrindex(i)
		d.AttributeTable().At(2 + k).SetUnitStrindex(i)
		d.LocationTable().At(1 + k).SetMappingIndex(i)
		d.LocationTable().At(2 + k).AttributeIndices().Append(i)
		d.LocationTable().At(3 + k).Lines().At(0).SetFunctionIndex(i)
		d.StackTable().At(1 + k).LocationIndices().Append(i)
		p := b.pd.ResourceProfiles().At(k).ScopeProfiles().At(0).Profiles().At(0)
		p.AttributeIndices().Append(i)
		p.SampleType().SetUnitStrindex(i)
		p.PeriodType().SetTypeStrindex(i)
		p.Samples().At(0).SetStackIndex(i)
		p.Samples().At(1).SetLinkIndex(i)
		p.Samples().At(2).AttributeIndices().Append(i)
	}
	var parts []Part[string, pprofile.Profiles]
	require.NotPanics(t, func() { parts = By(Profiles(), b.pd, byService) })
	assertPartsReadAsBatch(t, b.pd, parts)
}

// TestByProfilesWithAnEmptyDictionary: samples that refer into tables that
// do not exist (not even an entry 0) keep referring to nothing.
func TestByProfilesWithAnEmptyDictionary(t *testing.T) {
	pd := pprofile.NewProfiles()
	for _, s := range []string{"a", "b"} {
		rp := pd.ResourceProfiles().AppendEmpty()
		rp.Resource().Attributes().PutStr("service.name", s)
		smp := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty().Samples().AppendEmpty()
		smp.SetStackIndex(0)
		smp.AttributeIndices().Append(0, 1)
		smp.TimestampsUnixNano().Append(t0)
	}
	parts := By(Profiles(), pd, byService)
	require.Len(t, parts, 2)
	for _, p := range parts {
		d := p.Batch.Dictionary()
		assert.Zero(t, d.StringTable().Len()+d.StackTable().Len()+d.AttributeTable().Len(), p.To)
	}
	assertPartsReadAsBatch(t, pd, parts)
}

// TestByProfilesHandsOnABatchOfOneTargetUncopied: one target, no copy and
// no re-indexing: the part is the batch.
func TestByProfilesHandsOnABatchOfOneTargetUncopied(t *testing.T) {
	b := fleetBatch()
	parts := By(Profiles(), b.pd, func(pcommon.Resource) string { return "one" })
	require.Len(t, parts, 1)
	parts[0].Batch.Dictionary().StringTable().SetAt(1, "changed")
	assert.Equal(t, "changed", b.d.StringTable().At(1), "the same batch, not a copy")
}

// inOrder reports whether sub is a subsequence of all.
func inOrder(sub, all []string) bool {
	for _, s := range all {
		if len(sub) > 0 && sub[0] == s {
			sub = sub[1:]
		}
	}
	return len(sub) == 0
}
