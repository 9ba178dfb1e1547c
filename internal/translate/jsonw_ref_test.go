package translate

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// refTs is the straightforward form of jw.ts.
func refTs(ns uint64) string {
	us := (ns % 1e9) / 1e3
	u := strconv.FormatUint(us, 10)
	return strconv.FormatUint(ns/1e9, 10) + "." + strings.Repeat("0", 6-len(u)) + u
}

// refEscaped is the byte-at-a-time form of appendEscaped.
func refEscaped(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c == 0:
				b = append(b, "\uFFFD"...)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

func TestTsHexEscapeMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ns := range []uint64{0, 1, 999, 1e9 - 1, 1e9, 999_999_999_999_999_999, 1e18, 1_742_921_669_158_209_000, 9_999_999_999_999_999_999, 1<<64 - 1} {
		var w jw
		w.ts(ns)
		require.Equal(t, refTs(ns), string(w.b), ns)
	}
	alphabet := []string{"a", "Z", " ", "\"", "\\", "\n", "\t", "\r", "\x00", "\x01", "\x1f", "\x7f", "é", "✓", "👍", "\xff", "\xe2\x9c", "0123456789"}
	for range 20000 {
		ns := rng.Uint64() >> uint(rng.IntN(64))
		var w jw
		w.ts(ns)
		require.Equal(t, refTs(ns), string(w.b), ns)

		var sb strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(3) == 0 {
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			} else {
				sb.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		s := sb.String()
		require.Equal(t, refEscaped(s), string(appendEscaped([]byte("x"), s))[1:], "%q", s)

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
