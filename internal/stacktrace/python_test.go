package stacktrace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pythonChain is traceback.format_exception output for a KeyError handled
// by raising an app error "from" it, while handling an earlier error.
const pythonChain = `Traceback (most recent call last):
  File "/app/shop/cache.py", line 14, in get
    return self._data[key]
           ~~~~~~~~~~^^^^^
KeyError: 'order:42'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/usr/lib/python3.12/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
  File "/app/shop/cache.py", line 17, in get
    raise LookupError("cache miss")
LookupError: cache miss

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/.venv/lib/python3.12/site-packages/flask/app.py", line 880, in full_dispatch_request
    rv = self.dispatch_request()
  File "/app/shop/views.py", line 31, in order
    return load(order_id)
  File "/app/shop/orders.py", line 9, in load
    raise shop.errors.OrderError(f"order {order_id} unavailable") from e
shop.errors.OrderError: order 42 unavailable
`

func TestParsePythonChain(t *testing.T) {
	for _, lang := range []string{"python", ""} {
		excs, ok := Parse(pythonChain, lang)
		require.True(t, ok, lang)
		require.Len(t, excs, 3, lang)

		assert.Equal(t, []head{
			{"", "KeyError", "'order:42'"},
			{"", "LookupError", "cache miss"},
			{"shop.errors", "OrderError", "order 42 unavailable"},
		}, heads(excs), lang)

		assert.Equal(t, []frame{
			{"flask.app", "full_dispatch_request", "app.py", 880, false},
			{"", "order", "views.py", 31, true},
			{"", "load", "orders.py", 9, true},
		}, frames(excs[2]), lang)
		assert.Equal(t, "/app/shop/orders.py", excs[2].Frames[2].AbsPath)
		assert.False(t, excs[1].Frames[0].InApp, "standard library")
		assert.Len(t, excs[0].Frames, 1)
	}
}

func TestParsePython(t *testing.T) {
	tests := []struct {
		name, text string
		heads      []string // Type + "|" + Value, oldest first
		frames     []int    // frame count per exception
	}{
		{
			name:   "CRLF, no message, preface line",
			text:   "Unhandled error in worker\r\nTraceback (most recent call last):\r\n  File \"<stdin>\", line 1, in <module>\r\nKeyboardInterrupt\r\n",
			heads:  []string{"KeyboardInterrupt|"},
			frames: []int{1},
		},
		{
			name: "cause without traceback",
			text: "ValueError: root\n\nThe above exception was the direct cause of the following exception:\n\n" +
				"Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\n    raise RuntimeError('top') from ValueError('root')\nRuntimeError: top\n",
			heads:  []string{"ValueError|root", "RuntimeError|top"},
			frames: []int{0, 1},
		},
		{
			name:   "multi-line message, trailing noise",
			text:   "Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in f\nAssertionError: a\n  b\n\nsome other log line\n",
			heads:  []string{"AssertionError|a\n  b"},
			frames: []int{1},
		},
		{
			name:   "SyntaxError frame without function",
			text:   "Traceback (most recent call last):\n  File \"/app/main.py\", line 1, in <module>\n  File \"/app/mod.py\", line 2\n    x = = 1\n        ^\nSyntaxError: invalid syntax\n",
			heads:  []string{"SyntaxError|invalid syntax"},
			frames: []int{2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			excs, ok := Parse(tt.text, "python")
			require.True(t, ok)
			var heads []string
			var frames []int
			for _, e := range excs {
				heads = append(heads, e.Type+"|"+e.Value)
				frames = append(frames, len(e.Frames))
			}
			assert.Equal(t, tt.heads, heads)
			assert.Equal(t, tt.frames, frames)
		})
	}
}

func TestPythonFrameCap(t *testing.T) {
	// Recursion: Python prints caller first, so the last frames are kept.
	text := "Traceback (most recent call last):\n"
	for i := 1; i <= 2500; i++ {
		text += "  File \"/app/r.py\", line " + itoa(i) + ", in f\n    f()\n"
	}
	text += "RecursionError: maximum recursion depth exceeded\n"
	excs, ok := Parse(text, "python")
	require.True(t, ok)
	require.Len(t, excs[0].Frames, MaxFrames)
	assert.Equal(t, 1501, excs[0].Frames[0].Lineno)
	assert.Equal(t, 2500, excs[0].Frames[MaxFrames-1].Lineno)
}
