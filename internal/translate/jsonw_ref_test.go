package translate

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSeenSetMatchesMap: seenSet agrees with a map on keys of every length
// around the word boundaries, with repeats, below and past 32 keys.
func TestSeenSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var s seenSet
	for range 3000 {
		s.reset()
		ref := map[string]bool{}
		pool := make([]string, 1+rng.IntN(80))
		for i := range pool {
			b := make([]byte, rng.IntN(45))
			for j := range b {
				b[j] = "ab"[rng.IntN(2)] // few letters: many keys differ in one byte
			}
			pool[i] = string(b)
		}
		for range rng.IntN(120) {
			k := pool[rng.IntN(len(pool))]
			require.Equal(t, !ref[k], s.add(k), "%q", k)
			ref[k] = true
		}
	}
}
