package stacktrace

import "strings"

// parseJS reads Error.prototype.stack text. V8 (Node, Chrome, Edge) prints
// a "TypeError: x is undefined" header, then "    at fn (file:line:col)",
// "    at file:line:col" and "    at async fn (file:line:col)" frames;
// Firefox and Safari print only "fn@file:line:col" frames. Both list the
// callee first, so the frames are reversed. The header is everything before
// the first frame; parsing stops at the first other line after the frames.
func parseJS(text string) []Exception {
	r := lineReader{rest: text}
	var h header
	var frames []Frame
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		t := strings.TrimSpace(line)
		f, ok := v8Frame(t)
		if !ok {
			f, ok = geckoFrame(t)
		}
		switch {
		case ok:
			frames = addCalleeFirst(frames, f)
		case t == "":
		case len(frames) == 0:
			h.add(t)
		default:
			return jsFinish(&h, frames)
		}
	}
	return jsFinish(&h, frames)
}

func jsFinish(h *header, frames []Frame) []Exception {
	if len(frames) == 0 {
		return nil
	}
	var e Exception
	e.Type, e.Value = splitHeader(strings.TrimPrefix(h.close(), "Uncaught "))
	e.Frames = reverseFrames(frames)
	return []Exception{e}
}

// v8Frame parses "at fn (location)" and "at location", where location is
// "file:line:col", "eval at fn (file:line:col), <anonymous>:line:col", or,
// for built-ins, "<anonymous>", "native" or "index N".
func v8Frame(t string) (Frame, bool) {
	rest, ok := strings.CutPrefix(t, "at ")
	if !ok {
		return Frame{}, false
	}
	rest = strings.TrimPrefix(rest, "async ")
	fn, loc := "", rest
	if open := jsOpenParen(rest); open > 0 && rest[open-1] == ' ' {
		fn, loc = rest[:open-1], rest[open+1:len(rest)-1]
	}
	if strings.HasPrefix(loc, "eval at ") {
		if i := strings.LastIndex(loc, ", "); i >= 0 {
			loc = loc[i+2:]
		}
	}
	if path, lineno, colno, ok := jsLocation(loc, true); ok {
		return jsFrame(fn, path, lineno, colno), true
	}
	if fn != "" && (loc == "<anonymous>" || loc == "native" || strings.HasPrefix(loc, "index ")) {
		return Frame{Function: fn}, true
	}
	return Frame{}, false
}

// jsOpenParen returns the index of the "(" that matches the closing ")" of
// rest, or -1; "(eval at f (a.js:1:2), <anonymous>:1:1)" nests.
func jsOpenParen(rest string) int {
	if !strings.HasSuffix(rest, ")") {
		return -1
	}
	depth := 0
	for i := len(rest) - 1; i >= 0; i-- {
		switch rest[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// geckoFrame parses Firefox and Safari frames: "fn@file:line:col",
// "@file:line:col", "global code@file:line:col" and "fn@[native code]".
func geckoFrame(t string) (Frame, bool) {
	fn, loc, ok := strings.Cut(t, "@")
	if !ok {
		return Frame{}, false
	}
	if loc == "[native code]" {
		return Frame{Function: fn}, fn != ""
	}
	path, lineno, colno, ok := jsLocation(loc, false)
	if !ok {
		return Frame{}, false
	}
	return jsFrame(fn, path, lineno, colno), true
}

// jsLocation splits "file:line:col"; without needCol, "file:line" is
// accepted too.
func jsLocation(loc string, needCol bool) (path string, lineno, colno int, ok bool) {
	i := strings.LastIndexByte(loc, ':')
	if i <= 0 {
		return "", 0, 0, false
	}
	last, ok := atoi(loc[i+1:])
	if !ok {
		return "", 0, 0, false
	}
	j := strings.LastIndexByte(loc[:i], ':')
	if j > 0 {
		if lineno, ok := atoi(loc[j+1 : i]); ok {
			return loc[:j], lineno, last, true
		}
	}
	if needCol {
		return "", 0, 0, false
	}
	return loc[:i], last, 0, true
}

func jsFrame(fn, path string, lineno, colno int) Frame {
	path = strings.TrimPrefix(path, "file://")
	return Frame{
		Function: fn,
		Filename: basename(path),
		AbsPath:  path,
		Lineno:   lineno,
		Colno:    colno,
		InApp:    jsInApp(path),
	}
}

// jsInApp is false for dependencies and for Node's own modules:
// "node:internal/...", "internal/..." and, before Node 16, bare "events.js".
func jsInApp(path string) bool {
	switch {
	case strings.Contains(path, "/node_modules/"), strings.Contains(path, "\\node_modules\\"):
		return false
	case strings.HasPrefix(path, "node:"), strings.HasPrefix(path, "internal/"):
		return false
	}
	return strings.ContainsAny(path, "/\\")
}
