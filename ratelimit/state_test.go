package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStateZeroValue(t *testing.T) {
	var s State
	assert.True(t, s.Load().Empty())
	assert.False(t, s.Active(CategoryError, now))
	s.Merge(Limits{})
	assert.Nil(t, s.p.Load(), "merging nothing stores nothing")
}

func TestStateMerge(t *testing.T) {
	var s State
	first, _ := Parse("120:error, 10:span", now)
	s.Merge(first)
	assert.True(t, s.Active(CategoryError, now))
	assert.False(t, s.Active(CategoryTransaction, now))

	before := s.p.Load()
	shorter, _ := Parse("60:error, 5:span", now)
	s.Merge(shorter)
	assert.Same(t, before, s.p.Load(), "nothing later: no write")

	later, _ := Parse("30:span, 60::", now)
	s.Merge(later)
	assert.Equal(t, secs{CategoryAll: 60, CategoryError: 120, CategorySpan: 30}, toSecs(t, s.Load()))
	assert.Equal(t, secs{CategoryError: 120, CategorySpan: 10}, toSecs(t, first), "merged value unchanged")
}

// TestStateConcurrent runs writers and readers together; run it with -race.
// Whatever the interleaving, the result is the merge of everything written.
func TestStateConcurrent(t *testing.T) {
	const writers, readers, rounds = 8, 8, 200
	var s State
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				l, _ := Parse(fmt.Sprintf("%d:error, %d:span, %d::", w*rounds+r, r, w), now)
				s.Merge(l)
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for range rounds {
				s.Active(CategoryError, now)
				l := s.Load()
				if l.Active(CategorySpan, now) {
					require.True(t, l.Deadline(CategorySpan).After(now))
				}
			}
		})
	}
	wg.Wait()
	want := secs{CategoryAll: writers - 1, CategoryError: writers*rounds - 1, CategorySpan: rounds - 1}
	assert.Equal(t, want, toSecs(t, s.Load()))
}

// TestActiveAllocs: the drop path allocates nothing.
func TestActiveAllocs(t *testing.T) {
	var s State
	l, _ := Parse("60:error;transaction;span;log_item;log_byte;trace_metric, 30::", now)
	s.Merge(l)
	probe := now.Add(45 * time.Second)
	allocs := testing.AllocsPerRun(100, func() {
		s.Active(CategoryLogByte, probe)
		s.Active(CategoryInternal, probe)
		l.LogsActive(probe)
		l.ItemActive("span", probe)
		s.Load().Deadline(CategoryError)
	})
	assert.Zero(t, allocs)
}
