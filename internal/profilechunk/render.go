package profilechunk

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
)

// chunkWriter renders one chunk: stacks and frames are numbered in the
// order the chunk's samples first reach them, so a chunk holds only what
// its samples reference.
type chunkWriter struct {
	d        *dict
	plan     chunkPlan
	b        []byte
	stackIDs map[int32]int    // dictionary stack -> chunk stack_id
	stacks   []int32          // chunk stack_id -> dictionary stack
	frameIDs map[frameKey]int // location and line -> chunk frame index
	frames   []frameKey
	mappings []int32 // mapping indexes of native frames, each once
	mapSeen  map[int32]bool
	threads  []bool // threads of the stream present in the chunk
	limit    int    // the payload's most bytes (bound.go)
	room     Room   // where the buffer's bytes are reserved; nil: nowhere
	held     int64  // reserved for the buffer
	measured int    // bytes written over while measuring (bound.go)
	state    renderState
	inApp    *InApp // the user's in-app includes and excludes
}

// frameKey is one frame: a line of a location, or line -1 for a location
// without line information.
type frameKey struct{ loc, line int32 }

// render writes the chunk of samples win (sorted by time, every thread with
// at least two non-idle samples), reserving its buffer's bytes in room
// before they are held. It stops, holding nothing, as soon as the payload
// passes t.maxBytes (tooLarge); when room has none left, it measures the
// rest and returns noRoom, holding nothing, for a chunk within the limit.
func (t *Translator) render(d *dict, plan chunkPlan, win []sampleRec, room Room) (Chunk, renderState) {
	w := &chunkWriter{
		d: d, plan: plan, stackIDs: map[int32]int{}, frameIDs: map[frameKey]int{},
		mapSeen: map[int32]bool{}, threads: make([]bool, len(plan.s.threads)), inApp: t.o.InApp,
		limit: t.maxBytes, room: room,
	}
	id := t.o.NewID()
	c := Chunk{
		Platform: plan.platform, UI: IsUI(plan.platform), ProfilerID: plan.profilerID,
		ChunkID: hex.EncodeToString(id[:]), Resource: plan.s.res.index, PID: plan.s.pid,
		Environment: plan.s.res.env, Release: plan.s.res.release,
		Start: time.Unix(0, win[0].ts).UTC(), End: time.Unix(0, win[len(win)-1].ts).UTC(),
		DurationMs: durationMs(win[0].ts, win[len(win)-1].ts), Samples: len(win),
	}
	if w.grow(512 + len(win)*64 + escapedBound(c.Platform) + escapedBound(c.Release) + escapedBound(c.Environment)) {
		w.header(&c)
		w.b = append(w.b, `,"profile":{"samples":[`...)
	}
	for i, s := range win {
		if !w.grow(96 + escapedBound(plan.s.threads[s.thread].id)) {
			break
		}
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.sample(s)
	}
	if w.grow(32) {
		w.b = append(w.b, `],"stacks":[`...)
	}
	for i := 0; i < len(w.stacks) && w.grow(16); i++ { // w.stacks does not grow here
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.stack(w.stacks[i])
	}
	if w.grow(32) {
		w.b = append(w.b, `],"frames":[`...)
	}
	for i := 0; i < len(w.frames) && w.grow(maxFrameBytes); i++ {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.frame(w.frames[i])
	}
	if w.grow(w.tailBound()) {
		w.b = append(w.b, ']')
		c.Threads = w.threadMetadata()
		w.b = append(w.b, '}')
		w.debugMeta()
		w.b = append(w.b, '}')
	}
	if st := w.ended(); st != rendered {
		return Chunk{}, st
	}
	c.Spans = spans(d, plan.s, win)
	c.Payload = w.b
	return c, rendered
}

// ended is how the render ended: a chunk past the limit (tooLarge) or
// measured for want of room (noRoom) gives back what it reserved.
func (w *chunkWriter) ended() renderState {
	st := w.state
	if st == tooLarge || w.size() > w.limit {
		st = tooLarge
	}
	if st != rendered {
		w.giveBack()
	}
	return st
}

// tailBound bounds what follows the frames: thread_metadata and
// debug_meta.
func (w *chunkWriter) tailBound() int {
	n := 64
	for i, on := range w.threads {
		if on {
			th := w.plan.s.threads[i]
			n += escapedBound(th.id) + escapedBound(th.name) + 16
		}
	}
	for _, m := range w.mappings {
		n += escapedBound(w.d.str(w.d.maps.At(int(m)).FilenameStrindex())) + 160
	}
	return n
}

