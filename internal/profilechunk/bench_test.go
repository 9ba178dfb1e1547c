package profilechunk

import "testing"

// BenchmarkProfiles renders a 60 s process profile of 6000 samples over 3
// threads; it reports ns and allocations per sample.
func BenchmarkProfiles(b *testing.B) {
	p := newPB()
	rp := p.resource(map[string]any{"service.name": "svc", "telemetry.sdk.language": "go"})
	prof := p.profile(rp, "samples")
	var stacks []int32
	for i := range 50 {
		var locs []int32
		for d := range 20 {
			locs = append(locs, p.loc(0, 0, "", [2]int64{int64(p.fn("fn"+string(rune('a'+d))+string(rune('a'+i%26)), "/src/x.go")), int64(d + 1)}))
		}
		stacks = append(stacks, p.Stack(locs...))
	}
	const n = 6000
	for i := range n {
		p.sample(prof, stacks[i%len(stacks)], int64(i%3), "", 0, ms(uint64(i*10)))
	}
	tr := NewTranslator(Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res := tr.Profiles(p.pd, both)
		if len(res.Chunks) != 1 {
			b.Fatal(len(res.Chunks))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sample")
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() { tr.Profiles(p.pd, both) }))/n, "allocs/sample")
}
