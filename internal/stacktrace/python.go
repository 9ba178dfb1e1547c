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
	var p pyTrace
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		p.read(line)
	}
	p.leave(pyBetween)
	if !p.found {
		return nil
	}
	if !p.committed {
		p.c.drop()
	}
	excs := p.c.kept()
	for i := range excs {
		excs[i].Frames = lastFrames(excs[i].Frames)
		for k := range excs[i].Frames {
			f := &excs[i].Frames[k]
			f.Module = pythonModule(f.AbsPath)
		}
		excs[i].takeHeader()
	}
	return excs
}

// Where parsePython is in the text.
const (
	pyBetween = iota // between tracebacks
	pyFrames         // inside a traceback
	pyMessage        // on the exception line(s) after it
)

// pyTrace is what parsePython has read so far.
type pyTrace struct {
	c         chain // the last exception's header is open while state == pyMessage
	found     bool  // a frame was read
	state     int   // pyBetween, pyFrames or pyMessage
	base      int   // indentation of the last "Traceback" or header line
	committed bool  // the last exception is confirmed by its traceback or a chain marker
}

// read takes one line of the text.
func (p *pyTrace) read(line string) {
	ind := indent(line)
	t := line[ind:]
	switch {
	case t == pyTraceback:
		p.leave(pyFrames)
		p.next()
		p.base, p.committed = ind, true
	case t == pyContext || t == pyCause:
		p.leave(pyBetween)
		p.committed = true
	case p.state == pyFrames:
		if f, ok := pythonFrame(t); ok {
			last := p.c.last()
			last.Frames, p.found = addCallerFirst(last.Frames, f), true
		} else if ind <= p.base && t != "" {
			p.c.lastHeader().start(t)
			p.state = pyMessage
		}
	case t == "":
		p.leave(pyBetween)
	case p.state == pyMessage:
		p.c.lastHeader().add(line[min(ind, p.base):])
	default: // between tracebacks: a cause printed without traceback, or noise
		p.next()
		p.c.lastHeader().start(t)
		p.state, p.base, p.committed = pyMessage, ind, false
	}
}

// next starts an exception, in place of the last one when nothing
// confirmed it (a frameless header before it was noise).
func (p *pyTrace) next() {
	if len(p.c.excs) > 0 && !p.committed {
		p.c.drop()
	}
	p.c.add()
}

// leave moves to state next, closing the header being read.
func (p *pyTrace) leave(next int) {
	if p.state == pyMessage {
		p.c.lastHeader().open = false
	}
	p.state = next
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
	return Frame{ // Module is derived from AbsPath for the frames kept only (it may allocate)
		Function: fn,
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
