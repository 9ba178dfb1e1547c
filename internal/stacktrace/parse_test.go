package stacktrace

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseUnrecognised(t *testing.T) {
	for _, text := range []string{
		"",
		"connection refused",
		"ValueError: bad", // a header alone has no frames
		"java.lang.IllegalStateException: boom\n", // likewise
		"goroutine 1 [running]:\n",
		"at the end of the day\nsomething happened: yes\n",
		"\xff\xfe\x00garbage\r\n\t\t",
	} {
		for _, lang := range []string{"", "go", "java", "python", "nodejs", "dotnet", "ruby"} {
			excs, ok := Parse(text, lang)
			assert.False(t, ok, "%q %s", text, lang)
			assert.Nil(t, excs)
		}
	}
}

func TestParseWrongHintFallsBack(t *testing.T) {
	excs, ok := Parse(javaChain, "python")
	require.True(t, ok)
	assert.Equal(t, "IllegalStateException", excs[len(excs)-1].Type)

	excs, ok = Parse(goPanic, "webjs")
	require.True(t, ok)
	assert.Equal(t, "panic", excs[0].Type)
}

func TestParseDetectsEachFormat(t *testing.T) {
	tests := map[string]struct {
		text, module string // module of the last frame tells the parser apart
	}{
		"go":     {goPanic, "net/http"},
		"java":   {javaChain, "com.acme.shop.OrderService"},
		"python": {pythonChain, ""},
		"js":     {nodeAsync, ""},
		"dotnet": {dotnetInner, "Shop.Orders.Service"},
	}
	for name, tt := range tests {
		excs, ok := Parse(tt.text, "")
		require.True(t, ok, name)
		frames := excs[len(excs)-1].Frames
		assert.Equal(t, tt.module, frames[len(frames)-1].Module, name)
	}
}

func TestParseInvalidUTF8(t *testing.T) {
	text := "Error: bad \xff byte\n    at f\xc3 (/app/\xe2x.js:1:2)\n"
	excs, ok := Parse(text, "nodejs")
	require.True(t, ok)
	assert.Equal(t, "bad \uFFFD byte", excs[0].Value)
	assert.Equal(t, "f\uFFFD", excs[0].Frames[0].Function)
	assert.Equal(t, "/app/\uFFFDx.js", excs[0].Frames[0].AbsPath)
}

func TestParseCaps(t *testing.T) {
	t.Run("java frames keep the crash site", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("java.lang.StackOverflowError\n")
		for i := 1; i <= 3000; i++ {
			b.WriteString("\tat com.acme.R.f(R.java:" + itoa(i) + ")\n")
		}
		excs, ok := Parse(b.String(), "java")
		require.True(t, ok)
		frames := excs[0].Frames
		require.Len(t, frames, MaxFrames)
		assert.Equal(t, 1, frames[MaxFrames-1].Lineno, "the top of the trace is the crash site")
		assert.Equal(t, MaxFrames, frames[0].Lineno)
	})
	t.Run("java chain keeps the thrown exception", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("com.acme.E: 0\n\tat com.acme.A.f(A.java:1)\n")
		for i := 1; i < 40; i++ {
			b.WriteString("Caused by: com.acme.E: " + itoa(i) + "\n\tat com.acme.A.f(A.java:1)\n")
		}
		excs, ok := Parse(b.String(), "java")
		require.True(t, ok)
		require.Len(t, excs, MaxExceptions)
		assert.Equal(t, "0", excs[MaxExceptions-1].Value)
		assert.Equal(t, "15", excs[0].Value)
	})
	t.Run("python chain keeps the raised exception", func(t *testing.T) {
		var b strings.Builder
		for i := range 40 {
			if i > 0 {
				b.WriteString("\n" + pyContext + "\n\n")
			}
			b.WriteString(pyTraceback + "\n  File \"/a.py\", line 1, in f\nE: " + itoa(i) + "\n")
		}
		excs, ok := Parse(b.String(), "python")
		require.True(t, ok)
		require.Len(t, excs, MaxExceptions)
		assert.Equal(t, "39", excs[MaxExceptions-1].Value)
	})
	t.Run("dotnet chain", func(t *testing.T) {
		header := "E: 0"
		for i := 1; i < 40; i++ {
			header += " ---> E: " + itoa(i)
		}
		text := header + "\n" + strings.Repeat("   at A.B(Int32 x)\n   --- End of inner exception stack trace ---\n", 39) + "   at A.B(Int32 x)\n"
		excs, ok := Parse(text, "dotnet")
		require.True(t, ok)
		require.Len(t, excs, MaxExceptions)
		assert.Equal(t, "0", excs[MaxExceptions-1].Value)
		assert.Equal(t, "15", excs[0].Value)
	})
}
