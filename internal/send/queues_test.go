package send

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func ids(js ...*job) []int {
	out := make([]int, len(js))
	for i, j := range js {
		out[i] = int(j.held) // the tests below number their jobs in held
	}
	return out
}

func numbered(n int) *job { return &job{held: int64(n)} }

// drain pops q empty, oldest first.
func drain(q *fifo) []int {
	var out []int
	for j := q.pop(); j != nil; j = q.pop() {
		out = append(out, int(j.held))
	}
	return out
}

// TestFifo: oldest first; pushFront puts a job before every other, whether
// or not some were popped already; popNewest takes the last; an emptied queue
// reuses its array.
func TestFifo(t *testing.T) {
	t.Run("oldest first", func(t *testing.T) {
		var q fifo
		assert.Nil(t, q.pop())
		assert.Nil(t, q.popNewest())
		for i := 1; i <= 3; i++ {
			q.push(numbered(i))
		}
		assert.Equal(t, 3, q.len())
		assert.Equal(t, []int{1, 2, 3}, drain(&q))
		assert.Zero(t, q.len())
	})
	t.Run("pushFront on a fresh queue", func(t *testing.T) {
		var q fifo
		q.push(numbered(1))
		q.push(numbered(2))
		q.pushFront(numbered(20))
		q.pushFront(numbered(10))
		assert.Equal(t, []int{10, 20, 1, 2}, drain(&q))
	})
	t.Run("pushFront after pops", func(t *testing.T) {
		var q fifo
		for i := 1; i <= 4; i++ {
			q.push(numbered(i))
		}
		assert.Equal(t, 1, int(q.pop().held))
		assert.Equal(t, 2, int(q.pop().held))
		q.pushFront(numbered(20)) // the two halves of a split: the second first
		q.pushFront(numbered(10))
		assert.Equal(t, 4, q.len())
		assert.Equal(t, []int{10, 20, 3, 4}, drain(&q))
	})
	t.Run("popNewest", func(t *testing.T) {
		var q fifo
		for i := 1; i <= 4; i++ {
			q.push(numbered(i))
		}
		assert.Equal(t, 1, int(q.pop().held))
		assert.Equal(t, 4, int(q.popNewest().held))
		assert.Equal(t, 3, int(q.popNewest().held))
		assert.Equal(t, 2, int(q.popNewest().held))
		assert.Nil(t, q.popNewest())
		assert.Zero(t, q.len())
		q.push(numbered(5))
		assert.Equal(t, []int{5}, drain(&q))
	})
	t.Run("an emptied queue reuses its array", func(t *testing.T) {
		var q fifo
		for round := range 100 {
			for i := range 8 {
				q.push(numbered(round*8 + i))
			}
			for range 8 {
				q.pop()
			}
		}
		assert.LessOrEqual(t, cap(q.jobs), 8, "not grown by each round")
	})
}

// TestDelayed: jobs come out by their not-before time; removeOldest takes the
// job first tried the longest ago, whatever its not-before time; remove
// takes those that match and leaves a heap of the others.
func TestDelayed(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(n int, notBefore, first time.Duration) *job {
		return &job{held: int64(n), notBefore: t0.Add(notBefore), first: t0.Add(first)}
	}
	fill := func() *delayed {
		var d delayed
		d.add(at(1, 3*time.Second, -10*time.Second))
		d.add(at(2, 1*time.Second, -5*time.Second))
		d.add(at(3, 2*time.Second, -30*time.Second)) // first tried the longest ago
		d.add(at(4, 5*time.Second, -1*time.Second))
		return &d
	}
	t.Run("by not-before", func(t *testing.T) {
		d := fill()
		next, ok := d.next()
		assert.True(t, ok)
		assert.Equal(t, t0.Add(time.Second), next)
		assert.Nil(t, d.popDue(t0), "none due yet")
		var got []int
		for j := d.popDue(t0.Add(3 * time.Second)); j != nil; j = d.popDue(t0.Add(3 * time.Second)) {
			got = append(got, int(j.held))
		}
		assert.Equal(t, []int{2, 3, 1}, got, "due at 3 s, earliest first")
		assert.Equal(t, 1, d.Len())
	})
	t.Run("removeOldest", func(t *testing.T) {
		d := fill()
		var got []int
		for j := d.removeOldest(); j != nil; j = d.removeOldest() {
			got = append(got, int(j.held))
			if next, ok := d.next(); ok {
				for _, w := range *d {
					assert.False(t, w.notBefore.Before(next), "still a heap: the earliest first")
				}
			}
		}
		assert.Equal(t, []int{3, 1, 2, 4}, got)
		_, ok := d.next()
		assert.False(t, ok)
	})
	t.Run("remove", func(t *testing.T) {
		d := fill()
		assert.ElementsMatch(t, []int{1, 3}, ids(d.remove(func(j *job) bool { return j.held%2 == 1 }, nil)...))
		next, ok := d.next()
		assert.True(t, ok)
		assert.Equal(t, t0.Add(time.Second), next, "still a heap: job 2 first")
		assert.ElementsMatch(t, []int{2, 4}, ids(d.remove(anyJob, nil)...))
		assert.Zero(t, d.Len())
		assert.Nil(t, d.removeOldest())
		assert.Nil(t, d.popDue(t0.Add(time.Hour)))
	})
}
