// Package bufpool keeps the translators' output buffers for reuse: a result
// gives its buffer back once the envelopes built from it are detached, and a
// later call writes into it instead of allocating a new one.
//
// It must not hand one buffer to two holders: a buffer is given back at most
// once, however often its Releaser is called.
package bufpool

import (
	"sync"
	"sync/atomic"
)

// Pool holds buffers given back; the zero Pool is ready to use.
type Pool struct{ p sync.Pool }

// Get is an empty buffer of at least capacity n: one given back when it is
// large enough, else a new one.
func (p *Pool) Get(n int) []byte {
	if b, ok := p.p.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:0]
	}
	return make([]byte, 0, n)
}

// Releaser gives buf back to p when released; nil for a buffer with no
// capacity, which there is no point keeping.
func (p *Pool) Releaser(buf []byte) *Releaser {
	if cap(buf) == 0 {
		return nil
	}
	return &Releaser{pool: p, buf: buf}
}

// Releaser gives one buffer back to its pool, at most once.
type Releaser struct {
	pool *Pool
	buf  []byte
	done atomic.Bool
}

// Release gives the buffer back; again, or on nil, it does nothing.
func (r *Releaser) Release() {
	if r == nil || r.done.Swap(true) {
		return
	}
	b := r.buf[:0]
	r.buf = nil
	r.pool.p.Put(&b)
}
