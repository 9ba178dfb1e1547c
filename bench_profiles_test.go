package sentryexporter

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// BenchmarkPushProfiles is a whole push of one process's 60 s CPU profile
// (6,000 samples, 100 Hz, one stack) to a Sentry that answers at once,
// until its chunk is settled: translation, envelope, hand-over, sending,
// accounting and the profiler's registration.
func BenchmarkPushProfiles(b *testing.B) {
	e := newBenchExporterWith(b, func(*Config) {}, okTransport{})
	benchPushProfiles(b, e, profileOf("checkout", time.Now(), 6000), 6000)
}

// benchPushProfiles pushes pd (of samples samples) to e, waiting each time
// until every chunk is settled, and reports samples/s.
func benchPushProfiles(b *testing.B, e *sentryExporter, pd pprofile.Profiles, samples int) {
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushProfiles(ctx, pd); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkPushProfilesLimited is BenchmarkPushProfiles while profile_chunk
// is rate limited: the profile is only counted.
func BenchmarkPushProfilesLimited(b *testing.B) {
	e := newBenchExporterWith(b, func(*Config) {}, okTransport{})
	l, _ := ratelimit.Parse("3600:profile_chunk:organization", time.Now()) // outlasts any run
	e.def.limits.Merge(l)
	pd := profileOf("checkout", time.Now(), 6000)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushProfiles(ctx, pd); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(6000*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkPushProfilesRoutedFleet is a whole push of one request carrying
// a fleet's profiles, routed to a project per service, until every chunk is
// settled: 100 services, each a process with 200 functions of its own (a
// dictionary of 20,000 functions, locations and stacks) and 1,000 samples.
func BenchmarkPushProfilesRoutedFleet(b *testing.B) {
	const services = 100
	e := newBenchExporterWith(b, func(c *Config) {
		c.DSN = ""
		c.Routing.DSNs = map[string]configopaque.String{}
		for s := range services {
			c.Routing.DSNs[fmt.Sprintf("service-%03d", s)] = configopaque.String(fmt.Sprintf("https://public@o1.ingest.sentry.io/%d", s+1))
		}
	}, okTransport{})
	benchPushProfiles(b, e, fleetProfiles(services, 200, 1000, time.Now()), services*1000)
}

// fleetProfiles is one request of services processes' CPU profiles: each
// with fns functions of its own, one location each, on stacks of five, and
// n samples 10 ms apart on thread 7, in one dictionary.
func fleetProfiles(services, fns, n int, at time.Time) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("", "samples", "count", "thread.id", "main.go")
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	tid := d.AttributeTable().AppendEmpty()
	tid.SetKeyStrindex(3)
	tid.Value().SetInt(7)
	for s := range services {
		svc := fmt.Sprintf("service-%03d", s)
		rp := pd.ResourceProfiles().AppendEmpty()
		_ = rp.Resource().Attributes().FromRaw(map[string]any{"service.name": svc, "process.pid": int64(s + 1), "telemetry.sdk.language": "go"})
		p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
		p.SampleType().SetTypeStrindex(1)
		p.SampleType().SetUnitStrindex(2)
		p.SetTime(pcommon.NewTimestampFromTime(at))
		first := int32(d.StackTable().Len())
		for i := range fns {
			d.StringTable().Append(fmt.Sprintf("github.com/example/%s/internal/handlers.(*Handler).serve%06d", svc, i))
			fn := d.FunctionTable().AppendEmpty()
			fn.SetNameStrindex(int32(d.StringTable().Len() - 1))
			fn.SetFilenameStrindex(4)
			d.LocationTable().AppendEmpty().Lines().AppendEmpty().SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
			st := d.StackTable().AppendEmpty()
			for k := range 5 {
				st.LocationIndices().Append(int32(d.LocationTable().Len() - 1 - min(k, i)))
			}
		}
		for i := range n {
			smp := p.Samples().AppendEmpty()
			smp.SetStackIndex(first + int32(i%fns))
			smp.AttributeIndices().Append(1)
			smp.TimestampsUnixNano().Append(uint64(at.Add(time.Duration(i) * 10 * time.Millisecond).UnixNano()))
		}
	}
	return pd
}
