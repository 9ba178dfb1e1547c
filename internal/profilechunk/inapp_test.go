package profilechunk

import (
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/profiletest"
)

// rf is one frame of a runtime case: its profile.frame.type ("" for the
// resource's language), name and file, and whether Sentry should count it
// as application code.
type rf struct {
	typ, name, file string
	app             bool
}

// runtimeProfile is one process's profile whose stack holds frames, leaf
// first, under a resource of the given attributes (the eBPF profiler's
// shape when it names no language).
func runtimeProfile(res map[string]any, frames []rf) *pb {
	b := newPB()
	p := b.profile(b.resource(res), "samples")
	locs := make([]int32, len(frames))
	for i, f := range frames {
		m := int32(0)
		if f.typ == "native" {
			m = b.mapping(f.file, "")
		}
		locs[i] = b.loc(0x1000+uint64(i), m, f.typ, [2]int64{int64(b.fn(f.name, f.file)), int64(10 + i)})
	}
	b.sample(p, b.Stack(locs...), 9, "", 0, ms(0), ms(10), ms(20))
	return b
}

var ebpfResource = map[string]any{"process.pid": int64(4242), "process.executable.name": "app", "container.id": "c0ffee", "host.name": "node-1"}

func withLang(lang string) map[string]any {
	return map[string]any{"service.name": "shop", "service.instance.id": "i-1", "telemetry.sdk.language": lang, "process.pid": int64(7)}
}

var runtimeCases = []struct {
	name   string
	res    map[string]any
	frames []rf
}{
	{"go SDK", withLang("go"), []rf{
		{"", "runtime.mallocgc", "/usr/local/go/src/runtime/malloc.go", false},
		{"", "github.com/acme/shop/cart.(*Cart).Total", "/src/cart/cart.go", true},
		{"", "myshop/internal/db.Query", "/build/internal/db/db.go", true},
		{"", "github.com/gin-gonic/gin.(*Engine).ServeHTTP", "/root/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/gin.go", false},
		{"", "github.com/acme/shop/vendor/golang.org/x/net/http2.(*serverConn).serve", "/src/vendor/golang.org/x/net/http2/server.go", false},
		{"", "net/http.(*conn).serve", "net/http/server.go", false},
		{"", "main.main", "/src/main.go", true},
		{"", "runtime.goexit", "/usr/local/go/src/runtime/asm_amd64.s", false},
	}},
	{"go eBPF", ebpfResource, []rf{
		{"kernel", "do_syscall_64", "", false},
		{"go", "syscall.Syscall", "/usr/lib/go-1.22/src/syscall/syscall_linux.go", false},
		{"go", "main.handle", "/app/main.go", true},
	}},
	{"java eBPF", ebpfResource, []rf{
		{"native", "", "/usr/lib/jvm/java-21/lib/server/libjvm.so", false},
		{"jvm", "long java.util.stream.ReferencePipeline.count()", "ReferencePipeline.java", false},
		{"jvm", "long com.acme.Cart.total(java.util.List)", "Cart.java", true},
		{"jvm", "void com.acme.Cart$Line.lambda$price$0()", "Cart.java", true},
		{"jvm", "void org.springframework.web.servlet.FrameworkServlet.service(jakarta.servlet.http.HttpServletRequest)", "FrameworkServlet.java", false},
		{"jvm", "void java.lang.Thread.run()", "Thread.java", false},
	}},
	{"python eBPF", ebpfResource, []rf{
		{"cpython", "JSONDecoder.decode", "/usr/local/lib/python3.12/json/decoder.py", false},
		{"cpython", "Session.request", "/srv/venv/lib/python3.12/site-packages/requests/sessions.py", false},
		{"cpython", "checkout", "/srv/shop/views.py", true},
		{"cpython", "run", "/usr/lib/python3.11/threading.py", false},
		{"native", "", "/usr/bin/python3.11", false},
	}},
	{"node eBPF", ebpfResource, []rf{
		{"v8js", "Layer.handle", "/app/node_modules/express/lib/router/layer.js", false},
		{"v8js", "checkout", "/app/src/cart.js", true},
		{"v8js", "processTicksAndRejections", "node:internal/process/task_queues", false},
	}},
}

