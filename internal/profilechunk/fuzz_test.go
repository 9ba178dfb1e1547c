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
		checkChunks(t, tr, tr.Profiles(pd, both))
	})
}

// checkChunks fails unless every chunk of res, and each half of it, passes
// CheckRelay, and the halves hold the chunk's samples.
func checkChunks(t *testing.T, tr *Translator, res Result) {
	for i := range res.Chunks {
		c := &res.Chunks[i]
		if err := CheckRelay(c.Payload, c.Platform); err != nil {
			t.Fatalf("%v: %s", err, c.Payload)
		}
		if c.Samples <= 0 || c.DurationMs <= 0 || len(c.ProfilerID) != 32 {
			t.Fatalf("chunk fields: %+v", c)
		}
		a, b, ok := tr.Halve(*c)
		if !ok {
			continue
		}
		for _, h := range []*Chunk{&a, &b} {
			if err := CheckRelay(h.Payload, h.Platform); err != nil {
				t.Fatalf("half: %v: %s", err, h.Payload)
			}
		}
		if a.Samples+b.Samples != c.Samples {
			t.Fatalf("halves hold %d+%d of %d samples", a.Samples, b.Samples, c.Samples)
		}
	}
}

// FuzzBuilt builds profiles whose indexes, timestamps, thread IDs and
// strings come from the fuzzer (dangling indexes, zero and far timestamps,
// invalid UTF-8 names), which protobuf mutation rarely reaches.
func FuzzBuilt(f *testing.F) {
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"), "main\xff", uint16(3))
	f.Add([]byte{0, 200, 1, 1, 2, 2, 3, 3, 250, 250, 1, 0}, "", uint16(40000))
	tr := NewTranslator(Options{MaxChunkBytes: 1500})
	f.Fuzz(func(t *testing.T, ops []byte, name string, step uint16) {
		b := builtProfile(ops, name, step)
		checkChunks(t, tr, tr.Profiles(b.pd, Want{Backend: true}))
	})
}

// builtProfile interprets ops as builder steps: add a location, a stack, a
// timestamped sample or one without timestamps, with indexes that may dangle.
func builtProfile(ops []byte, name string, step uint16) *pb {
	b := newPB()
	p := b.profile(b.resource(map[string]any{"service.name": name, "telemetry.sdk.language": name}), "samples")
	fns := []int32{b.fn(name, "/"+name), b.fn("f", "lib/site-packages/x.py")}
	maps := []int32{b.mapping(name, "abcdef0123"), b.mapping("/usr/lib/libz.so", name)}
	var locs []int32
	for i, c := range ops {
		switch c % 4 {
		case 0:
			typ := []string{"native", "kernel", "cpython", name}[c/4%4]
			locs = append(locs, b.loc(uint64(c)<<4, maps[i%2]+int32(c/64), typ, [2]int64{int64(fns[i%2]) + int64(c/128), int64(c) - 3}))
		case 1:
			b.Stack(locs...)
		case 2:
			ts := uint64(0)
			if c > 10 {
				ts = ms(uint64(i) * uint64(step))
			}
			b.sample(p, int32(c/4)%int32(len(locs)+3), int64(c%3), name, int32(c%5), ts, ts+uint64(c))
		case 3:
			b.sample(p, int32(c/8), int64(c), "", 0)
		}
	}
	return b
}
