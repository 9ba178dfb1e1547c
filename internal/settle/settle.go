// Package settle follows one push's items to their fate: a [Group] counts
// the envelopes a push handed on that are not yet settled (stored by Sentry,
// or dropped and counted), so that the push can wait until the last of them
// is, and a persistent queue lets go of the batch only then.
//
// It only counts. It must not send, drop or account for anything, nor hold
// data: whoever settles an envelope says so with [Group.Done].
package settle

import (
	"context"
	"sync"
)

// Group is the envelopes of one push not yet settled. The push itself holds
// one share until [Group.Close], so that the group cannot settle while the
// push is still handing envelopes on. A nil *Group is valid and follows
// nothing: its Add and Done do nothing.
type Group struct {
	mu      sync.Mutex
	pending int
	closed  bool
	done    bool          // settled was closed
	settled chan struct{} // closed once closed and nothing is pending
}

// NewGroup is the group of a push that is about to hand envelopes on.
func NewGroup() *Group { return &Group{settled: make(chan struct{})} }

// Add counts n more envelopes to settle.
func (g *Group) Add(n int) {
	if g == nil || n == 0 {
		return
	}
	g.mu.Lock()
	g.pending += n
	g.mu.Unlock()
}

// Done settles one envelope.
func (g *Group) Done() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending--
	g.settleLocked()
}

// Close says the push handed on everything it will: from then on the group
// settles with its last envelope (at once when none is pending).
func (g *Group) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.settleLocked()
}

func (g *Group) settleLocked() {
	if g.closed && g.pending == 0 && !g.done {
		g.done = true
		close(g.settled)
	}
}

// Settled is closed once the group is closed and every envelope it counted
// is settled.
func (g *Group) Settled() <-chan struct{} { return g.settled }

// Pending is the envelopes counted and not yet settled.
func (g *Group) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pending
}

type key struct{}

// With is ctx carrying g: what is handed on under ctx is counted in g.
func With(ctx context.Context, g *Group) context.Context {
	return context.WithValue(ctx, key{}, g)
}

// From is the group ctx carries; nil when none (nothing waits).
func From(ctx context.Context) *Group {
	g, _ := ctx.Value(key{}).(*Group)
	return g
}
