package profilechunk

import (
	"path"
	"strings"
)

// shape is a frame's names and in_app as its runtime's official SDK writes
// them (docs/mapping.md, "Profiles", says each source).
type shape struct {
	module, function, filename, absPath string
	inApp                               int8 // 1 true, -1 false, 0 left to Sentry
}

// frameShape shapes a frame of runtime (a Sentry platform) named name in
// file, of the native mapping mapFile (native frames only). The user's
// InApp wins over the runtime's rule.
func frameShape(runtime string, kernel bool, name, file, mapFile string, user *InApp) shape {
	var s shape
	switch runtime {
	case "go":
		s = goShape(name, file)
	case "java":
		s = jvmShape(name)
	case "python":
		s = pythonShape(name, file)
	case "node":
		s = nodeShape(name, file)
	case "csharp":
		s = dotnetShape(name, file)
	case "elixir":
		s = beamShape(name, file)
	case "native":
		s = nativeShape(kernel, name, file, mapFile)
	default: // php, ruby, perl, and a chunk platform with no frame type of its own
		s = pathShape(name, file)
		s.inApp = scriptInApp(runtime, file)
	}
	p := s.absPath
	if p == "" {
		p = s.filename
	}
	if runtime == "native" && p == "" {
		p = mapFile
	}
	mod := s.module
	if mod == "" {
		mod = s.function
	}
	if v := user.decide(mod, p); v != 0 && !kernel {
		s.inApp = v
	}
	return s
}

func boolInApp(b bool) int8 {
	if b {
		return 1
	}
	return -1
}

// pathShape is a frame of function name in file, as sentry-python and the
// script runtimes' SDKs write it: filename the path, abs_path the path
// when absolute.
func pathShape(name, file string) shape {
	s := shape{function: name, filename: file}
	if isAbs(file) {
		s.absPath = file
	}
	return s
}

// goShape is sentry-go's (stacktrace.go, newFrame at v0.50.0): module the
// package path, function the rest ((*T).M); an absolute file goes in
// abs_path only, a relative one (-trimpath) in filename.
func goShape(name, file string) shape {
	pkg := goPackage(name)
	s := shape{module: pkg, function: name}
	if pkg != "" {
		s.function = name[len(pkg)+1:]
	}
	if isAbs(file) {
		s.absPath = file
	} else {
		s.filename = file
	}
	s.inApp = boolInApp(goInApp(pkg, file))
	return s
}

// goPackage is sentry-go's packageName (debug/gosym's Sym.PackageName): up
// to the first dot after the last slash; "" for compiler-generated symbols.
func goPackage(name string) string {
	if strings.HasPrefix(name, "go:") || strings.HasPrefix(name, "type:") {
		return ""
	}
	end := max(strings.LastIndex(name, "/"), 0)
	if i := strings.IndexByte(name[end:], '.'); i != -1 {
		return name[:end+i]
	}
	return ""
}

// goStd are the first path elements of Go's standard library (go list std,
// Go 1.26): a package path without a dot in its first element is reserved
// for it, but `main` and a local module's (module myapp) are not.
var goStd = setOf("archive bufio bytes cmp compress container context crypto database debug embed encoding errors " +
	"expvar flag fmt go hash html image index internal io iter log maps math mime net os path plugin reflect regexp " +
	"runtime slices sort strconv strings structs sync syscall testing text time unicode unique unsafe weak vendor")

// goInApp: false for the standard library (its package path, or a file under
// a GOROOT), the module cache (/pkg/mod/, a path@version) and vendored or
// third_party code; true for the rest, as sentry-go's setInAppFrame decides.
func goInApp(pkg, file string) bool {
	if strings.Contains(file, "/pkg/mod/") || strings.Contains(file, "/vendor/") || strings.Contains(file, "@v") ||
		strings.Contains(pkg, "vendor/") || strings.Contains(pkg, "third_party") {
		return false
	}
	if pkg == "" {
		return false // runtime assembly and compiler-generated symbols
	}
	first, _, _ := strings.Cut(pkg, "/")
	if strings.Contains(first, ".") {
		return true
	}
	return !goStd[first] && !inGoRoot(file)
}

// inGoRoot tells a file of a Go installation's sources: /usr/local/go/src/,
// /usr/lib/go-1.x/src/, ~/sdk/go1.x/src/, a toolchain module.
func inGoRoot(file string) bool {
	for _, m := range [...]string{"/usr/local/go/src/", "/usr/lib/go", "/sdk/go1.", "golang.org/toolchain@", "/libexec/src/"} {
		if strings.Contains(file, m) {
			return true
		}
	}
	return false
}

