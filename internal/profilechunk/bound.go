package profilechunk

// A chunk's size is bounded before it is written, and what it writes is
// reserved first: a small profile can name a long function at every line
// of a location that every sample reaches, and a renderer that wrote it out
// whole before measuring it held hundreds of MiB for a 130 KB request.

// maxFrameChars is the most characters a frame's string keeps: Relay's
// limit for an event frame's function (max_chars "symbol") and filename and
// abs_path ("path"), both 256 (relay-event-schema, processor/attrs.rs
// MaxChars::limit), applied to a profile's frames too.
const maxFrameChars = 256

// maxFrameBytes bounds one rendered frame: each string of at most
// maxFrameChars characters, each written in at most 6 bytes (\u00XX), with
// room for every field frame writes. TestFrameWithinItsBound holds every
// frame to it.
const maxFrameBytes = 12 << 10

// trimFrameString cuts s to maxFrameChars characters.
func trimFrameString(s string) string {
	if len(s) <= maxFrameChars {
		return s
	}
	n := 0
	for i := range s {
		if n == maxFrameChars {
			return s[:i]
		}
		n++
	}
	return s
}

// escapedBound bounds the bytes jsonstr.Append writes for s: at most 6 per
// byte, two quotes.
func escapedBound(s string) int { return 6*len(s) + 2 }

// renderState is how a render ended.
type renderState int

const (
	rendered renderState = iota
	tooLarge             // the payload would pass the chunk's limit
	noRoom               // the memory budget had no room for it: measured, not kept
)

// grow makes room for n more bytes in w.b, reserving what the buffer grows
// by before it grows; false once the payload has passed the chunk's limit.
// When the budget has no room, the render goes on measuring: what it
// writes is counted and written over, in the buffer it already holds, so
// a chunk that found no room is still cut where a chunk with room would
// have been, and counted as the chunks it would have been
// (TestNoRoomCountedAsTheChunksItWouldBe).
func (w *chunkWriter) grow(n int) bool {
	switch {
	case w.state == tooLarge:
		return false
	case w.size() > w.limit:
		w.state = tooLarge
		return false
	case len(w.b)+n <= cap(w.b):
		return true
	case w.state == noRoom:
		w.measure()
		return true
	}
	c := min(max(2*cap(w.b), len(w.b)+n), w.limit+n)
	if w.room != nil {
		if !w.room.Take(int64(c - cap(w.b))) {
			w.state = noRoom
			w.measure()
			return true
		}
		w.held += int64(c - cap(w.b))
	}
	b := make([]byte, len(w.b), c)
	copy(b, w.b)
	w.b = b
	return true
}

// measure counts what the buffer holds and empties it for what follows:
// a measuring render holds its reserved buffer and, past it, one write
// between two grows (a frame, maxFrameBytes at most).
func (w *chunkWriter) measure() {
	w.measured += len(w.b)
	w.b = w.b[:0]
}

// size is the payload's bytes so far, those measured and written over
// included.
func (w *chunkWriter) size() int { return w.measured + len(w.b) }

// giveBack returns what a render that ended early reserved.
func (w *chunkWriter) giveBack() {
	if w.room != nil && w.held > 0 {
		w.room.Give(w.held)
	}
	w.held, w.b = 0, nil
}
