package profilechunk

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// FuzzProfiles feeds arbitrary OTLP profiles (protobuf) to the translator:
// it must never panic, and every chunk it renders must pass CheckRelay,
// halve into chunks that pass it too, and be counted.
func FuzzProfiles(f *testing.F) {
	m := &pprofile.ProtoMarshaler{}
	for _, b := range []*pb{goProfile(), ebpfProfile(), longProfile(70_000)} {
		raw, err := m.MarshalProfiles(b.pd)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	u := &pprofile.ProtoUnmarshaler{}
	tr := NewTranslator(Options{MaxChunkBytes: 3000})
	f.Fuzz(func(t *testing.T, raw []byte) {
		pd, err := u.UnmarshalProfiles(raw)
		if err != nil {
			return
		}
		res := tr.Profiles(pd, both)
		for _, c := range res.Chunks {
			if err := CheckRelay(c.Payload, c.Platform); err != nil {
				t.Fatalf("%v: %s", err, c.Payload)
			}
			if c.Samples <= 0 || c.DurationMs <= 0 || len(c.ProfilerID) != 32 {
				t.Fatalf("chunk fields: %+v", c)
			}
			if a, b, ok := tr.Halve(c); ok {
				for _, h := range []Chunk{a, b} {
					if err := CheckRelay(h.Payload, h.Platform); err != nil {
						t.Fatalf("half: %v: %s", err, h.Payload)
					}
				}
				if a.Samples+b.Samples != c.Samples {
					t.Fatalf("halves hold %d+%d of %d samples", a.Samples, b.Samples, c.Samples)
				}
			}
		}
	})
}