// TestInAppSurvivesSentry: every frame of a Go, JVM, Python and Node
// process (from an SDK's resource or the eBPF profiler's) is counted as
// application code by Sentry's own profile processing exactly when it is
// the application's (vroomrs set_in_app, reimplemented in
// profiletest.SentryInApp).
func TestInAppSurvivesSentry(t *testing.T) {
	for _, c := range runtimeCases {
		t.Run(c.name, func(t *testing.T) {
			got := sentryApp(t, Options{}, c.res, c.frames)
			for i, f := range c.frames {
				assert.Equal(t, f.app, got[i], "%s (%s)", f.name, f.file)
			}
		})
	}
}

// sentryApp renders frames as one chunk and returns, per frame, whether
// Sentry counts it as application code.
func sentryApp(t *testing.T, o Options, res map[string]any, frames []rf) []bool {
	t.Helper()
	r := NewTranslator(o).Profiles(runtimeProfile(res, frames).pd, both)
	require.Len(t, r.Chunks, 1)
	p := parse(t, r.Chunks[0])
	plat, fs, err := profiletest.ChunkFrames(r.Chunks[0].Payload)
	require.NoError(t, err)
	out := make([]bool, len(frames))
	for i, fi := range p.Profile.Stacks[0] {
		out[i] = profiletest.SentryInApp(fs[fi], plat)
	}
	return out
}

// TestInAppOptionsWin: the user's includes and excludes (module prefixes,
// path globs) win over the runtime's rule, an include over an exclude.
func TestInAppOptionsWin(t *testing.T) {
	in, err := NewInApp([]string{"org.springframework.web.", "com.acme.gen.Keep"}, []string{"com.acme.gen.", "**/internal/gen/**"})
	require.NoError(t, err)
	o := Options{InApp: in}
	java := []rf{
		{"jvm", "void org.springframework.web.servlet.FrameworkServlet.service()", "FrameworkServlet.java", true},
		{"jvm", "void com.acme.gen.Proto.parse()", "Proto.java", false},
		{"jvm", "void com.acme.gen.Keep.run()", "Keep.java", true},
		{"jvm", "void com.acme.Cart.total()", "Cart.java", true},
	}
	assert.Equal(t, []bool{true, false, true, true}, sentryApp(t, o, ebpfResource, java))
	goFrames := []rf{
		{"", "github.com/acme/shop/internal/gen/pb.Unmarshal", "/src/internal/gen/pb/pb.go", false},
		{"", "main.main", "/src/main.go", true},
	}
	assert.Equal(t, []bool{false, true}, sentryApp(t, o, withLang("go"), goFrames))
}

