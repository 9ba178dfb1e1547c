package profilechunk

import (
	"encoding/hex"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"time"
)

// Halve splits a chunk by time into two valid chunks, for a chunk Sentry
// answered 413: the same profiler_id and metadata, fresh chunk_ids, each
// half holding only the stacks, frames and thread_metadata its samples
// reference (debug_meta is kept whole), every thread keeping at least two
// non-idle samples in each half it appears in. Both halves keep c.Spans
// (a superset: the link goes through the shared profiler_id). ok is false
// when c has fewer than four samples or cannot be split that way.
func (t *Translator) Halve(c Chunk) (first, second Chunk, ok bool) {
	var top map[string]json.RawMessage
	var p halveProfile
	if json.Unmarshal(c.Payload, &top) != nil || json.Unmarshal(top["profile"], &p) != nil || len(p.Samples) < 4 {
		return first, second, false
	}
	if !p.sortValid() {
		return first, second, false
	}
	threadIdx := map[string]int32{}
	threadOf := make([]int32, len(p.Samples))
	for i, s := range p.Samples {
		k, seen := threadIdx[s.ThreadID]
		if !seen {
			k = int32(len(threadIdx))
			threadIdx[s.ThreadID] = k
		}
		threadOf[i] = k
	}
	a, b := splitBalanced(len(p.Samples), len(threadIdx), func(i int) int32 { return threadOf[i] },
		func(i int) bool { return len(p.Stacks[p.Samples[i].StackID]) == 0 })
	if a == nil {
		return first, second, false
	}
	first, ok1 := t.halfChunk(c, top, &p, a)
	second, ok2 := t.halfChunk(c, top, &p, b)
	return first, second, ok1 && ok2
}

type halveSample struct {
	StackID   int         `json:"stack_id"`
	ThreadID  string      `json:"thread_id"`
	Timestamp json.Number `json:"timestamp"`
	ts        float64
}

type halveProfile struct {
	Samples        []halveSample              `json:"samples"`
	Stacks         [][]int                    `json:"stacks"`
	Frames         []json.RawMessage          `json:"frames"`
	ThreadMetadata map[string]json.RawMessage `json:"thread_metadata,omitempty"`
}

// sortValid checks every index and timestamp and sorts the samples by time.
func (p *halveProfile) sortValid() bool {
	for i := range p.Samples {
		s := &p.Samples[i]
		f, err := s.Timestamp.Float64()
		if err != nil || math.IsInf(f, 0) || s.StackID < 0 || s.StackID >= len(p.Stacks) {
			return false
		}
		s.ts = f
	}
	for _, st := range p.Stacks {
		for _, f := range st {
			if f < 0 || f >= len(p.Frames) {
				return false
			}
		}
	}
	slices.SortStableFunc(p.Samples, func(a, b halveSample) int {
		switch {
		case a.ts < b.ts:
			return -1
		case a.ts > b.ts:
			return 1
		}
		return 0
	})
	return true
}

// halfChunk builds the chunk of samples idx of p.
func (t *Translator) halfChunk(c Chunk, top map[string]json.RawMessage, p *halveProfile, idx []int) (Chunk, bool) {
	var h halveProfile
	stackIDs := map[int]int{}
	frameIDs := map[int]int{}
	var threads []string
	seen := map[string]bool{}
	for _, i := range idx {
		s := p.Samples[i]
		id, ok := stackIDs[s.StackID]
		if !ok {
			id = len(h.Stacks)
			stackIDs[s.StackID] = id
			h.Stacks = append(h.Stacks, remapFrames(p.Stacks[s.StackID], p.Frames, frameIDs, &h.Frames))
		}
		s.StackID = id
		h.Samples = append(h.Samples, s)
		if !seen[s.ThreadID] {
			seen[s.ThreadID] = true
			threads = append(threads, s.ThreadID)
			if m, ok := p.ThreadMetadata[s.ThreadID]; ok {
				if h.ThreadMetadata == nil {
					h.ThreadMetadata = map[string]json.RawMessage{}
				}
				h.ThreadMetadata[s.ThreadID] = m
			}
		}
	}
	prof, err1 := json.Marshal(&h)
	id := t.o.NewID()
	out := make(map[string]json.RawMessage, len(top))
	maps.Copy(out, top)
	chunkID := hex.EncodeToString(id[:])
	out["chunk_id"], _ = json.Marshal(chunkID)
	out["profile"] = prof
	payload, err2 := json.Marshal(out)
	firstTs, lastTs := h.Samples[0].ts, h.Samples[len(h.Samples)-1].ts
	r := c
	r.Payload, r.ChunkID, r.Threads, r.Samples = payload, chunkID, threads, len(h.Samples)
	r.Start, r.End = secondsTime(firstTs), secondsTime(lastTs)
	r.DurationMs = durationMs(r.Start.UnixNano(), r.End.UnixNano())
	return r, err1 == nil && err2 == nil
}

func remapFrames(st []int, frames []json.RawMessage, ids map[int]int, out *[]json.RawMessage) []int {
	ns := make([]int, len(st))
	for i, f := range st {
		id, ok := ids[f]
		if !ok {
			id = len(*out)
			ids[f] = id
			*out = append(*out, frames[f])
		}
		ns[i] = id
	}
	return ns
}

func secondsTime(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// MarshalJSON writes the sample without its parsed timestamp.
func (s halveSample) MarshalJSON() ([]byte, error) {
	type plain struct {
		StackID   int         `json:"stack_id"`
		ThreadID  string      `json:"thread_id"`
		Timestamp json.Number `json:"timestamp"`
	}
	return json.Marshal(plain{s.StackID, s.ThreadID, s.Timestamp})
}
