package assemble

import (
	"slices"
	"sync"
	"time"
)

// Config bounds an Assembler.
type Config struct {
	// Wait is how long a span waits for its local root, from its arrival.
	Wait time.Duration
	// MaxBytes bounds the bytes held (as the caller sizes its payloads),
	// over all owners. A span that does not fit pushes out, as fragments, the
	// oldest held spans of the owner holding most. Owners have equal shares,
	// so that is the one furthest past its share: one owner's spans never
	// push out those of an owner within its share (MaxBytes / owners).
	MaxBytes int64
	// Remember is how many sent span ids (per generation) are remembered to
	// recognize a late child. 0 remembers none: a late child waits until
	// its wait is over.
	Remember int
}

// Ref is what the assembler reads of one span of a batch.
type Ref struct {
	// Owner is whom the span is held for (the caller's project). Spans of
	// different owners are never assembled together, whatever their ids:
	// one owner's root never releases, and its sent ids never pass, another's.
	Owner      uint32
	Trace      [16]byte
	ID, Parent [8]byte
	// Root: the span is a local root (see LocalRoot).
	Root bool
}

// Verdict is what becomes of one span of a batch.
type Verdict uint8

const (
	// Pass: send it now with its batch (its local root is there, or it is one).
	Pass Verdict = iota
	// Held: the assembler keeps it (the caller's payload) until it is released.
	Held
	// Late: send it now with its batch; it is a fragment, its parent was already sent.
	Late
)

// Released is a group of held spans that comes out together, with the reason.
// The spans of a group belong to one trace.
type Released[T any] struct {
	Reason Reason
	Items  []T
}

// Assembler holds spans until their local root arrives. It is safe for
// concurrent use.
type Assembler[T any] struct {
	cfg Config

	mu     sync.Mutex
	traces map[traceKey]*trace[T]
	owners map[uint32]*owner[T]
	order  []*owner[T] // the owners, in the order they first held a span
	bytes  int64
	sent   recent
	closed bool // flushed: nothing is held any more

	// scratch of one Admit
	byID  map[spanKey]int32
	known []bool
	path  []int32
}

// traceKey is a trace of one owner.
type traceKey struct {
	owner uint32
	id    [16]byte
}

// owner is what one owner holds: its spans by arrival (released ones stay
// until they reach the front) and their bytes.
type owner[T any] struct {
	fifo  []*node[T]
	head  int // fifo[head:] is live
	bytes int64
}

type trace[T any] struct {
	key      traceKey
	own      *owner[T]
	byID     map[[8]byte]*node[T]
	children map[[8]byte][]*node[T] // parent id → held spans
	n        int                    // held spans
}

type node[T any] struct {
	tr         *trace[T]
	id, parent [8]byte
	at         time.Time
	size       int64
	payload    T
	gone       bool
}

// New returns an empty Assembler.
func New[T any](cfg Config) *Assembler[T] {
	return &Assembler[T]{cfg: cfg, traces: map[traceKey]*trace[T]{}, owners: map[uint32]*owner[T]{}, sent: newRecent(cfg.Remember), byID: map[spanKey]int32{}}
}

// Held reports whether the span (trace, id) of owner o is held.
func (a *Assembler[T]) Held(o uint32, traceID [16]byte, id [8]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.traces[traceKey{o, traceID}]
	if t == nil {
		return false
	}
	_, ok := t.byID[id]
	return ok
}

// Admit decides what becomes of each span of a batch and writes it to
// verdict[i] (len(verdict) == len(refs)). For each span it holds it calls
// hold(i) for the payload to keep and its size in bytes. It returns the held
// spans that come out now: with a local root or a late child of this batch
// (WithRoot, AfterRoot: send them with the batch, so they join its
// transactions), or pushed out by the byte bound (MemoryBound).
//
// When every verdict is Pass and nothing is returned, the batch is complete:
// the caller sends it as it is.
func (a *Assembler[T]) Admit(now time.Time, refs []Ref, verdict []Verdict, hold func(i int) (T, int64)) []Released[T] {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		for i := range verdict {
			verdict[i] = Pass
		}
		return nil
	}
	a.resolve(refs, verdict)

	var out []Released[T]
	for i := range refs {
		r := &refs[i]
		switch verdict[i] {
		case Pass:
			if r.Root {
				a.sent.add(spanKey{r.Owner, r.Trace, r.ID})
			}
			if len(a.traces) > 0 {
				out = a.releaseChildren(out, traceKey{r.Owner, r.Trace}, r.ID, WithRoot)
			}
		case Late:
			a.sent.add(spanKey{r.Owner, r.Trace, r.ID})
			if len(a.traces) > 0 {
				out = a.releaseChildren(out, traceKey{r.Owner, r.Trace}, r.ID, AfterRoot)
			}
		}
	}
	for i := range refs {
		if verdict[i] != Held {
			continue
		}
		p, size := hold(i)
		out = a.hold(out, &refs[i], p, size, now)
	}
	return out
}

