package stacktrace

import "strings"

// parseGo reads runtime/debug.Stack output, panic and fatal-error output
// ("panic: ...", "goroutine N [running]:", "created by ..."), and the
// function/file line pairs that github.com/pkg/errors prints for "%+v".
// Only the first goroutine counts: it is the one that panicked, or the one
// debug.Stack ran in. Go prints callee first, so the frames are reversed.
// Each distinct "panic:" line becomes an exception (nested panics print the
// earlier ones first, so that is already oldest first); the frames go to the
// last.
func parseGo(text string) []Exception {
	r := lineReader{rest: text}
	var c chain // the last exception's header is its message, which may go on over lines
	var frames []Frame
	flush := func() {
		if len(c.excs) > 0 {
			c.lastHeader().open = false
		}
	}
	inGoroutine := false
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isGoroutineHeader(line) {
			if len(frames) > 0 {
				break
			}
			flush()
			inGoroutine = true
			continue
		}
		if len(frames) == 0 && !inGoroutine {
			if typ, value, ok := goPanicHeader(strings.TrimLeft(line, " \t")); ok {
				flush()
				// Before Go 1.23 a re-panic with the same value printed it twice.
				if n := len(c.excs); n == 0 || c.excs[n-1].Type != typ || !c.hs[n-1].is(value) {
					c.add()
					c.last().Type = typ
				}
				c.lastHeader().start(value)
				continue
			}
		}
		if f, ok := goFrame(line, &r); ok {
			flush()
			frames = addCalleeFirst(frames, f)
			continue
		}
		switch {
		case line == "" && len(frames) > 0:
			return goFinish(&c, frames) // end of the goroutine's block
		case line == "":
			flush()
		case len(c.excs) > 0 && c.lastHeader().open && !strings.HasPrefix(line, "[signal "):
			c.lastHeader().add(line)
		}
	}
	return goFinish(&c, frames)
}

func goFinish(c *chain, frames []Frame) []Exception {
	if len(frames) == 0 {
		return nil
	}
	if len(c.excs) == 0 {
		c.add()
	}
	excs := c.kept()
	excs[len(excs)-1].Frames = trimParentPrefix(skipRuntime(reverseFrames(frames)))
	return excs
}

