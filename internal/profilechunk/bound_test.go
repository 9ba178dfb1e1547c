package profilechunk

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/account"
)

// hostileProfile is the profile: one location of lines lines, each
// naming one function whose name and path are 64 KiB of control characters
// (6 bytes each in JSON), on a mapping whose file name is as long, in
// three samples of one stack on thread 7, 10 ms apart (a window never cut).
func hostileProfile(lines int) *pb {
	b := newPB()
	rp := b.resource(map[string]any{"service.name": "evil", "process.pid": int64(1), "telemetry.sdk.language": "go"})
	p := b.profile(rp, "samples")
	long := strings.Repeat("\x01", 64<<10)
	fn := int64(b.fn("f"+long, "/"+long))
	ls := make([][2]int64, lines)
	for i := range ls {
		ls[i] = [2]int64{fn, int64(i + 1)}
	}
	loc := b.loc(0x401000, b.mapping("/"+long, "ab12"), "native", ls...)
	ts := make([]uint64, 3)
	for i := range ts {
		ts[i] = ms(uint64(10 * i))
	}
	b.sample(p, b.Stack(loc), 7, strings.Repeat("t", 64<<10), 0, ts...)
	return b
}

// TestFrameWithinItsBound: a frame's strings are cut to Relay's 256
// characters, so every frame stays within maxFrameBytes, the bound the
// renderer reserves for it, and the chunk passes Relay.
func TestFrameWithinItsBound(t *testing.T) {
	res := NewTranslator(Options{}).Profiles(hostileProfile(256).pd, both)
	require.Len(t, res.Chunks, 1)
	c := res.Chunks[0]
	require.NoError(t, CheckRelay(c.Payload, c.Platform))
	var top struct {
		Profile struct {
			Frames []json.RawMessage `json:"frames"`
		} `json:"profile"`
	}
	require.NoError(t, json.Unmarshal(c.Payload, &top))
	require.Len(t, top.Profile.Frames, 256)
	for _, f := range top.Profile.Frames {
		assert.LessOrEqual(t, len(f), maxFrameBytes)
		var fr map[string]any
		require.NoError(t, json.Unmarshal(f, &fr))
		for k, v := range fr {
			if s, ok := v.(string); ok {
				assert.LessOrEqual(t, utf8.RuneCountInString(s), maxFrameChars, k)
			}
		}
	}
	t.Logf("a %d-byte chunk for 256 lines of 64 KiB names", len(c.Payload))
	assert.Less(t, len(c.Payload), 4<<20)
}

// room is a Room of max bytes that records what it lent.
type room struct{ max, held, peak, taken int64 }

func (r *room) Take(n int64) bool {
	if r.held+n > r.max {
		return false
	}
	r.held += n
	r.taken += n
	r.peak = max(r.peak, r.held)
	return true
}

func (r *room) Give(n int64) { r.held -= n }

// TestChunkReservedBeforeRendered: a chunk's buffer is reserved before it
// grows, so what is held never passes what was reserved; with no room, the
// chunk is not rendered, counted NoRoom (one chunk and its milliseconds),
// and all it reserved is given back.
func TestChunkReservedBeforeRendered(t *testing.T) {
	tr := NewTranslator(Options{})
	r := &room{max: 1 << 30}
	res := tr.Profiles(hostileProfile(256).pd, Want{Backend: true, Room: r})
	require.Len(t, res.Chunks, 1)
	assert.GreaterOrEqual(t, r.held, int64(cap(res.Chunks[0].Payload)), "the chunk's buffer is reserved")

	r = &room{max: 64 << 10}
	res = tr.Profiles(hostileProfile(256).pd, Want{Backend: true, Room: r})
	assert.Empty(t, res.Chunks)
	assert.Equal(t, int64(1), res.NoRoom[account.CatProfileChunk])
	assert.Equal(t, int64(20), res.NoRoom[account.CatProfileDuration])
	assert.Zero(t, r.held, "all given back")
	assert.LessOrEqual(t, r.peak, r.max)
}

// TestUncuttableChunkOverTheLimit: a window of fewer than four samples
// cannot be cut; when its chunk passes MaxChunkBytes it is counted invalid,
// never rendered whole: what the call allocates stays near the limit,
// however many frames the window names (before, such a window was
// rendered whole and sent over the limit).
func TestUncuttableChunkOverTheLimit(t *testing.T) {
	tr := NewTranslator(Options{MaxChunkBytes: 64 << 10})
	pd := hostileProfile(4096).pd
	var res Result
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	res = tr.Profiles(pd, both)
	runtime.ReadMemStats(&b)
	assert.Empty(t, res.Chunks)
	assert.Equal(t, int64(1), res.Invalid[account.CatProfileChunk])
	assert.Equal(t, int64(20), res.Invalid[account.CatProfileDuration])
	alloc := b.TotalAlloc - a.TotalAlloc
	t.Logf("%d KiB allocated", alloc>>10)
	assert.Less(t, alloc, uint64(2<<20), "bytes allocated")
}