// resolve sets each span's verdict: walk up its parents through the batch
// until a local root (Pass), a parent that was sent (Late) or one not here
// (Held: held or not arrived yet). A cycle without a root is Held.
func (a *Assembler[T]) resolve(refs []Ref, verdict []Verdict) {
	clear(a.byID)
	for i := range refs {
		k := spanKey{refs[i].Owner, refs[i].Trace, refs[i].ID}
		if _, dup := a.byID[k]; !dup {
			a.byID[k] = int32(i)
		}
	}
	a.known = grow(a.known, len(refs))
	clear(a.known)
	for i := range refs {
		if a.known[i] {
			continue
		}
		path := a.path[:0]
		j := int32(i)
		var v Verdict
		for steps := 0; ; steps++ {
			if a.known[j] {
				v = verdict[j]
				break
			}
			r := &refs[j]
			if r.Root {
				v = Pass
				break
			}
			path = append(path, j)
			k := spanKey{r.Owner, r.Trace, r.Parent}
			if p, ok := a.byID[k]; ok && p != j && steps < len(refs) {
				j = p
				continue
			}
			switch {
			case r.Parent == r.ID || steps >= len(refs):
				v = Held // a cycle or self-parent: no root will come
			case !a.heldLocked(k) && a.sent.has(k):
				v = Late
			default:
				v = Held
			}
			break
		}
		for _, x := range path {
			verdict[x], a.known[x] = v, true
		}
		if refs[i].Root {
			verdict[i], a.known[i] = Pass, true
		}
		a.path = path
	}
}

func (a *Assembler[T]) heldLocked(k spanKey) bool {
	t := a.traces[traceKey{k.owner, k.trace}]
	if t == nil {
		return false
	}
	_, ok := t.byID[k.id]
	return ok
}

// hold keeps one span, then makes room under MaxBytes: the owner holding
// most gives way, oldest first.
func (a *Assembler[T]) hold(out []Released[T], r *Ref, p T, size int64, now time.Time) []Released[T] {
	key := traceKey{r.Owner, r.Trace}
	t := a.traces[key]
	if t == nil {
		t = &trace[T]{key: key, own: a.owner(r.Owner), byID: map[[8]byte]*node[T]{}, children: map[[8]byte][]*node[T]{}}
		a.traces[key] = t
	}
	n := &node[T]{tr: t, id: r.ID, parent: r.Parent, at: now, size: size, payload: p}
	if _, dup := t.byID[r.ID]; !dup {
		t.byID[r.ID] = n
	}
	t.children[r.Parent] = append(t.children[r.Parent], n)
	t.n++
	o := t.own
	o.fifo = append(o.fifo, n)
	o.bytes += size
	a.bytes += size
	for a.bytes > a.cfg.MaxBytes {
		oldest := a.holdingMost().front()
		if oldest == nil {
			break
		}
		out = append(out, Released[T]{Reason: MemoryBound, Items: a.take(oldest)})
	}
	return out
}

// owner is the state of owner id, made when it first holds a span.
func (a *Assembler[T]) owner(id uint32) *owner[T] {
	o := a.owners[id]
	if o == nil {
		o = &owner[T]{}
		a.owners[id] = o
		a.order = append(a.order, o)
	}
	return o
}

// Forget drops owner id's state (a retired owner's) when it holds
// nothing; false when it holds spans (nothing dropped). Its sent ids are
// remembered on, as any others, until they age out.
func (a *Assembler[T]) Forget(id uint32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.owners[id]
	if o == nil {
		return true
	}
	if o.front() != nil {
		return false
	}
	delete(a.owners, id)
	a.order = slices.DeleteFunc(a.order, func(x *owner[T]) bool { return x == o })
	return true
}