// skipRuntime leaves out the frames of packages runtime and testing, as
// sentry-go does (shouldSkipFrame), unless no frame would be left. It filters
// in place: frames is only written to once a frame is kept.
func skipRuntime(frames []Frame) []Frame {
	kept := frames[:0]
	for _, f := range frames {
		if f.Module != "runtime" && f.Module != "testing" {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		return frames
	}
	return kept
}

// trimParentPrefix shortens a closure's name to what follows its caller's, as
// sentry-go does (cleanupFunctionNamePrefix) since Go 1.21 qualifies closures
// fully: "(*T).m.func1" called from "(*T).m" becomes "func1". Frames are
// caller first. Same names, same issue grouping as the official SDK.
func trimParentPrefix(frames []Frame) []Frame {
	for i := len(frames) - 1; i > 0; i-- {
		if rest, ok := strings.CutPrefix(frames[i].Function, frames[i-1].Function+"."); ok && frames[i-1].Function != "" {
			frames[i].Function = rest
		}
	}
	return frames
}

// isGoroutineHeader matches "goroutine 1 [running]:" and the Go 1.23
// GOTRACEBACK=system form "goroutine 1 gp=0xc0 m=0 mp=0x6a [running]:".
func isGoroutineHeader(line string) bool {
	return strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(line, "]:") && strings.Contains(line, " [")
}

// goPanicHeader matches "panic: boom", "panic: boom [recovered]" and
// "fatal error: concurrent map writes".
func goPanicHeader(line string) (typ, value string, ok bool) {
	for _, typ := range [...]string{"panic", "fatal error"} {
		if v, ok := strings.CutPrefix(line, typ+": "); ok {
			if i := strings.LastIndex(v, " [recovered"); i >= 0 && strings.HasSuffix(v, "]") {
				v = v[:i]
			}
			return typ, v, true
		}
	}
	return "", "", false
}

// goFrame parses a function line such as "main.(*Server).handle(0xc000010000)"
// or "created by net/http.(*Server).Serve in goroutine 1" together with the
// file line after it, "\t/src/app/main.go:42 +0x1d", which it consumes.
func goFrame(line string, r *lineReader) (Frame, bool) {
	if line == "" || line[0] == ' ' || line[0] == '\t' {
		return Frame{}, false
	}
	fn := line
	if v, ok := strings.CutPrefix(fn, "created by "); ok {
		fn = v
		if i := strings.Index(fn, " in goroutine "); i >= 0 {
			fn = fn[:i]
		}
	} else if i := strings.LastIndexByte(fn, '('); i >= 0 && strings.HasSuffix(fn, ")") {
		fn = fn[:i]
	}
	if fn == "" || hasBlank(fn) || (!strings.Contains(fn, ".") && fn != "panic") {
		return Frame{}, false
	}
	next, ok := r.peek()
	if !ok {
		return Frame{}, false
	}
	path, lineno, ok := goFileLine(next)
	if !ok {
		return Frame{}, false
	}
	r.next()
	module := goPackage(fn)
	f := Frame{
		Function: goFunction(fn, module),
		Module:   module,
		Lineno:   lineno,
		InApp:    goInApp(fn, module, path),
	}
	// As sentry-go: an absolute path is abs_path only (a base name would be
	// ambiguous); a -trimpath one is the filename.
	if isAbsPath(path) {
		f.AbsPath = path
	} else {
		f.Filename = path
	}
	return f, true
}

// goFunction is the function name without its package, as sentry-go writes it
// (splitQualifiedFunctionName): "github.com/a/b.(*T).m" in "github.com/a/b"
// is "(*T).m". Sentry groups Go frames by module and function, so this is what
// makes an exception group into the same issue as the official SDK's.
func goFunction(fn, module string) string {
	if module == "" {
		return fn
	}
	return fn[len(module)+1:]
}

// isAbsPath is true for "/src/x.go", `\\host\x.go`, "C:/x.go" and `C:\x.go`, on any platform.
func isAbsPath(p string) bool {
	switch {
	case p == "":
		return false
	case p[0] == '/' || p[0] == '\\':
		return true
	default:
		return len(p) >= 3 && p[1] == ':' && (p[2] == '/' || p[2] == '\\')
	}
}

// goFileLine parses "\t/src/app/main.go:42 +0x1d", also with the
// " fp=0x.. sp=0x.. pc=0x.." that GOTRACEBACK=system adds.
func goFileLine(line string) (path string, lineno int, ok bool) {
	if line == "" || (line[0] != '\t' && line[0] != ' ') {
		return "", 0, false
	}
	line = strings.TrimLeft(line, " \t")
	pc := false
	for _, sep := range [...]string{" +0x", " fp="} {
		if i := strings.Index(line, sep); i >= 0 {
			line, pc = line[:i], true
		}
	}
	i := strings.LastIndexByte(line, ':')
	if i <= 0 {
		return "", 0, false
	}
	path = line[:i]
	lineno, ok = atoi(line[i+1:])
	source := pc || strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".s")
	if !ok || !source {
		return "", 0, false
	}
	return path, lineno, true
}

// goPackage returns the import path of a function name as the runtime prints
// it: "github.com/a/b.(*T).m" is in "github.com/a/b". The runtime escapes
// dots in the last path element, so the first dot after the last slash ends
// the path. Type parameters and receivers may hold slashes of their own.
func goPackage(fn string) string {
	head := fn
	if i := strings.IndexAny(head, "[("); i >= 0 {
		head = head[:i]
	}
	start := strings.LastIndexByte(head, '/') + 1
	if i := strings.IndexByte(head[start:], '.'); i >= 0 {
		return fn[:start+i]
	}
	return ""
}

// goInApp is false for the runtime, the standard library, vendored code and
// modules from the module cache. Standard library packages have no dot in
// their first path element; their files lie under GOROOT/src/<pkg>/, or
// <pkg>/ with -trimpath, which keeps a dotless module of the app in-app.
func goInApp(fn, module, path string) bool {
	switch {
	case fn == "panic", module == "runtime", strings.HasPrefix(module, "runtime/"):
		return false
	case strings.Contains(path, "/vendor/"), strings.Contains(path, "/pkg/mod/"):
		return false
	case module == "main" || module == "":
		return true
	}
	first, _, _ := strings.Cut(module, "/")
	if strings.Contains(first, ".") {
		return true
	}
	return path != "" && !strings.Contains(path, "/src/"+module+"/") && !strings.HasPrefix(path, module+"/")
}