func TestNewInAppRejectsBadEntries(t *testing.T) {
	_, err := NewInApp([]string{"ok.", " "}, []string{"**/x/**"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "`in_app_include[1]`")
	in, err := NewInApp(nil, nil)
	require.NoError(t, err)
	assert.Zero(t, in.decide("main", "/src/main.go"))
}

// TestFramesShapedAsTheSDKs: module, function, filename and abs_path as
// each runtime's official SDK writes them (docs/mapping.md, "Profiles",
// names each source).
func TestFramesShapedAsTheSDKs(t *testing.T) {
	for _, c := range []struct {
		sdk, typ, name, file string
		want                 map[string]any
	}{
		{
			"sentry-go newFrame", "go", "github.com/acme/shop/cart.(*Cart).Total", "/src/cart/cart.go",
			map[string]any{"module": "github.com/acme/shop/cart", "function": "(*Cart).Total", "abs_path": "/src/cart/cart.go"},
		},
		{
			"sentry-go, -trimpath", "go", "main.main.func1", "example.com/shop/main.go",
			map[string]any{"module": "main", "function": "main.func1", "filename": "example.com/shop/main.go"},
		},
		{
			"sentry-java profiler, eBPF signature", "jvm", "void com.acme.Cart$Line.lambda$price$0(java.util.List)", "Cart.java",
			map[string]any{"module": "com.acme.Cart", "function": "lambda$price$0", "filename": "com.acme.Cart$Line"},
		},
		{
			"sentry-java profiler, JFR form", "jvm", "com/acme/Cart.total", "",
			map[string]any{"module": "com.acme.Cart", "function": "total", "filename": "com.acme.Cart"},
		},
		{
			"sentry-python profiler, a library", "cpython", "Session.request", "/srv/venv/lib/python3.12/site-packages/requests/sessions.py",
			map[string]any{"module": "requests.sessions", "function": "Session.request", "filename": "requests/sessions.py", "abs_path": "/srv/venv/lib/python3.12/site-packages/requests/sessions.py"},
		},
		{
			"sentry-python profiler, the app", "cpython", "checkout", "/srv/shop/views.py",
			map[string]any{"function": "checkout", "filename": "/srv/shop/views.py", "abs_path": "/srv/shop/views.py"},
		},
		{
			"@sentry/profiling-node, the app", "v8js", "checkout", "/app/src/cart.js",
			map[string]any{"module": "app.src:cart", "function": "checkout", "filename": "/app/src/cart.js", "abs_path": "/app/src/cart.js"},
		},
		{
			"@sentry/profiling-node, a package", "v8js", "Layer.handle", "/app/node_modules/express/lib/router/layer.js",
			map[string]any{"module": "express.lib.router:layer", "function": "Layer.handle", "filename": "/app/node_modules/express/lib/router/layer.js", "abs_path": "/app/node_modules/express/lib/router/layer.js"},
		},
		{
			"@sentry/profiling-node, a built-in", "v8js", "processTicksAndRejections", "node:internal/process/task_queues",
			map[string]any{"module": "node:internal.process:task_queues", "function": "processTicksAndRejections", "filename": "node:internal/process/task_queues", "abs_path": "node:internal/process/task_queues"},
		},
		{
			"sentry-dotnet", "dotnet", "Acme.Shop.Cart.Total(System.Int32)", "",
			map[string]any{"module": "Acme.Shop.Cart", "function": "Total"},
		},
		{
			"sentry-elixir", "beam", "Elixir.Shop.Cart.total/1", "/app/lib/shop/cart.ex",
			map[string]any{"module": "Elixir.Shop.Cart", "function": "total/1", "filename": "/app/lib/shop/cart.ex", "abs_path": "/app/lib/shop/cart.ex"},
		},
	} {
		t.Run(c.sdk, func(t *testing.T) {
			r := NewTranslator(Options{}).Profiles(runtimeProfile(ebpfResource, []rf{{typ: c.typ, name: c.name, file: c.file}}).pd, both)
			require.Len(t, r.Chunks, 1)
			f := parse(t, r.Chunks[0]).Profile.Frames[0]
			maps.DeleteFunc(f, func(k string, _ any) bool { return k == "lineno" || k == "in_app" || k == "platform" })
			assert.Equal(t, c.want, f)
		})
	}
}

// FuzzFrameShape: any name and path of any runtime shapes without a panic;
// a Go, JVM, .NET or BEAM frame's module and function are parts of its name.
func FuzzFrameShape(f *testing.F) {
	f.Add("void com.acme.Cart$L.total(java.util.List)", "Cart.java", "/usr/lib/libjvm.so")
	f.Add("github.com/a/b.(*T).M", "/src/b.go", "")
	f.Add("Elixir.Shop.Cart.total/1", "/app/node_modules/x/y.js", "")
	f.Fuzz(func(t *testing.T, name, file, mapFile string) {
		for _, rt := range append(framePlatforms[:], "javascript", "cocoa") {
			s := frameShape(rt, false, name, file, mapFile, nil)
			if rt != "go" && rt != "java" && rt != "csharp" && rt != "elixir" {
				continue
			}
			for _, part := range []string{s.module, s.function} {
				if !strings.Contains(name, part) && !strings.Contains(strings.ReplaceAll(name, "/", "."), part) {
					t.Fatalf("%s: %q is no part of %q", rt, part, name)
				}
			}
		}
	})
}
