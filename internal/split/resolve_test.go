package split

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
)

// resolver reads what every index of a profile refers to through its
// dictionary, and "bad <table> <index>" for an index out of range: two
// batches whose resources resolve alike say the same thing, whatever
// their indexes.
type resolver struct{ d pprofile.ProfilesDictionary }

func bad(table string, i int32, n int) (string, bool) {
	if i < 0 || int(i) >= n {
		return fmt.Sprintf("bad %s %d", table, i), true
	}
	return "", false
}

func (r resolver) str(i int32) string {
	if s, ok := bad("string", i, r.d.StringTable().Len()); ok {
		return s
	}
	return fmt.Sprintf("%q", r.d.StringTable().At(int(i)))
}

func (r resolver) attrs(idx pcommon.Int32Slice) string {
	var out []string
	for k := 0; k < idx.Len(); k++ {
		i := idx.At(k)
		if s, ok := bad("attribute", i, r.d.AttributeTable().Len()); ok {
			out = append(out, s)
			continue
		}
		a := r.d.AttributeTable().At(int(i))
		out = append(out, fmt.Sprintf("%s=%v(%s)", r.str(a.KeyStrindex()), a.Value().AsRaw(), r.str(a.UnitStrindex())))
	}
	return "[" + strings.Join(out, " ") + "]"
}

func (r resolver) link(i int32) string {
	if s, ok := bad("link", i, r.d.LinkTable().Len()); ok {
		return s
	}
	l := r.d.LinkTable().At(int(i))
	return fmt.Sprintf("link %x/%x", l.TraceID(), l.SpanID())
}

func (r resolver) stack(i int32) string {
	if s, ok := bad("stack", i, r.d.StackTable().Len()); ok {
		return s
	}
	li := r.d.StackTable().At(int(i)).LocationIndices()
	out := make([]string, li.Len())
	for k := range out {
		out[k] = r.location(li.At(k))
	}
	return strings.Join(out, "; ")
}

func (r resolver) location(i int32) string {
	if s, ok := bad("location", i, r.d.LocationTable().Len()); ok {
		return s
	}
	l := r.d.LocationTable().At(int(i))
	out := fmt.Sprintf("%#x %s %s", l.Address(), r.mapping(l.MappingIndex()), r.attrs(l.AttributeIndices()))
	for k := 0; k < l.Lines().Len(); k++ {
		ln := l.Lines().At(k)
		out += fmt.Sprintf(" <%s:%d:%d>", r.function(ln.FunctionIndex()), ln.Line(), ln.Column())
	}
	return out
}

func (r resolver) function(i int32) string {
	if s, ok := bad("function", i, r.d.FunctionTable().Len()); ok {
		return s
	}
	f := r.d.FunctionTable().At(int(i))
	return fmt.Sprintf("%s %s %s %d", r.str(f.NameStrindex()), r.str(f.SystemNameStrindex()), r.str(f.FilenameStrindex()), f.StartLine())
}

func (r resolver) mapping(i int32) string {
	if s, ok := bad("mapping", i, r.d.MappingTable().Len()); ok {
		return s
	}
	m := r.d.MappingTable().At(int(i))
	return fmt.Sprintf("{%s %#x-%#x+%#x %s}", r.str(m.FilenameStrindex()), m.MemoryStart(), m.MemoryLimit(), m.FileOffset(), r.attrs(m.AttributeIndices()))
}

// flatten is resource ri of pd resolved: its attributes, then a line per
// profile and per sample.
func flatten(pd pprofile.Profiles, ri int) []string {
	r := resolver{pd.Dictionary()}
	rp := pd.ResourceProfiles().At(ri)
	out := []string{fmt.Sprint(rp.Resource().Attributes().AsRaw())}
	for j := 0; j < rp.ScopeProfiles().Len(); j++ {
		profs := rp.ScopeProfiles().At(j).Profiles()
		for k := 0; k < profs.Len(); k++ {
			p := profs.At(k)
			out = append(out, fmt.Sprintf("profile %s %s/%s %s/%s", r.attrs(p.AttributeIndices()),
				r.str(p.SampleType().TypeStrindex()), r.str(p.SampleType().UnitStrindex()),
				r.str(p.PeriodType().TypeStrindex()), r.str(p.PeriodType().UnitStrindex())))
			for s := 0; s < p.Samples().Len(); s++ {
				sm := p.Samples().At(s)
				out = append(out, fmt.Sprintf("sample %v %v %s %s | %s", sm.Values().AsRaw(), sm.TimestampsUnixNano().AsRaw(),
					r.attrs(sm.AttributeIndices()), r.link(sm.LinkIndex()), r.stack(sm.StackIndex())))
			}
		}
	}
	return out
}

var (
	translator = profilechunk.NewTranslator(profilechunk.Options{NewID: func() [16]byte { return [16]byte{1} }})
	everyType  = profilechunk.Want{Backend: true, UI: true}
)

// assertPartsReadAsBatch fails unless each resource of batch resolves, and
// translates, in its part as it does in batch, and the parts' counts add
// up to the batch's.
func assertPartsReadAsBatch(t *testing.T, batch pprofile.Profiles, parts []Part[string, pprofile.Profiles]) {
	t.Helper()
	whole := translator.Profiles(batch, everyType)
	results := make([]profilechunk.Result, len(parts))
	index := map[string]int{}
	for k, p := range parts {
		index[p.To] = k
		results[k] = translator.Profiles(p.Batch, everyType)
	}
	next := map[string]int{}
	for ri := 0; ri < batch.ResourceProfiles().Len(); ri++ {
		to := byService(batch.ResourceProfiles().At(ri).Resource())
		k, pri := index[to], next[to]
		next[to]++
		assert.Equal(t, flatten(batch, ri), flatten(parts[k].Batch, pri), "resource %d", ri)
		assert.Equal(t, chunksOf(whole, ri), chunksOf(results[k], pri), "resource %d", ri)
	}
	assert.Equal(t, counts(whole), counts(results...))
}

// chunksOf is the chunks of resource ri, with Resource cleared.
func chunksOf(res profilechunk.Result, ri int) []profilechunk.Chunk {
	var out []profilechunk.Chunk
	for i := range res.Chunks {
		if c := res.Chunks[i]; c.Resource == ri {
			c.Resource = 0
			out = append(out, c)
		}
	}
	return out
}

// counts adds up what results counted, without their chunks.
func counts(results ...profilechunk.Result) profilechunk.Result {
	var sum profilechunk.Result
	for i := range results {
		r := &results[i]
		for c := range sum.Invalid {
			sum.Skipped[c] += r.Skipped[c]
			sum.Invalid[c] += r.Invalid[c]
			sum.NoTimestamps[c] += r.NoTimestamps[c]
			sum.Unsupported[c] += r.Unsupported[c]
			sum.Duplicate[c] += r.Duplicate[c]
		}
		sum.Samples.Invalid += r.Samples.Invalid
		sum.Samples.NoTimestamp += r.Samples.NoTimestamp
		sum.Samples.Lonely += r.Samples.Lonely
	}
	return sum
}
