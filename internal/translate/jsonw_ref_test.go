package translate

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refTs is the straightforward form of jw.ts.
func refTs(ns uint64) string {
	us := (ns % 1e9) / 1e3
	u := strconv.FormatUint(us, 10)
	return strconv.FormatUint(ns/1e9, 10) + "." + strings.Repeat("0", 6-len(u)) + u
}

func TestTsHexMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ns := range []uint64{0, 1, 999, 1e9 - 1, 1e9, 999_999_999_999_999_999, 1e18, 1_742_921_669_158_209_000, 9_999_999_999_999_999_999, 1<<64 - 1} {
		var w jw
		w.ts(ns)
		require.Equal(t, refTs(ns), string(w.b), ns)
	}
	for range 20000 {
		ns := rng.Uint64() >> uint(rng.IntN(64))
		var w jw
		w.ts(ns)
		require.Equal(t, refTs(ns), string(w.b), ns)

		id := make([]byte, rng.IntN(17))
		for i := range id {
			id[i] = byte(rng.Uint32())
		}
		require.Equal(t, "p"+hex.EncodeToString(id), string(appendHex([]byte("p"), id)))
	}
}

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
