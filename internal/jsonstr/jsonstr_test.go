package jsonstr

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppend(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"plain ascii text, long enough", `"plain ascii text, long enough"`},
		{"q\"b\\", `"q\"b\\"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\x00\x07\x1f\x7f", `"` + "\uFFFD" + `\u0007\u001f` + "\x7f" + `"`},
		{"\b\f", `"\u0008\u000c"`},
		{"bad utf8 \xff\xfe here", `"bad utf8 ` + "\uFFFD\uFFFD" + ` here"`},
		{"\xe2\x9c", `"` + "\uFFFD\uFFFD" + `"`},
		{"héllo ✓ 👍 \u2028", `"héllo ✓ 👍 ` + "\u2028" + `"`},
		{"12345678\"2345678\\2345678", `"12345678\"2345678\\2345678"`},
	}
	for _, tt := range tests {
		got := Append([]byte("x"), tt.in)
		assert.Equal(t, "x"+tt.want, string(got), "%q", tt.in)
		require.True(t, utf8.Valid(got[1:]), "%q", tt.in)
		var back string
		require.NoError(t, json.Unmarshal(got[1:], &back), "%q -> %s", tt.in, got)
	}
}

// TestPlain8 compares the word-at-a-time test with the byte-by-byte rule.
func TestPlain8(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
			assert.Equal(t, want, plain8(load8(string(b), 0)), "byte %#x at %d", c, pos)
		}
	}
}

// refEscaped is the byte-at-a-time form of AppendEscaped.
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

func TestAppendEscapedMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "Z", " ", "\"", "\\", "\n", "\t", "\r", "\x00", "\x01", "\x1f", "\x7f", "é", "✓", "👍", "\xff", "\xe2\x9c", "0123456789"}
	for range 20000 {
		var sb strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(3) == 0 {
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			} else {
				sb.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		s := sb.String()
		require.Equal(t, refEscaped(s), string(AppendEscaped([]byte("x"), s))[1:], "%q", s)
	}
}

// FuzzAppend: whatever the input, the output is valid UTF-8 JSON that reads
// back as the input with invalid UTF-8 and NUL repaired.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"\\\n\x00", "\xff\xfe", "héllo 👍", "12345678\x0112345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Append(nil, s)
		if !utf8.Valid(got) {
			t.Fatalf("invalid UTF-8 for %q: %q", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("invalid JSON for %q: %s: %v", s, got, err)
		}
		want := strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
		// ToValidUTF8 folds a run of invalid bytes into one U+FFFD; we write one per byte.
		if strings.ReplaceAll(back, "\uFFFD", "") != strings.ReplaceAll(want, "\uFFFD", "") {
			t.Fatalf("%q read back as %q", s, back)
		}
	})
}