// TestThrownAwayRendersBounded: a ~100 KB profile whose one stack names
// 20,000 lines of 300-character names, in 400 windows of two samples:
// every window passes the limit and none can be cut. The renders thrown
// away stop at the call's waste budget, and the windows left are counted
// invalid unrendered. (Without the budget, each window costs a render to
// the 4 MiB limit, ~0.1 s; one such window of 2,000 samples, cut down to
// windows of three, took 109 s.)
func TestThrownAwayRendersBounded(t *testing.T) {
	b := newPB()
	rp := b.resource(map[string]any{"service.name": "evil", "process.pid": int64(1), "telemetry.sdk.language": "go"})
	p := b.profile(rp, "samples")
	long := strings.Repeat("x", 300)
	fn := int64(b.fn("f"+long, "/"+long))
	ls := make([][2]int64, 20000)
	for i := range ls {
		ls[i] = [2]int64{fn, int64(i + 1)}
	}
	loc := b.loc(0x401000, 0, "", ls...)
	var ts []uint64
	for i := range 400 {
		ts = append(ts, ms(uint64(61000*i)), ms(uint64(61000*i+10)))
	}
	b.sample(p, b.Stack(loc), 7, "", 0, ts...)
	var res Result
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res = NewTranslator(Options{}).Profiles(b.pd, both)
	runtime.ReadMemStats(&after)
	assert.Empty(t, res.Chunks)
	assert.Equal(t, int64(400), res.Invalid[account.CatProfileChunk])
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB allocated", alloc>>20)
	assert.Less(t, alloc, uint64(4*wasteBudget(DefaultMaxChunkBytes)), "bytes allocated")
}

// cuttableProfile is 400 samples on one thread, 10 ms apart, each of its
// own stack of one location named by a 200-character function: about
// 110 KB of chunk, cut by size under a small MaxChunkBytes.
func cuttableProfile() *pb {
	b := newPB()
	rp := b.resource(map[string]any{"service.name": "big", "process.pid": int64(1), "telemetry.sdk.language": "go"})
	p := b.profile(rp, "samples")
	for i := range 400 {
		name := strings.Repeat(string(rune('a'+i%26)), 190) + strconv.Itoa(i)
		loc := b.loc(uint64(0x401000+16*i), 0, "", [2]int64{int64(b.fn(name, "/src/"+name+".go")), 1})
		b.sample(p, b.Stack(loc), 7, "main", 0, ms(uint64(10*i)))
	}
	return b
}

// TestNoRoomCountedAsTheChunksItWouldBe: a window the budget has no room
// for is counted as the chunks a budget with room would have cut it into,
// in chunks and in milliseconds (it was counted as one: make partition's
// large cases found 89 profile chunks unaccounted against what otlpgen,
// rendering without a budget, expected). Measuring holds nothing past
// the budget but a frame's write.
func TestNoRoomCountedAsTheChunksItWouldBe(t *testing.T) {
	for _, limit := range []int{24 << 10, 64 << 10, 4 << 20} {
		tr := NewTranslator(Options{MaxChunkBytes: limit})
		free := tr.Profiles(cuttableProfile().pd, both)
		require.NotEmpty(t, free.Chunks)
		var ms int64
		for _, c := range free.Chunks {
			ms += c.DurationMs
		}
		for _, size := range []int64{0, 4 << 10, 40 << 10} {
			r := &room{max: size}
			var a, b runtime.MemStats
			pd := cuttableProfile().pd
			runtime.GC()
			runtime.ReadMemStats(&a)
			res := tr.Profiles(pd, Want{Backend: true, Room: r})
			runtime.ReadMemStats(&b)
			if size == 0 {
				assert.Empty(t, res.Chunks)
			}
			assert.Equal(t, int64(len(free.Chunks)), int64(len(res.Chunks))+res.NoRoom[account.CatProfileChunk], "limit %d, room %d", limit, size)
			var got int64
			for _, c := range res.Chunks {
				got += c.DurationMs
			}
			assert.Equal(t, ms, got+res.NoRoom[account.CatProfileDuration], "limit %d, room %d", limit, size)
			assert.Equal(t, free.Invalid, res.Invalid)
			assert.LessOrEqual(t, r.peak, r.max)
			t.Logf("limit %d KiB, room %d KiB: %d chunks free, %d rendered + %d no room; %d KiB allocated",
				limit>>10, size>>10, len(free.Chunks), len(res.Chunks), res.NoRoom[account.CatProfileChunk], (b.TotalAlloc-a.TotalAlloc)>>10)
		}
	}
}
