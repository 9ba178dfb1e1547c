package profilechunk

import (
	"slices"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/account"
)

// chunkPlan is the samples of one chunk to be, and what every chunk of the
// stream shares.
type chunkPlan struct {
	s          *stream
	platform   string
	profilerID string
}

// emit cuts the samples of a stream into chunks: by time (MaxChunkSpan),
// then by size (halving a chunk whose payload passes maxBytes), and renders
// those of a wanted type.
func (t *Translator) emit(d *dict, s *stream, want Want, waste *int, res *Result) {
	slices.SortStableFunc(s.samples, func(a, b sampleRec) int { return cmpInt64(a.ts, b.ts) })
	plan := chunkPlan{s: s, platform: s.res.platform, profilerID: t.profilerID(s)}
	if plan.platform == "" {
		plan.platform = dominantPlatform(d, s)
	}
	ui := IsUI(plan.platform)
	wanted := ui && want.UI || !ui && want.Backend
	cat := profileCategory(plan.platform)
	for a := 0; a < len(s.samples); {
		b := a + 1
		for b < len(s.samples) && s.samples[b].ts-s.samples[a].ts <= int64(MaxChunkSpan) {
			b++
		}
		win := keepBusyThreads(d, s.samples[a:b], len(s.threads), res)
		a = b
		switch {
		case len(win) == 0:
			res.Invalid[cat]++
		case !wanted:
			res.Skipped[cat]++
			res.Skipped[durationCategory(cat)] += durationMs(win[0].ts, win[len(win)-1].ts)
		default:
			t.renderSized(d, plan, win, want.Room, waste, res)
		}
	}
}

// renderSized renders win as one chunk, or as two halves (recursively)
// when its payload would pass maxBytes. A window that cannot be cut (fewer
// than four samples, or no balanced split) and is still too large is
// counted Invalid: never rendered whole and sent over the limit. A window
// that finds no room in the memory budget is measured instead, cut as it
// would have been, and each of its chunks within the limit counted NoRoom,
// so the chunks counted are those a budget with room would have sent. Each
// render that passes the limit is thrown away; once a call has thrown away
// its waste budget, its windows left are counted Invalid unrendered, so a
// small request cannot make the renderer write and discard without end.
func (t *Translator) renderSized(d *dict, plan chunkPlan, win []sampleRec, room Room, waste *int, res *Result) {
	state := tooLarge
	var c Chunk
	if *waste > 0 {
		c, state = t.render(d, plan, win, room)
	}
	if state == rendered {
		res.Chunks = append(res.Chunks, c)
		return
	}
	if state == tooLarge && *waste > 0 {
		*waste -= t.maxBytes
	}
	if state == tooLarge && len(win) >= 4 && *waste > 0 {
		first, second := splitBalanced(len(win), len(plan.s.threads),
			func(i int) int32 { return win[i].thread }, func(i int) bool { return d.idle(win[i].stack) })
		if first != nil && second != nil {
			t.renderSized(d, plan, pick(win, first), room, waste, res)
			t.renderSized(d, plan, pick(win, second), room, waste, res)
			return
		}
	}
	to := &res.Invalid
	if state == noRoom {
		to = &res.NoRoom
	}
	cat := profileCategory(plan.platform)
	to[cat]++
	to[durationCategory(cat)] += durationMs(win[0].ts, win[len(win)-1].ts)
}

// wasteBudget is the bytes one call of Profiles may render and throw away
// (renders that passed maxBytes), before windows over the limit are no
// longer cut: enough to cut a stream of a few times Relay's 50 MiB into
// chunks, a few seconds of CPU at most.
func wasteBudget(maxBytes int) int { return max(16*maxBytes, 64<<20) }

func pick(win []sampleRec, idx []int) []sampleRec {
	out := make([]sampleRec, len(idx))
	for i, k := range idx {
		out[i] = win[k]
	}
	return out
}

// keepBusyThreads returns the samples of threads with at least two non-idle
// samples in win, as Relay keeps them (remove_single_samples_per_thread in
// relay-profiling/src/sample/v2.rs), and counts the others as Lonely.
func keepBusyThreads(d *dict, win []sampleRec, threads int, res *Result) []sampleRec {
	busy := make([]int32, threads)
	for _, s := range win {
		if !d.idle(s.stack) {
			busy[s.thread]++
		}
	}
	out := make([]sampleRec, 0, len(win))
	for _, s := range win {
		if busy[s.thread] >= 2 {
			out = append(out, s)
		} else {
			res.Samples.Lonely++
		}
	}
	return out
}

// splitBalanced splits n samples, sorted by time, into two time halves
// where every thread keeps at least two non-idle samples in each half it
// appears in: a thread with fewer in one half moves all its samples of that
// half to the other (Relay sorts samples itself, so order does not matter,
// and the span of either half stays within the whole's). It returns the
// sample indexes of each half; nil when one half ends empty.
func splitBalanced(n, threads int, threadOf func(int) int32, idle func(int) bool) (first, second []int) {
	mid := n / 2
	busy := make([][2]int, threads)
	for i := range n {
		if !idle(i) {
			busy[threadOf(i)][half(i, mid)]++
		}
	}
	side := make([]int8, threads) // -1 all in first, 1 all in second, 0 split by time
	for th, b := range busy {
		switch {
		case b[0] < 2:
			side[th] = 1
		case b[1] < 2:
			side[th] = -1
		}
	}
	for i := range n {
		th := threadOf(i)
		if side[th] == -1 || side[th] == 0 && half(i, mid) == 0 {
			first = append(first, i)
		} else {
			second = append(second, i)
		}
	}
	if len(first) == 0 || len(second) == 0 {
		return nil, nil
	}
	return first, second
}

func half(i, mid int) int {
	if i < mid {
		return 0
	}
	return 1
}

// durationMs is what profile_duration counts for samples from first to
// last: their span in milliseconds, rounded up, at least 1.
func durationMs(first, last int64) int64 {
	return max(1, (last-first+int64(time.Millisecond)-1)/int64(time.Millisecond))
}

func durationCategory(c account.Category) account.Category {
	if c == account.CatProfileChunkUI {
		return account.CatProfileDurationUI
	}
	return account.CatProfileDuration
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dominantPlatform is the platform of a stream whose resource names no
// language: the most common platform of its interpreted frames (the eBPF
// profiler sees every runtime), else native.
func dominantPlatform(d *dict, s *stream) string {
	var n [len(framePlatforms) + 1]int
	seen := map[int32]bool{}
	for _, r := range s.samples {
		if seen[r.stack] {
			continue
		}
		seen[r.stack] = true
		li := d.stacks.At(int(r.stack)).LocationIndices()
		for k := 0; k < li.Len(); k++ {
			n[d.locationFrame(li.At(k)).plat]++
		}
	}
	best := platNative
	for p := platNative + 1; p <= len(framePlatforms); p++ {
		if n[p] > n[best] || best == platNative && n[p] > 0 {
			best = p
		}
	}
	return framePlatforms[best-1]
}

// idle reports whether stack i (a valid index) has no frames: Relay does
// not count such samples as activity of their thread.
func (x *dict) idle(i int32) bool { return x.stacks.At(int(i)).LocationIndices().Len() == 0 }

// profilerID is stream s's profiler_id: from Options.SharedIdentity when
// its resource carries it, else from the resource's whole identity.
func (t *Translator) profilerID(s *stream) string {
	if t.o.SharedIdentity != "" {
		if id := SharedProfilerID(t.o.SharedIdentity, s.res.shared, s.pid); id != "" {
			return id
		}
	}
	return ProfilerID(s.res.salt, s.res.identity, s.pid)
}