func (w *chunkWriter) header(c *Chunk) {
	w.b = append(w.b, `{"version":"2","chunk_id":"`...)
	w.b = append(w.b, c.ChunkID...)
	w.b = append(w.b, `","profiler_id":"`...)
	w.b = append(w.b, c.ProfilerID...)
	w.b = append(w.b, `","platform":`...)
	w.b = jsonstr.Append(w.b, c.Platform)
	if c.Release != "" {
		w.b = append(w.b, `,"release":`...)
		w.b = jsonstr.Append(w.b, c.Release)
	}
	if c.Environment != "" {
		w.b = append(w.b, `,"environment":`...)
		w.b = jsonstr.Append(w.b, c.Environment)
	}
	w.b = append(w.b, `,"client_sdk":{"name":`...)
	w.b = jsonstr.Append(w.b, sdkinfo.Name)
	w.b = append(w.b, `,"version":`...)
	w.b = jsonstr.Append(w.b, sdkinfo.Version)
	w.b = append(w.b, '}')
}

// sample writes {"stack_id":N,"thread_id":"T","timestamp":S}, the
// timestamp in seconds with microsecond precision.
func (w *chunkWriter) sample(s sampleRec) {
	id, ok := w.stackIDs[s.stack]
	if !ok {
		id = len(w.stacks)
		w.stackIDs[s.stack] = id
		w.stacks = append(w.stacks, s.stack)
	}
	w.threads[s.thread] = true
	w.b = append(w.b, `{"stack_id":`...)
	w.b = strconv.AppendInt(w.b, int64(id), 10)
	w.b = append(w.b, `,"thread_id":`...)
	w.b = jsonstr.Append(w.b, w.plan.s.threads[s.thread].id)
	w.b = append(w.b, `,"timestamp":`...)
	w.b = jsonstr.AppendTimestamp(w.b, uint64(s.ts))
	w.b = append(w.b, '}')
}

// stack writes the frame indexes of a dictionary stack, leaf first as in
// both pprof and Sentry's sample format; a location's inlined lines come
// leaf first too.
func (w *chunkWriter) stack(st int32) {
	w.b = append(w.b, '[')
	li := w.d.stacks.At(int(st)).LocationIndices()
	n := 0
	for k := 0; k < li.Len(); k++ {
		l := li.At(k)
		lines := w.d.locs.At(int(l)).Lines().Len()
		if lines == 0 && w.grow(16) {
			n = w.frameRef(frameKey{l, -1}, n)
		}
		for j := 0; j < lines && w.grow(16); j++ {
			n = w.frameRef(frameKey{l, int32(j)}, n)
		}
	}
	if w.state != tooLarge { // else the buffer may be full: nothing more is written
		w.b = append(w.b, ']')
	}
}

func (w *chunkWriter) frameRef(f frameKey, n int) int {
	id, ok := w.frameIDs[f]
	if !ok {
		id = len(w.frames)
		w.frameIDs[f] = id
		w.frames = append(w.frames, f)
	}
	if n > 0 {
		w.b = append(w.b, ',')
	}
	w.b = strconv.AppendInt(w.b, int64(id), 10)
	return n + 1
}

// threadMetadata writes the names of the chunk's named threads and returns
// the chunk's thread IDs.
func (w *chunkWriter) threadMetadata() []string {
	var ids []string
	named := 0
	for i, on := range w.threads {
		if !on {
			continue
		}
		th := w.plan.s.threads[i]
		ids = append(ids, th.id)
		if th.name == "" {
			continue
		}
		if named == 0 {
			w.b = append(w.b, `,"thread_metadata":{`...)
		} else {
			w.b = append(w.b, ',')
		}
		named++
		w.b = jsonstr.Append(w.b, th.id)
		w.b = append(w.b, `:{"name":`...)
		w.b = jsonstr.Append(w.b, th.name)
		w.b = append(w.b, '}')
	}
	if named > 0 {
		w.b = append(w.b, '}')
	}
	return ids
}

// appendUint32Field writes ,"key":v when v fits Relay's u32 and is not 0.
func appendUint32Field(b []byte, key string, v int64) []byte {
	if v <= 0 || v > math.MaxUint32 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}
