package stacktrace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeAsync is a Node 20 stack with async frames, a built-in, an anonymous
// function, an ES module URL and a dependency.
const nodeAsync = `TypeError: Cannot read properties of undefined (reading 'id')
    at getUser (/app/src/users.js:14:23)
    at Array.map (<anonymous>)
    at async Promise.all (index 0)
    at async /app/src/handler.mjs:8:5
    at async Layer.handle (/app/node_modules/express/lib/router/layer.js:95:5)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async file:///app/src/server.mjs:30:3`

// firefox is error.stack from Firefox, which has no header line.
const firefox = `getUser@https://shop.example.com/static/app.js:14:23
render/<@https://shop.example.com/static/app.js:40:7
@https://shop.example.com/static/app.js:2:1
forEach@[native code]
`

func TestParseJS(t *testing.T) {
	type frame struct {
		fn, path  string
		line, col int
		inApp     bool
	}
	tests := []struct {
		name, text, lang string
		typ, value       string
		frames           []frame // caller first
	}{
		{
			name: "node async", text: nodeAsync, lang: "nodejs",
			typ: "TypeError", value: "Cannot read properties of undefined (reading 'id')",
			frames: []frame{
				{"", "/app/src/server.mjs", 30, 3, true},
				{"process.processTicksAndRejections", "node:internal/process/task_queues", 95, 5, false},
				{"Layer.handle", "/app/node_modules/express/lib/router/layer.js", 95, 5, false},
				{"", "/app/src/handler.mjs", 8, 5, true},
				{"Promise.all", "", 0, 0, false},
				{"Array.map", "", 0, 0, false},
				{"getUser", "/app/src/users.js", 14, 23, true},
			},
		},
		{
			name: "firefox", text: firefox, lang: "webjs",
			frames: []frame{
				{"forEach", "", 0, 0, false},
				{"", "https://shop.example.com/static/app.js", 2, 1, true},
				{"render/<", "https://shop.example.com/static/app.js", 40, 7, true},
				{"getUser", "https://shop.example.com/static/app.js", 14, 23, true},
			},
		},
		{
			name: "eval frame, multi-line message, CRLF",
			text: "Error: first\r\nsecond\r\n    at eval (eval at run (/app/a.js:3:1), <anonymous>:1:7)\r\n    at new Runner (/app/a.js:9:2)\r\n",
			typ:  "Error", value: "first\nsecond",
			frames: []frame{
				{"new Runner", "/app/a.js", 9, 2, true},
				{"eval", "<anonymous>", 1, 7, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, lang := range []string{tt.lang, ""} {
				excs, ok := Parse(tt.text, lang)
				require.True(t, ok, lang)
				require.Len(t, excs, 1, lang)
				assert.Equal(t, tt.typ, excs[0].Type, lang)
				assert.Equal(t, tt.value, excs[0].Value, lang)
				var got []frame
				for _, f := range excs[0].Frames {
					got = append(got, frame{f.Function, f.AbsPath, f.Lineno, f.Colno, f.InApp})
				}
				assert.Equal(t, tt.frames, got, lang)
			}
		})
	}
}

func TestJSFilename(t *testing.T) {
	excs, ok := Parse(nodeAsync, "nodejs")
	require.True(t, ok)
	last := excs[0].Frames[len(excs[0].Frames)-1]
	assert.Equal(t, "users.js", last.Filename)
}
