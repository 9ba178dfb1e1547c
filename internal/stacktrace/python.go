package stacktrace

import "strings"

// Markers between the tracebacks of a chained Python exception; see
// traceback.TracebackException.format in the CPython standard library.
const (
	pyTraceback = "Traceback (most recent call last):"
	pyContext   = "During handling of the above exception, another exception occurred:"
	pyCause     = "The above exception was the direct cause of the following exception:"
)

// parsePython reads traceback.format_exception output, which is what the
// OpenTelemetry Python SDK records: "Traceback (most recent call last):",
// `  File "/app/main.py", line 10, in main` frames with their source and
// caret lines, then the "ValueError: bad" line (continuing over further
// lines for a multi-line message). Chained exceptions are printed oldest
// first, each traceback caller first, so the order already suits Sentry. A
// cause that was never raised has a header but no traceback; such a
// frameless header counts only when a chain marker follows it.
func parsePython(text string) []Exception {
	r := lineReader{rest: text}
	var excs []Exception
	found := false
	const (
		none    = iota // between tracebacks
		frames         // inside a traceback
		message        // on the exception line(s) after it
	)
	state := none
	base := 0          // indentation of the last "Traceback" or header line
	committed := false // the last exception is confirmed by its traceback or a chain marker
	var h header       // the header of the last exception while state == message
	leave := func(next int) {
		if state == message {
			excs[len(excs)-1].Value = h.close()
		}
		state = next
	}
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		ind := indent(line)
		t := line[ind:]
		switch {
		case t == pyTraceback:
			leave(frames)
			if len(excs) > 0 && !committed {
				excs = excs[:len(excs)-1] // a frameless header before this traceback was noise
			}
			excs = append(excs, Exception{})
			base, committed = ind, true
		case t == pyContext || t == pyCause:
			leave(none)
			committed = true
		case state == frames:
			if f, ok := pythonFrame(t); ok {
				last := &excs[len(excs)-1]
				last.Frames, found = addCallerFirst(last.Frames, f), true
			} else if ind <= base && t != "" {
				h.start(t)
				state = message
			}
		case t == "":
			leave(none)
		case state == message:
			h.add(line[min(ind, base):])
		default: // state == none: a cause printed without traceback, or noise
			if len(excs) > 0 && !committed {
				excs = excs[:len(excs)-1]
			}
			excs = append(excs, Exception{})
			h.start(t)
			state, base, committed = message, ind, false
		}
	}
	leave(none)
	if !found {
		return nil
	}
	if !committed {
		excs = excs[:len(excs)-1]
	}
	for i := range excs {
		e := &excs[i]
		e.Frames = lastFrames(e.Frames)
		typ, value := splitHeader(e.Value)
		e.Module, e.Type = splitQualified(typ)
		e.Value = value
	}
	return excs
}

// pythonFrame parses `File "/app/main.py", line 10, in main`; the ", in"
// part is missing in some SyntaxError tracebacks.
func pythonFrame(t string) (Frame, bool) {
	rest, ok := strings.CutPrefix(t, `File "`)
	if !ok {
		return Frame{}, false
	}
	i := strings.Index(rest, `", line `)
	if i < 0 {
		return Frame{}, false
	}
	path, rest := rest[:i], rest[i+len(`", line `):]
	num, fn, _ := strings.Cut(rest, ", in ")
	lineno, ok := atoi(num)
	if !ok {
		return Frame{}, false
	}
	return Frame{
		Function: fn,
		Module:   pythonModule(path),
		Filename: basename(path),
		AbsPath:  path,
		Lineno:   lineno,
		InApp:    pythonInApp(path),
	}, true
}

// pythonModule derives the dotted module name of an installed package's file,
// ".../site-packages/requests/api.py" is "requests.api". Other files give no
// module: the traceback does not say which directory is on sys.path.
func pythonModule(path string) string {
	for _, dir := range [...]string{"site-packages/", "dist-packages/", "site-packages\\", "dist-packages\\"} {
		if i := strings.LastIndex(path, dir); i >= 0 {
			m := strings.TrimSuffix(path[i+len(dir):], ".py")
			m = strings.TrimSuffix(strings.TrimSuffix(m, "/__init__"), "\\__init__")
			return pathToDots.Replace(m)
		}
	}
	return ""
}

var pathToDots = strings.NewReplacer("/", ".", "\\", ".")

// pythonInApp is false for installed packages, the standard library
// (".../lib/python3.12/json/decoder.py", "C:\Python312\Lib\json\decoder.py")
// and frozen modules.
func pythonInApp(path string) bool {
	switch {
	case strings.Contains(path, "site-packages"), strings.Contains(path, "dist-packages"):
		return false
	case strings.HasPrefix(path, "<frozen "):
		return false
	case strings.Contains(path, "/lib/python"), strings.Contains(path, "\\Lib\\"):
		return false
	}
	return true
}
