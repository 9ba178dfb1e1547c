package settle

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func isSettled(g *Group) bool {
	select {
	case <-g.Settled():
		return true
	default:
		return false
	}
}

func TestGroupSettlesWithItsLastEnvelopeAfterClose(t *testing.T) {
	for _, tt := range []struct {
		name  string
		steps func(g *Group)
		want  bool
	}{
		{"nothing handed on, closed", func(g *Group) { g.Close() }, true},
		{"nothing handed on, open", func(*Group) {}, false},
		{"one pending, closed", func(g *Group) { g.Add(1); g.Close() }, false},
		{"one settled before close", func(g *Group) { g.Add(1); g.Done() }, false},
		{"one settled, then closed", func(g *Group) { g.Add(1); g.Done(); g.Close() }, true},
		{"two, one settled, closed", func(g *Group) { g.Add(2); g.Done(); g.Close() }, false},
		{"two, both settled after close", func(g *Group) { g.Add(2); g.Close(); g.Done(); g.Done() }, true},
		{"a split: one becomes two", func(g *Group) { g.Add(1); g.Close(); g.Add(1); g.Done(); g.Done() }, true},
		{"a split, one half pending", func(g *Group) { g.Add(1); g.Close(); g.Add(1); g.Done() }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGroup()
			tt.steps(g)
			assert.Equal(t, tt.want, isSettled(g))
		})
	}
}

func TestNilGroupFollowsNothing(t *testing.T) {
	var g *Group
	g.Add(3)
	g.Done()
	assert.Nil(t, From(t.Context()))
}

func TestContextCarriesTheGroup(t *testing.T) {
	g := NewGroup()
	assert.Same(t, g, From(With(t.Context(), g)))
	g.Add(2)
	assert.Equal(t, 2, g.Pending())
}