// holdingMost is the owner holding the most bytes, the first in order on a
// tie.
func (a *Assembler[T]) holdingMost() *owner[T] {
	v := a.order[0]
	for _, o := range a.order[1:] {
		if o.bytes > v.bytes {
			v = o
		}
	}
	return v
}

// front returns o's oldest span still held; nil when none is.
func (o *owner[T]) front() *node[T] {
	for o.head < len(o.fifo) {
		n := o.fifo[o.head]
		if !n.gone {
			return n
		}
		o.fifo[o.head] = nil
		o.head++
	}
	o.fifo, o.head = o.fifo[:0], 0
	return nil
}

// Expire releases, as fragments (Expired), the held spans that waited Wait
// by now, each with its held ancestors and descendants: owner by owner,
// oldest first.
func (a *Assembler[T]) Expire(now time.Time) []Released[T] {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Released[T]
	for _, o := range a.order {
		for {
			n := o.front()
			if n == nil || now.Sub(n.at) < a.cfg.Wait {
				break
			}
			out = append(out, Released[T]{Reason: Expired, Items: a.take(n)})
		}
		o.compact()
	}
	return out
}

// Flush releases everything held (Shutdown), one group per trace, and closes
// the assembler: from then on Admit passes every span.
func (a *Assembler[T]) Flush() []Released[T] {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	var out []Released[T]
	for _, o := range a.order {
		for n := o.front(); n != nil; n = o.front() {
			out = append(out, Released[T]{Reason: Shutdown, Items: a.take(n)})
		}
	}
	return out
}

// compact drops the released spans at the front of o's fifo once they are
// the larger part of it.
func (o *owner[T]) compact() {
	if o.head > 1024 && o.head > len(o.fifo)/2 {
		n := copy(o.fifo, o.fifo[o.head:])
		clear(o.fifo[n:])
		o.fifo, o.head = o.fifo[:n], 0
	}
}

// releaseChildren takes the held descendants of span (traceID, id), which
// was just sent, and appends them as one group.
func (a *Assembler[T]) releaseChildren(out []Released[T], key traceKey, id [8]byte, why Reason) []Released[T] {
	t := a.traces[key]
	if t == nil {
		return out
	}
	kids := t.children[id]
	if len(kids) == 0 {
		return out
	}
	var items []T
	for _, k := range kids {
		if !k.gone {
			items = a.subtree(items, k)
		}
	}
	delete(t.children, id)
	a.dropTrace(t)
	t.own.compact()
	return append(out, Released[T]{Reason: why, Items: items})
}

// take removes n's group (its topmost held ancestor with everything held
// below it) and returns their payloads.
func (a *Assembler[T]) take(n *node[T]) []T {
	t := n.tr
	top := n
	for steps := 0; steps <= t.n; steps++ {
		p, ok := t.byID[top.parent]
		if !ok || p.gone || p == top {
			break
		}
		top = p
	}
	items := a.subtree(nil, top)
	// top is listed under its (absent) parent: drop it there
	sib := t.children[top.parent]
	kept := sib[:0]
	for _, s := range sib {
		if !s.gone {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		delete(t.children, top.parent)
	} else {
		clear(sib[len(kept):])
		t.children[top.parent] = kept
	}
	a.dropTrace(t)
	return items
}

// subtree removes root and everything held below it, appending payloads.
func (a *Assembler[T]) subtree(items []T, root *node[T]) []T {
	stack := []*node[T]{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.gone {
			continue
		}
		n.gone = true
		t := n.tr
		t.n--
		if t.byID[n.id] == n {
			delete(t.byID, n.id)
		}
		a.bytes -= n.size
		t.own.bytes -= n.size
		a.sent.add(spanKey{t.key.owner, t.key.id, n.id})
		items = append(items, n.payload)
		var zero T
		n.payload = zero
		if kids, ok := t.children[n.id]; ok {
			stack = append(stack, kids...)
			// a span id seen twice keeps the list for the other holder
			if _, other := t.byID[n.id]; !other {
				delete(t.children, n.id)
			}
		}
	}
	return items
}

func (a *Assembler[T]) dropTrace(t *trace[T]) {
	if t.n == 0 {
		delete(a.traces, t.key)
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
