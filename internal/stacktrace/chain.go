package stacktrace

// chain holds the exceptions a parser has read, keeping only the last
// MaxExceptions (those nearest the thrown one) however many the text holds:
// a new exception past the cap takes the slot of the oldest, with its frame
// array and header buffer, and the others move up one. A parse so holds and
// allocates at most MaxExceptions+1 exceptions, whatever the size of the
// text.
type chain struct {
	excs []Exception
	hs   []header // hs[i] is the header of excs[i] until takeHeaders
}

// add starts a new exception, the last.
func (c *chain) add() {
	if len(c.excs) == MaxExceptions+1 {
		rotate(c.excs)
		rotate(c.hs)
		c.excs, c.hs = c.excs[:MaxExceptions], c.hs[:MaxExceptions]
	}
	n := len(c.excs)
	if n == cap(c.excs) || n == cap(c.hs) {
		c.excs, c.hs = append(c.excs, Exception{}), append(c.hs, header{})
		return
	}
	c.excs, c.hs = c.excs[:n+1], c.hs[:n+1]
	c.excs[n] = Exception{Frames: c.excs[n].Frames[:0]}
	c.hs[n].reset()
}

// drop removes the last exception; its slot is reused by the next add.
func (c *chain) drop() {
	c.excs, c.hs = c.excs[:len(c.excs)-1], c.hs[:len(c.hs)-1]
}

// last is the last exception; there must be one.
func (c *chain) last() *Exception { return &c.excs[len(c.excs)-1] }

// lastHeader is the header of the last exception; there must be one.
func (c *chain) lastHeader() *header { return &c.hs[len(c.hs)-1] }

// kept returns the last MaxExceptions exceptions, oldest first, each with
// its header's text in Value.
func (c *chain) kept() []Exception {
	from := max(0, len(c.excs)-MaxExceptions)
	excs := c.excs[from:]
	for i := range excs {
		excs[i].Value = c.hs[from+i].text()
	}
	return excs
}

// rotate moves s[0] to the end and the others down one: the slot of the
// oldest becomes the last, to be reused.
func rotate[T any](s []T) {
	first := s[0]
	copy(s, s[1:])
	s[len(s)-1] = first
}
