package translate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStrEscaping(t *testing.T) {
	cases := map[string]string{
		"plain ascii text, long enough":  "plain ascii text, long enough",
		"quote\" back\\ nl\n tab\t cr\r": "quote\" back\\ nl\n tab\t cr\r",
		"nul\x00in the middle of text":   "nul\uFFFDin the middle of text",
		"ctl\x01\x1f and more bytes...":  "ctl\x01\x1f and more bytes...",
		"bad utf8 \xff\xfe here........": "bad utf8 \uFFFD\uFFFD here........",
		"héllo wörld ✓ 👍 emoji.........": "héllo wörld ✓ 👍 emoji.........",
		"12345678\"2345678\\2345678":     "12345678\"2345678\\2345678",
	}
	for in, want := range cases {
		var w jw
		w.str(in, 0)
		require.True(t, utf8.Valid(w.b), in)
		var got string
		require.NoError(t, json.Unmarshal(w.b, &got), "%q -> %s", in, w.b)
		assert.Equal(t, want, got)
	}
}

func TestStrTruncation(t *testing.T) {
	var w jw
	w.str(strings.Repeat("é", 100), 11) // cut inside a rune
	var got string
	require.NoError(t, json.Unmarshal(w.b, &got))
	assert.Equal(t, strings.Repeat("é", 5)+truncMarker, got)
}

func TestFloatAndTimestamp(t *testing.T) {
	var w jw
	w.float(1)
	assert.Equal(t, "1.0", string(w.b), "jsonstr.AppendFloat's table holds the cases")
	w = jw{}
	w.ts(1_742_921_669_158_209_999)
	assert.Equal(t, "1742921669.158209", string(w.b))
	w = jw{}
	w.ts(5)
	assert.Equal(t, "0.000000", string(w.b))
}