// jvmShape is sentry-java's profiler's (sentry-async-profiler
// JfrAsyncProfilerToSentryProfileConverter.createStackFrame): module the
// class up to its first `$`, function the method, filename the class. The
// eBPF profiler's `void com.acme.Cart.total(java.util.List)` is read as
// com.acme.Cart.total; `com/acme/Cart.total` too.
func jvmShape(name string) shape {
	q := name
	if i := strings.IndexByte(q, '('); i >= 0 {
		q = q[:i]
	}
	if i := strings.LastIndexByte(q, ' '); i >= 0 {
		q = q[i+1:]
	}
	q = strings.ReplaceAll(q, "/", ".")
	i := strings.LastIndexByte(q, '.')
	if i <= 0 || i == len(q)-1 {
		return shape{function: name, inApp: -1} // a stub or VM frame (Interpreter, [vtable chunks])
	}
	class, method := q[:i], q[i+1:]
	mod := class
	if before, _, ok := strings.Cut(class, "$"); ok {
		mod = before
	}
	s := shape{module: mod, function: method, filename: class}
	s.inApp = boolInApp(!hasPrefix(mod, jvmLibraries))
	return s
}

// jvmLibraries are the JDK's, the JVM languages' and the most common
// frameworks' packages. sentry-java without in-app includes leaves in_app
// unset, which Sentry reads as false for every JVM frame; a class outside
// these is the application's (in_app_exclude adds more libraries).
var jvmLibraries = []string{
	"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.", "groovy.", "clojure.",
	"org.codehaus.groovy.", "jakarta.", "org.springframework.", "org.apache.", "io.netty.", "com.fasterxml.",
	"org.hibernate.", "org.eclipse.", "io.micrometer.", "io.opentelemetry.", "io.sentry.", "com.google.",
	"reactor.", "io.grpc.", "okhttp3.", "okio.", "org.slf4j.", "ch.qos.logback.", "org.jboss.", "io.undertow.",
	"io.vertx.", "io.quarkus.", "io.micronaut.", "com.zaxxer.", "org.postgresql.", "com.mysql.", "org.glassfish.",
	"org.aspectj.", "net.bytebuddy.", "org.junit.", "io.reactivex.", "akka.", "org.jetbrains.",
}

// pythonShape is sentry-python's profiler's frame (extract_frame): abs_path
// the code's file, function its qualified name, module and filename (the
// path below sys.path) where the path tells them: below site-packages,
// dist-packages or lib/pythonX.Y.
func pythonShape(name, file string) shape {
	s := pathShape(name, file)
	if mod, rel, ok := pythonModule(file); ok {
		s.module, s.filename = mod, rel
	}
	s.inApp = boolInApp(pythonInApp(file, s.module))
	return s
}

func pythonModule(file string) (mod, rel string, ok bool) {
	for _, m := range [...]string{"/site-packages/", "/dist-packages/"} {
		if i := strings.LastIndex(file, m); i >= 0 {
			rel = file[i+len(m):]
			return dotted(rel), rel, rel != ""
		}
	}
	if _, after, ok := strings.Cut(file, "/lib/python"); ok {
		rest := after
		if j := strings.IndexByte(rest, '/'); j > 0 {
			rel = rest[j+1:]
			return dotted(rel), rel, rel != ""
		}
	}
	return "", "", false
}

// dotted turns a/b/c.py into a.b.c, a/__init__.py into a.
func dotted(rel string) string {
	rel = strings.TrimSuffix(strings.TrimSuffix(rel, ".py"), "/__init__")
	return strings.ReplaceAll(rel, "/", ".")
}

