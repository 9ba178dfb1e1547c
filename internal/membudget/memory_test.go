package membudget

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMemory: holders' bytes add up to the total; TryTake takes only what
// fits; Over is measured against the share.
func TestMemory(t *testing.T) {
	tests := []struct {
		name      string
		max       int64
		projects  int
		takes     []int64 // by holder a, then b, alternating
		wantTaken []bool
		wantHeld  int64
		wantOverA int64
		wantShare int64
	}{
		{"within the budget", 1000, 10, []int64{100, 200}, []bool{true, true}, 300, 0, 100},
		{"exactly full", 1000, 10, []int64{600, 400}, []bool{true, true}, 1000, 500, 100},
		{"one byte over", 1000, 10, []int64{600, 401}, []bool{true, false}, 600, 500, 100},
		{"one project: the whole budget is its share", 1000, 1, []int64{900}, []bool{true}, 900, -100, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory(tt.max, tt.projects)
			a, b := m.NewHolder(), m.NewHolder()
			for i, n := range tt.takes {
				h := a
				if i%2 == 1 {
					h = b
				}
				assert.Equal(t, tt.wantTaken[i], h.TryTake(n), "take %d", i)
			}
			assert.Equal(t, tt.wantHeld, m.Held())
			assert.Equal(t, tt.wantHeld, a.Held()+b.Held())
			assert.Equal(t, tt.wantOverA, a.Over())
			assert.Equal(t, tt.wantShare, m.Share())
			assert.Equal(t, tt.max, m.Max())
		})
	}
}

// TestMemoryTakeAndAdd: a holder's TryTake counts what fits and refuses
// what does not, Add moves it either way, and the total follows both.
func TestMemoryTakeAndAdd(t *testing.T) {
	m := NewMemory(1<<20, 4)
	a, b := m.NewHolder(), m.NewHolder()
	assert.True(t, a.TryTake(500))
	b.Add(300)
	a.Add(-300)
	b.Add(-100)
	assert.False(t, a.TryTake(1<<20), "past the budget")
	assert.EqualValues(t, 200, a.Held())
	assert.EqualValues(t, 200, b.Held())
	assert.EqualValues(t, 400, m.Held())
	a.Add(2 << 20) // unconditional: past the budget
	assert.Greater(t, m.Held(), m.Max())
	assert.False(t, b.TryTake(1), "nothing fits once the budget is past")
}

// TestMemoryTryTakeIsExact: concurrent takes never pass the budget.
func TestMemoryTryTakeIsExact(t *testing.T) {
	m := NewMemory(10_000, 1)
	var wg sync.WaitGroup
	for range 8 {
		h := m.NewHolder()
		wg.Go(func() {
			for range 1000 {
				h.TryTake(7)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, m.Held(), int64(10_000))
	assert.Greater(t, m.Held(), int64(10_000-7))
}
