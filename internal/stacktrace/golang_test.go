package stacktrace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goPanic is a nil-map panic in an HTTP handler; the server printed more
// goroutines after the panicking one.
const goPanic = `panic: assignment to entry in nil map [recovered]
	panic: assignment to entry in nil map

goroutine 34 [running]:
net/http.(*conn).serve.func1()
	/usr/local/go/src/net/http/server.go:1898 +0xbe
panic({0x6e8f40?, 0x7b8c70?})
	/usr/local/go/src/runtime/panic.go:770 +0x132
github.com/acme/shop/internal/cart.(*Store).Add(0xc0001a2000, {0xc00001e0c0, 0x6}, 0x2)
	/src/shop/internal/cart/store.go:42 +0x1d
main.(*Server).handle(0xc000010000, {0x7bd8a8, 0xc0001c0000}, 0xc0001b6000)
	/src/shop/main.go:88 +0x2f5
net/http.HandlerFunc.ServeHTTP(0xc000120000?, {0x7bd8a8?, 0xc0001c0000?}, 0x0?)
	/usr/local/go/src/net/http/server.go:2166 +0x29
github.com/gorilla/mux.(*Router).ServeHTTP(0xc00011e000, {0x7bd8a8, 0xc0001c0000}, 0xc0001b6000)
	/root/go/pkg/mod/github.com/gorilla/mux@v1.8.1/mux.go:212 +0x1e2
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3285 +0x4b4

goroutine 1 [IO wait]:
internal/poll.runtime_pollWait(0x7f5e2c4b9eb0, 0x72)
	/usr/local/go/src/runtime/netpoll.go:345 +0x85
main.main()
	/src/shop/main.go:30 +0x1a5

goroutine 35 [chan receive]:
main.worker()
	/src/shop/worker.go:12 +0x45
exit status 2
`

// goDebugStack is runtime/debug.Stack output from a \r\n log line.
const goDebugStack = "goroutine 1 [running]:\r\n" +
	"runtime/debug.Stack()\r\n" +
	"\t/usr/local/go/src/runtime/debug/stack.go:26 +0x5e\r\n" +
	"main.report(...)\r\n" +
	"\t/home/dev/app/report.go:17\r\n" +
	"main.main()\r\n" +
	"\t/home/dev/app/main.go:9 +0x1d\r\n"

// goPkgErrors is github.com/pkg/errors "%+v" output: no goroutine header,
// no arguments, no PC offsets.
const goPkgErrors = `open config.yaml: no such file or directory
main.loadConfig
	/src/app/config.go:21
main.main
	/src/app/main.go:12
runtime.main
	/usr/local/go/src/runtime/proc.go:271
runtime.goexit
	/usr/local/go/src/runtime/asm_amd64.s:1695`

// parseGoFrame is a frame TestParseGo expects.
type parseGoFrame struct {
	fn, module, file string
	line             int
	inApp            bool
}

// parseGoCases are TestParseGo's traces and the frames each gives.
var parseGoCases = []struct {
	name, text string
	wantExcs   []Exception    // Frames ignored here; see frames
	frames     []parseGoFrame // of the last exception, caller first
}{
	{
		name:     "panic with several goroutines",
		text:     goPanic,
		wantExcs: []Exception{{Type: "panic", Value: "assignment to entry in nil map"}},
		frames: []parseGoFrame{
			{"(*Server).Serve", "net/http", "server.go", 3285, false},
			{"(*Router).ServeHTTP", "github.com/gorilla/mux", "mux.go", 212, false},
			{"HandlerFunc.ServeHTTP", "net/http", "server.go", 2166, false},
			{"(*Server).handle", "main", "main.go", 88, true},
			{"(*Store).Add", "github.com/acme/shop/internal/cart", "store.go", 42, true},
			{"panic", "", "panic.go", 770, false},
			{"(*conn).serve.func1", "net/http", "server.go", 1898, false},
		},
	},
	{
		name:     "debug.Stack with CRLF",
		text:     goDebugStack,
		wantExcs: []Exception{{}},
		frames: []parseGoFrame{
			{"main", "main", "main.go", 9, true},
			{"report", "main", "report.go", 17, true},
			{"Stack", "runtime/debug", "stack.go", 26, false},
		},
	},
	{
		name:     "pkg/errors",
		text:     goPkgErrors,
		wantExcs: []Exception{{}},
		frames: []parseGoFrame{
			{"main", "main", "main.go", 12, true},
			{"loadConfig", "main", "config.go", 21, true},
		},
	},
	{
		name: "nested panics, oldest first",
		text: "panic: first [recovered]\n\tpanic: second\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:7 +0x1d\n",
		wantExcs: []Exception{
			{Type: "panic", Value: "first"},
			{Type: "panic", Value: "second"},
		},
		frames: []parseGoFrame{{"main", "main", "main.go", 7, true}},
	},
	{
		name:     "multi-line panic value",
		text:     "panic: query failed:\nline two\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:7 +0x1d\n",
		wantExcs: []Exception{{Type: "panic", Value: "query failed:\nline two"}},
		frames:   []parseGoFrame{{"main", "main", "main.go", 7, true}},
	},
	{
		name: "fatal error, GOTRACEBACK=system",
		text: "fatal error: concurrent map writes\n\ngoroutine 7 gp=0xc000007340 m=3 mp=0xc00005e808 [running]:\n" +
			"main.fill(0xc000012345)\n\t/app/fill.go:5 +0x2c fp=0xc000049f80 sp=0xc000049f58 pc=0x4a1b2c\n",
		wantExcs: []Exception{{Type: "fatal error", Value: "concurrent map writes"}},
		frames:   []parseGoFrame{{"fill", "main", "fill.go", 5, true}},
	},
}