// pythonInApp: Sentry's python rule (vroomrs is_python_application_frame:
// site-packages, dist-packages, /usr/local/, sentry_sdk) and the standard
// library's paths (lib/pythonX.Y, frozen modules).
func pythonInApp(file, mod string) bool {
	return !strings.Contains(file, "/site-packages/") && !strings.Contains(file, "/dist-packages/") && !strings.Contains(file, `\site-packages\`) && !strings.Contains(file, `\dist-packages\`) && !strings.HasPrefix(file, "/usr/local/") && !strings.Contains(file, "/lib/python") && !strings.HasPrefix(file, "<frozen ") && mod != "sentry_sdk" && !strings.HasPrefix(mod, "sentry_sdk.")
}

// nodeShape is @sentry/profiling-node's (11.1.0, its native profiler's
// output, TestProfileChunkMatchesProfilingNode): module the file's
// directory below its last node_modules, else from the root, dotted, then
// `:` and the file's name without .js/.mjs/.cjs; abs_path the script.
// in_app as Sentry's node rule (is_node_application_frame): false under
// node_modules and for node: built-ins.
func nodeShape(name, file string) shape {
	s := shape{function: name, filename: file, absPath: file}
	if file != "" {
		dir, base := path.Split(file)
		base = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, ".js"), ".mjs"), ".cjs")
		if i := strings.LastIndex(dir, "/node_modules/"); i >= 0 {
			dir = dir[i+len("/node_modules/"):]
		}
		s.module = base
		if dir = strings.Trim(dir, "/"); dir != "" {
			s.module = strings.ReplaceAll(dir, "/", ".") + ":" + base
		}
	}
	s.inApp = boolInApp(!strings.HasPrefix(file, "node:") && !strings.Contains(file, "node_modules"))
	return s
}

// dotnetShape is sentry-dotnet's: module the type, function the method;
// in_app false for its default in-app excludes (System., Microsoft., ...).
func dotnetShape(name, file string) shape {
	s := pathShape(name, file)
	q := name
	if i := strings.IndexByte(q, '('); i >= 0 {
		q = q[:i]
	}
	if i := strings.LastIndexByte(q, '.'); i > 0 {
		s.module, s.function = q[:i], q[i+1:]
	}
	s.inApp = boolInApp(!hasPrefix(q, dotnetLibraries))
	return s
}

// dotnetLibraries are sentry-dotnet's default InAppExclude
// (SentryOptions.cs) and the runtime's own.
var dotnetLibraries = []string{
	"System", "Microsoft", "Mono.", "Sentry.", "FSharp.", "Giraffe.", "Newtonsoft.Json", "Xunit", "NUnit",
	"ServiceStack", "Grpc.", "Google.", "Npgsql", "Dapper", "Polly", "Serilog", "NLog", "log4net",
}

// beamShape: module the Erlang or Elixir module, function the rest (as
// sentry-elixir writes module and function). Erlang/OTP modules (not
// Elixir.*), Elixir's own, and paths of OTP's lib or deps/ are not the
// application's.
func beamShape(name, file string) shape {
	s := pathShape(name, file)
	q := name
	if i := strings.IndexByte(q, '/'); i >= 0 { // Mod.fun/arity
		q = q[:i]
	}
	if i := strings.LastIndexByte(q, '.'); i > 0 {
		s.module, s.function = q[:i], name[i+1:]
	} else if i := strings.IndexByte(q, ':'); i > 0 { // mod:fun/arity
		s.module, s.function = q[:i], name[i+1:]
	}
	m := strings.TrimPrefix(s.module, "Elixir.")
	elixir := m != "" && m[0] >= 'A' && m[0] <= 'Z' // Erlang's modules are lower case
	app := elixir && !hasPrefix(m, elixirLibraries) &&
		!strings.Contains(file, "/lib/erlang/") && !strings.Contains(file, "/deps/") && !strings.Contains(file, "/elixir/lib/")
	s.inApp = boolInApp(app)
	return s
}

var elixirLibraries = []string{
	"Enum", "Kernel", "Stream", "Task", "GenServer", "Agent", "Supervisor", "String", "Map", "List", "Keyword",
	"IO", "File", "Process", "Registry", "Code", "Module", "Logger", "Phoenix", "Plug", "Ecto", "Jason",
	"Bandit", "Cowboy", "Finch", "Mint", "Postgrex", "DBConnection", "Telemetry", "Tesla",
}

// nativeShape: kernel frames and code mapped from the system's paths
// (libraries and distribution binaries) are not the application's; code
// mapped from elsewhere (the service's own binary) is. Sentry marks every
// native frame of a chunk of another platform false whatever is written.
func nativeShape(kernel bool, name, file, mapFile string) shape {
	s := pathShape(name, file)
	p := mapFile
	if p == "" {
		p = file
	}
	s.inApp = boolInApp(!kernel && p != "" && !isLibrary(p) && !isSystemPath(p))
	return s
}

func isSystemPath(p string) bool {
	for _, s := range [...]string{"/usr/", "/bin/", "/sbin/", "/snap/", "/nix/store/", "/System/"} {
		if strings.HasPrefix(p, s) {
			return true
		}
	}
	return strings.HasPrefix(p, "[") // [vdso], [kernel.kallsyms]
}

// scriptInApp: PHP as Sentry's php rule (vendor/); Ruby as sentry-ruby's
// (gems and the interpreter's lib/ruby); Perl's lib dirs; any other path
// of a library (isLibrary). 0 (left to Sentry) for a runtime with no rule
// here and no path.
func scriptInApp(runtime, file string) int8 {
	switch runtime {
	case "php":
		return boolInApp(!strings.Contains(file, "/vendor/"))
	case "ruby":
		return boolInApp(!strings.Contains(file, "/gems/") && !strings.Contains(file, "/lib/ruby/") && !isLibrary(file))
	case "perl":
		return boolInApp(!strings.Contains(file, "/perl5/") && !strings.Contains(file, "/perl/") && !isLibrary(file))
	}
	if isLibrary(file) {
		return -1
	}
	return 0
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(words) {
		m[w] = true
	}
	return m
}
