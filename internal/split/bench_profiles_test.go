package split

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// BenchmarkByProfiles cuts a batch of two services whose dictionary holds
// 20,000 functions, locations and stacks, of which both services' samples
// refer to the same first 1,000.
func BenchmarkByProfiles(b *testing.B) {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	for i := range 20_000 {
		d.StringTable().Append(fmt.Sprintf("github.com/example/service.(*Handler).serve%06d", i))
		d.FunctionTable().AppendEmpty().SetNameStrindex(int32(i))
		d.LocationTable().AppendEmpty().Lines().AppendEmpty().SetFunctionIndex(int32(i))
		d.StackTable().AppendEmpty().LocationIndices().Append(int32(i))
	}
	for _, s := range []string{"checkout", "cart"} {
		rp := pd.ResourceProfiles().AppendEmpty()
		rp.Resource().Attributes().PutStr("service.name", s)
		samples := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty().Samples()
		for i := range 1000 {
			samples.AppendEmpty().SetStackIndex(int32(i))
		}
	}
	benchmarkBy(b, pd, 2)
}

// BenchmarkByProfilesFleet cuts one request carrying a whole fleet's
// profiles: 100 services, each with 200 functions, locations and stacks of
// its own (a dictionary of 20,000 of each) and 1,000 samples, routed to
// 100 projects.
func BenchmarkByProfilesFleet(b *testing.B) {
	const services, perService = 100, 200
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("")
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	for s := range services {
		rp := pd.ResourceProfiles().AppendEmpty()
		rp.Resource().Attributes().PutStr("service.name", fmt.Sprintf("service-%03d", s))
		samples := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty().Samples()
		first := int32(d.StackTable().Len())
		for i := range perService {
			n := int32(d.StringTable().Len())
			d.StringTable().Append(fmt.Sprintf("github.com/example/service%03d.(*Handler).serve%06d", s, i))
			f := d.FunctionTable().AppendEmpty()
			f.SetNameStrindex(n)
			d.LocationTable().AppendEmpty().Lines().AppendEmpty().SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
			d.StackTable().AppendEmpty().LocationIndices().Append(int32(d.LocationTable().Len() - 1))
		}
		for i := range 1000 {
			samples.AppendEmpty().SetStackIndex(first + int32(i%perService))
		}
	}
	benchmarkBy(b, pd, services)
}

func benchmarkBy(b *testing.B, pd pprofile.Profiles, parts int) {
	b.ReportAllocs()
	for b.Loop() {
		if len(By(Profiles(), pd, byService)) != parts {
			b.Fatalf("%d parts", parts)
		}
	}
}
