package envelope

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendContainer(t *testing.T) {
	assert.Equal(t, `{"items":[]}`, string(AppendContainer(nil, nil)))
	assert.Equal(t, `{"items":[{"a":1}]}`, string(AppendContainer(nil, [][]byte{[]byte(`{"a":1}`)})))
	two := [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)}
	c := Container(two)
	assert.Equal(t, `{"items":[{"a":1},{"b":2}]}`, string(c))
	assert.Equal(t, len(c), cap(c), "one allocation of exactly the size")
	assert.Equal(t, `{"items":[]}`, string(Container(nil)))
	items := [][]byte{[]byte(`{"a":1}`), []byte(`{}`), []byte(`{"b":"c"}`)}
	got := AppendContainer([]byte("x"), items)
	assert.Equal(t, `x{"items":[{"a":1},{},{"b":"c"}]}`, string(got))
	assert.Equal(t, len(got)-1, ContainerLen(items))
	assert.Equal(t, 12, ContainerLen(nil))
}

func TestChunk(t *testing.T) {
	item := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	tests := []struct {
		name          string
		sizes         []int
		count, bytes  int
		want          [][]int // indexes per chunk
		wantOversized []int
	}{
		{"empty", nil, 10, 100, nil, nil},
		{"one chunk", []int{1, 1, 1}, 10, 100, [][]int{{0, 1, 2}}, nil},
		{"by count", []int{1, 1, 1, 1, 1}, 2, 100, [][]int{{0, 1}, {2, 3}, {4}}, nil},
		// 12 overhead + 10 + 1 comma + 10 = 33.
		{"exactly at byte limit", []int{10, 10, 10}, 10, 33, [][]int{{0, 1}, {2}}, nil},
		{"one byte under", []int{10, 10, 10}, 10, 32, [][]int{{0}, {1}, {2}}, nil},
		{"single item exactly at limit", []int{21}, 10, 33, [][]int{{0}}, nil},
		{"oversized item ends the chunk", []int{5, 22, 5, 5}, 10, 33, [][]int{{0}, {2, 3}}, []int{1}},
		{"all oversized", []int{50, 60}, 10, 33, nil, []int{0, 1}},
		{"no limits", []int{100, 100, 100}, 0, 0, [][]int{{0, 1, 2}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var items [][]byte
			for i, n := range tt.sizes {
				it := item(n)
				it[0] = byte('a' + i)
				items = append(items, it)
			}
			chunks, oversized := Chunk(items, tt.count, tt.bytes)
			var got [][]int
			for _, c := range chunks {
				var idx []int
				for _, it := range c {
					idx = append(idx, int(it[0]-'a'))
				}
				got = append(got, idx)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantOversized, oversized)
		})
	}
}

// TestChunkProperties checks on random input that chunks keep the order, respect both
// bounds, and together with the oversized indexes cover every item exactly once.
func TestChunkProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		n := r.IntN(60)
		items := make([][]byte, n)
		for i := range items {
			items[i] = fmt.Appendf(nil, `{"i":%d,"p":"%s"}`, i, bytes.Repeat([]byte("x"), r.IntN(80)))
		}
		maxCount, maxBytes := 1+r.IntN(10), 20+r.IntN(300)
		chunks, oversized := Chunk(items, maxCount, maxBytes)
		var seen []int
		next := 0
		for _, c := range chunks {
			require.NotEmpty(t, c, "round %d", round)
			assert.LessOrEqual(t, len(c), maxCount, "round %d", round)
			assert.LessOrEqual(t, len(AppendContainer(nil, c)), maxBytes, "round %d", round)
			for _, it := range c {
				var i int
				_, err := fmt.Sscanf(string(it), `{"i":%d`, &i)
				require.NoError(t, err)
				seen = append(seen, i)
			}
		}
		for _, i := range oversized {
			assert.Greater(t, ContainerLen(items[i:i+1]), maxBytes, "round %d", round)
			seen = append(seen, i)
		}
		// Everything exactly once, and chunked items in their original order.
		assert.Len(t, seen, n, "round %d", round)
		for _, c := range chunks {
			for _, it := range c {
				var i int
				_, _ = fmt.Sscanf(string(it), `{"i":%d`, &i)
				assert.GreaterOrEqual(t, i, next, "round %d: order", round)
				next = i + 1
			}
		}
		// Appending to a chunk must not overwrite the next item.
		if len(chunks) > 1 {
			before := string(chunks[1][0])
			_ = append(chunks[0], []byte("clobber"))
			assert.Equal(t, before, string(chunks[1][0]))
		}
	}
}

func TestSpanContainer(t *testing.T) {
	assert.Equal(t, `{"version":2,"items":[]}`, string(AppendSpanContainer(nil, nil)))
	two := [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)}
	assert.Equal(t, `{"version":2,"items":[{"a":1},{"b":2}]}`, string(SpanContainer(two)))
	assert.Equal(t, len(SpanContainer(two)), SpanContainerLen(two))
	assert.Equal(t, cap(SpanContainer(two)), SpanContainerLen(two), "one allocation of exactly its size")
}
