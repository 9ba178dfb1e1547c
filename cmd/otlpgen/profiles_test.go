package main

import (
	"regexp"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"

	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
	"github.com/otel-sentry/sentryexporter/internal/profiletest"
)

// One export holds a profile per service with the eBPF profiler's resource, timestamped
// samples inside the window on named threads, links only to root spans the generator
// made, and counts that match what the exporter's translator renders; every chunk passes
// Relay's checks.
func TestProfilesExport(t *testing.T) {
	recent := newRecentSpans()
	g := newGenerator(5, 3, 2, 0.05)
	g.recent = recent
	td, _, _ := g.batch(200, time.Now())
	roots := map[[24]byte]bool{}
	for _, rs := range td.ResourceSpans().All() {
		for _, sp := range rs.ScopeSpans().At(0).Spans().All() {
			if !sp.ParentSpanID().IsEmpty() {
				continue
			}
			tid, sid := sp.TraceID(), sp.SpanID()
			var k [24]byte
			copy(k[:16], tid[:])
			copy(k[16:], sid[:])
			roots[k] = true
		}
	}
	p := newProfiler(9, 3, recent, false)
	to := time.Now()
	from := to.Add(-10 * time.Second)
	pd, pc := p.collect(from, to, 0, 3)

	// the wire round trip the collector's receiver makes
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	got := req.Profiles()
	if got.ResourceProfiles().Len() != 3 || pc.profiles != 3 {
		t.Fatalf("%d resources, %d profiles counted: want one per service", got.ResourceProfiles().Len(), pc.profiles)
	}
	d := got.Dictionary()
	samples, linked := 0, 0
	for i, rp := range got.ResourceProfiles().All() {
		name, _ := rp.Resource().Attributes().Get("service.name")
		if want := serviceAt(i).name; name.Str() != want {
			t.Fatalf("resource %d is %q, want %q", i, name.Str(), want)
		}
		for _, s := range rp.ScopeProfiles().At(0).Profiles().At(0).Samples().All() {
			samples++
			ts := s.TimestampsUnixNano()
			if ts.Len() != 1 || ts.At(0) < uint64(from.UnixNano()) || ts.At(0) >= uint64(to.UnixNano()) {
				t.Fatalf("sample timestamps %v outside the window", ts.AsRaw())
			}
			if s.AttributeIndices().Len() != 2 {
				t.Fatalf("sample with %d attributes, want thread.id and thread.name", s.AttributeIndices().Len())
			}
			if s.LinkIndex() == 0 {
				continue
			}
			l := d.LinkTable().At(int(s.LinkIndex()))
			var k [24]byte
			tid, sid := l.TraceID(), l.SpanID()
			copy(k[:16], tid[:])
			copy(k[16:], sid[:])
			if !roots[k] {
				t.Fatalf("a sample links to %s/%s, no root span otlpgen made", tid, sid)
			}
			linked++
		}
	}
	if samples != pc.samples || samples < 3*10*profileHz/2 || linked == 0 || linked == samples {
		t.Fatalf("%d samples (counted %d), %d linked: want about 10 s of 4 threads at 20 Hz, some linked", samples, pc.samples, linked)
	}

	res := profilechunk.NewTranslator(profilechunk.Options{}).Profiles(got, profilechunk.Want{Backend: true, UI: true})
	var chunkSamples, ms int64
	for _, c := range res.Chunks {
		if err := profilechunk.CheckRelay(c.Payload, c.Platform); err != nil {
			t.Fatalf("chunk of %s: %v", c.Platform, err)
		}
		chunkSamples += int64(c.Samples)
		ms += c.DurationMs
	}
	if int64(len(res.Chunks)) != pc.chunks || chunkSamples != pc.chunkSamples || ms != pc.durationMs || pc.chunks != 3 {
		t.Fatalf("translated %d chunks, %d samples, %d ms; counted %+v", len(res.Chunks), chunkSamples, ms, pc)
	}
	if pc.chunkSamples+res.Samples.Lonely != int64(samples) {
		t.Fatalf("%d samples in chunks and %d lonely of %d", pc.chunkSamples, res.Samples.Lonely, samples)
	}
	checkApplicationFunctions(t, got, res.Chunks)
}

// checkApplicationFunctions reads each chunk as Sentry's profile processing does
// (profiletest.SentryInApp, vroomrs's set_in_app): the go, java and python services'
// chunks show their own functions as application code, module and function apart, and
// nothing else (their runtime's and libraries' frames, native and kernel ones).
func checkApplicationFunctions(t *testing.T, pd pprofile.Profiles, chunks []profilechunk.Chunk) {
	t.Helper()
	own := `(handle|query|render|encode)\d+` // the services' functions (ownFunction), as Sentry shows them
	want := map[string]*regexp.Regexp{
		"go":     regexp.MustCompile(`^github\.com/example/checkout/server \(\*Handler\)\.` + own + `$`),
		"java":   regexp.MustCompile(`^com\.example\.inventory\.StockController ` + own + `$`),
		"python": regexp.MustCompile(`^` + own + `$`),
	}
	seen := map[string]bool{}
	for i := range chunks {
		c := &chunks[i]
		app, err := profiletest.ApplicationFunctions(c.Payload)
		if err != nil {
			t.Fatal(err)
		}
		svc, _ := pd.ResourceProfiles().At(c.Resource).Resource().Attributes().Get("service.name")
		re, ok := want[c.Platform]
		if !ok {
			t.Fatalf("chunk of %s has platform %s", svc.Str(), c.Platform)
		}
		if len(app) == 0 {
			t.Fatalf("%s (%s): no application function", svc.Str(), c.Platform)
		}
		for _, f := range app {
			if !re.MatchString(f) {
				t.Fatalf("%s (%s): %q counted as application code", svc.Str(), c.Platform, f)
			}
		}
		seen[c.Platform] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("runtimes %v, want go, java and python", seen)
	}
}

// With --large, a service's 10-second profile is megabytes on the wire, and its chunks still
// pass Relay's checks.
func TestLargeProfiles(t *testing.T) {
	p := newProfiler(2, 1, newRecentSpans(), true)
	to := time.Now()
	pd, pc := p.collect(to.Add(-10*time.Second), to, 0, 1)
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	res := profilechunk.NewTranslator(profilechunk.Options{}).Profiles(pd, profilechunk.Want{Backend: true, UI: true})
	size := 0
	for _, c := range res.Chunks {
		if err := profilechunk.CheckRelay(c.Payload, c.Platform); err != nil {
			t.Fatal(err)
		}
		size += len(c.Payload)
	}
	if len(b) < 1<<20 || size < 1<<20 || pc.chunks < 1 {
		t.Fatalf("OTLP %d bytes, chunks %d bytes in %d: want MB profiles", len(b), size, pc.chunks)
	}
	t.Logf("OTLP %d B, %d chunks of %d B, %d samples", len(b), pc.chunks, size, pc.samples)
}