func TestParseGo(t *testing.T) {
	for _, tt := range parseGoCases {
		t.Run(tt.name, func(t *testing.T) {
			for _, lang := range []string{"go", ""} {
				excs, ok := Parse(tt.text, lang)
				require.True(t, ok, lang)
				require.Len(t, excs, len(tt.wantExcs), lang)
				for i, want := range tt.wantExcs {
					assert.Equal(t, want.Type, excs[i].Type, lang)
					assert.Equal(t, want.Value, excs[i].Value, lang)
				}
				var got []parseGoFrame
				for _, f := range excs[len(excs)-1].Frames {
					got = append(got, parseGoFrame{f.Function, f.Module, basename(f.AbsPath + f.Filename), f.Lineno, f.InApp}) // one of the two is set
				}
				assert.Equal(t, tt.frames, got, lang)
			}
		})
	}
}

func TestGoFrameFields(t *testing.T) {
	excs, ok := Parse(goPanic, "go")
	require.True(t, ok)
	frames := excs[len(excs)-1].Frames
	handle := frames[3]
	assert.Equal(t, Frame{
		Function: "(*Server).handle",
		Module:   "main",
		AbsPath:  "/src/shop/main.go",
		Lineno:   88,
		InApp:    true,
	}, handle)
}

func TestGoPackage(t *testing.T) {
	tests := map[string]string{
		"main.main":                                         "main",
		"main.(*Server).handle":                             "main",
		"github.com/a/b.(*T).m":                             "github.com/a/b",
		"gopkg.in/yaml%2ev3.(*parser).parse":                "gopkg.in/yaml%2ev3",
		"github.com/a/b.Map[go.shape.int,github.com/c/d.T]": "github.com/a/b",
		"net/http.HandlerFunc.ServeHTTP":                    "net/http",
		"panic":                                             "",
	}
	for fn, want := range tests {
		assert.Equal(t, want, goPackage(fn), fn)
	}
}

func TestGoInApp(t *testing.T) {
	tests := []struct {
		fn, path string
		want     bool
	}{
		{"main.main", "/src/app/main.go", true},
		{"myapp/internal/db.Open", "/src/myapp/internal/db/db.go", false}, // looks like GOROOT; best effort
		{"myapp/internal/db.Open", "/home/dev/myapp/internal/db/db.go", true},
		{"net/http.(*conn).serve", "/usr/local/go/src/net/http/server.go", false},
		{"net/http.(*conn).serve", "net/http/server.go", false}, // -trimpath
		{"runtime.gopanic", "/usr/local/go/src/runtime/panic.go", false},
		{"github.com/acme/app.Run", "/src/app/vendor/github.com/acme/app/run.go", false},
		{"github.com/acme/app.Run", "/root/go/pkg/mod/github.com/acme/app@v1.0.0/run.go", false},
		{"github.com/acme/app.Run", "github.com/acme/app/run.go", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, goInApp(tt.fn, goPackage(tt.fn), tt.path), "%s %s", tt.fn, tt.path)
	}
}

// TestGoFramesLikeSentryGo: function names without their package, closures
// named after their caller's frame, -trimpath files as filename, runtime and
// testing frames left out — what sentry-go's NewStacktrace writes, so that an
// exception groups into the same issue.
func TestGoFramesLikeSentryGo(t *testing.T) {
	text := "goroutine 1 [running]:\n" +
		"github.com/acme/shop.(*Cart).Checkout.func1()\n\tgithub.com/acme/shop/cart.go:30 +0x1d\n" +
		"github.com/acme/shop.(*Cart).Checkout(0xc0)\n\tgithub.com/acme/shop/cart.go:25 +0x2a\n" +
		"testing.tRunner(0xc0, 0x1)\n\ttesting/testing.go:1690 +0xf4\n" +
		"runtime.goexit()\n\truntime/asm_amd64.s:1700 +0x1\n"
	excs, ok := Parse(text, "go")
	require.True(t, ok)
	assert.Equal(t, []Frame{
		{Function: "(*Cart).Checkout", Module: "github.com/acme/shop", Filename: "github.com/acme/shop/cart.go", Lineno: 25, InApp: true},
		{Function: "func1", Module: "github.com/acme/shop", Filename: "github.com/acme/shop/cart.go", Lineno: 30, InApp: true},
	}, excs[0].Frames)

	only := "goroutine 1 [running]:\nruntime.main()\n\t/usr/local/go/src/runtime/proc.go:271 +0x1\n"
	excs, ok = Parse(only, "go")
	require.True(t, ok)
	require.Len(t, excs[0].Frames, 1, "a stack of runtime frames only is kept")
	assert.Equal(t, "main", excs[0].Frames[0].Function)
}
