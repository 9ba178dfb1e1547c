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
	noRoom               // the memory budget had no room for it
)

// grow makes room for n more bytes in w.b, reserving what the buffer grows
// by before it grows; false when the payload has passed the chunk's limit
// or the budget has no room, and from then on.
func (w *chunkWriter) grow(n int) bool {
	switch {
	case w.state != rendered:
		return false
	case len(w.b) > w.limit:
		w.state = tooLarge
		return false
	case len(w.b)+n <= cap(w.b):
		return true
	}
	c := min(max(2*cap(w.b), len(w.b)+n), w.limit+n)
	if w.room != nil {
		if !w.room.Take(int64(c - cap(w.b))) {
			w.state = noRoom
			return false
		}
		w.held += int64(c - cap(w.b))
	}
	b := make([]byte, len(w.b), c)
	copy(b, w.b)
	w.b = b
	return true
}

// giveBack returns what a render that ended early reserved.
func (w *chunkWriter) giveBack() {
	if w.room != nil && w.held > 0 {
		w.room.Give(w.held)
	}
	w.held, w.b = 0, nil
}
