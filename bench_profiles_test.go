package sentryexporter

import (
	"testing"
	"time"

	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// BenchmarkPushProfiles is a whole push of one process's 60 s CPU profile
// (6,000 samples, 100 Hz, one stack) to a Sentry that answers at once,
// until its chunk is settled: translation, envelope, hand-over, sending,
// accounting and the profiler's registration.
func BenchmarkPushProfiles(b *testing.B) {
	e := newBenchExporterWith(b, func(*Config) {}, okTransport{})
	pd := profileOf("checkout", time.Now(), 6000)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushProfiles(ctx, pd); err != nil {
			b.Fatal(err)
		}
		benchSettle(e)
	}
	b.ReportMetric(6000*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
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
