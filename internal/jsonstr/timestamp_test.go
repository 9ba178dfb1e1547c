package jsonstr

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refTimestamp is the straightforward form of AppendTimestamp.
func refTimestamp(ns uint64) string {
	us := (ns % 1e9) / 1e3
	u := strconv.FormatUint(us, 10)
	return strconv.FormatUint(ns/1e9, 10) + "." + strings.Repeat("0", 6-len(u)) + u
}

func TestTimestampHexMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ns := range []uint64{0, 1, 999, 1e9 - 1, 1e9, 999_999_999_999_999_999, 1e18, 1_742_921_669_158_209_000, 9_999_999_999_999_999_999, 1<<64 - 1} {
		require.Equal(t, "p"+refTimestamp(ns), string(AppendTimestamp([]byte("p"), ns)), ns)
	}
	for range 20000 {
		ns := rng.Uint64() >> uint(rng.IntN(64))
		require.Equal(t, "p"+refTimestamp(ns), string(AppendTimestamp([]byte("p"), ns)), ns)

		id := make([]byte, rng.IntN(17))
		for i := range id {
			id[i] = byte(rng.Uint32())
		}
		require.Equal(t, "p"+hex.EncodeToString(id), string(AppendHex([]byte("p"), id)))
	}
}
