package encode

import (
	"sync"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// maxPooledPayloads bounds the buffer an Arena keeps between pushes: a
// push with more container bytes than this lets its buffer go to the GC.
const maxPooledPayloads = 16 << 20

// Arena lays the container payloads of one push end to end in one
// buffer. The buffer comes from a pool and goes back to it once every envelope
// of the push is settled, so steady log and span traffic builds its
// containers without allocating.
type Arena struct{ buf []byte }

// Arenas is the pool the arenas of all pushes share.
type Arenas struct{ pool sync.Pool }

// Get takes an arena from the pool.
func (p *Arenas) Get() *Arena {
	if a, ok := p.pool.Get().(*Arena); ok {
		return a
	}
	return &Arena{}
}

// Put takes a back. Nothing may use a payload of a after this.
func (p *Arenas) Put(a *Arena) {
	if cap(a.buf) > maxPooledPayloads {
		a.buf = nil
	}
	a.buf = a.buf[:0]
	p.pool.Put(a)
}

// containers writes the container payload of each chunk (span v2 containers
// when spans) into a and returns
// them, each a slice of a's buffer that later writes cannot touch. When the
// buffer is too small it is replaced: the payloads already handed out keep
// the old one alive for as long as they are used.
func (a *Arena) containers(chunks [][][]byte, spans bool) [][]byte {
	appendC, lenC := envelope.AppendContainer, envelope.ContainerLen
	if spans {
		appendC, lenC = envelope.AppendSpanContainer, envelope.SpanContainerLen
	}
	need := 0
	for _, items := range chunks {
		need += lenC(items)
	}
	if cap(a.buf)-len(a.buf) < need {
		a.buf = make([]byte, 0, max(need, 2*cap(a.buf)))
	}
	out := make([][]byte, len(chunks))
	for i, items := range chunks {
		start := len(a.buf)
		a.buf = appendC(a.buf, items)
		out[i] = a.buf[start:len(a.buf):len(a.buf)]
	}
	return out
}
