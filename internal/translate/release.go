package translate

import "sync/atomic"

// releaser hands one output buffer back to the Translator, at most once.
type releaser struct {
	t    *Translator
	buf  []byte
	done atomic.Bool
}

func (rl *releaser) release() {
	if rl == nil || rl.done.Swap(true) {
		return
	}
	b := rl.buf[:0]
	rl.buf = nil
	rl.t.bufs.Put(&b)
}

// releaser returns nil for an empty buffer: nothing to give back.
func (t *Translator) releaser(out []byte) *releaser {
	if cap(out) == 0 {
		return nil
	}
	return &releaser{t: t, buf: out}
}

// buffer returns an empty output buffer of at least capacity n, reusing one
// given back by Release when it is large enough.
func (t *Translator) buffer(n int) []byte {
	if p, ok := t.bufs.Get().(*[]byte); ok {
		if cap(*p) >= n {
			return (*p)[:0]
		}
	}
	return make([]byte, 0, n)
}
