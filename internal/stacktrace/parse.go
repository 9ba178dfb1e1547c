package stacktrace

import (
	"strings"
	"unicode/utf8"
)

const (
	// MaxFrames is the most frames kept per exception; the frames nearest the
	// crash site (the last ones in Sentry order) are kept.
	MaxFrames = 1000
	// MaxExceptions is the most chained exceptions kept; the ones nearest the
	// thrown exception (the last ones in Sentry order) are kept.
	MaxExceptions = 16
)

// Frame is one Sentry stack frame. Lineno and Colno are 0 when unknown.
type Frame struct {
	Function, Module, Filename, AbsPath string
	Lineno, Colno                       int
	// InApp is a best-effort guess: false for the language runtime, the
	// standard library and third-party dependencies.
	InApp bool
}

// Exception is one Sentry exception. Type and Value come from the trace's
// header line when it has one; Frames run caller to callee.
type Exception struct {
	Type, Value, Module string
	Frames              []Frame
}

// parser turns a stack trace into exceptions, oldest first, or returns nil
// when the text holds no frame it recognizes.
type parser func(text string) []Exception

// parsers run in this order when the language is unknown; on a tie in frame
// count the earlier one wins.
var parsers = [...]parser{parseGo, parseJava, parsePython, parseJS, parseDotnet}

// byLanguage maps telemetry.sdk.language values (and a few aliases) to an
// index into parsers, or -1; see
// https://opentelemetry.io/docs/specs/semconv/registry/attributes/telemetry/.
func byLanguage(lang string) int {
	switch strings.ToLower(lang) {
	case "go":
		return 0
	case "java", "kotlin", "scala":
		return 1
	case "python":
		return 2
	case "nodejs", "webjs", "javascript", "js":
		return 3
	case "dotnet":
		return 4
	}
	return -1
}

// Parse recognizes the stack-trace text of Go, Java/JVM, Python,
// JavaScript (V8 and Firefox/Safari) and .NET. lang is the
// telemetry.sdk.language hint; when it is empty or unknown, or its parser
// finds no frame, every parser runs and the one finding most frames wins.
// It returns the exceptions oldest first, or ok=false when the format is not
// recognized. Every returned string is valid UTF-8.
func Parse(text, lang string) (excs []Exception, ok bool) {
	// Parsers cut only at ASCII bytes, so an invalid sequence never
	// straddles a cut: repairing the strings kept equals repairing the text,
	// and costs what is kept, not what was sent.
	valid := utf8.ValidString(text) // ValidString has an ASCII fast path and allocates nothing
	hint := byLanguage(lang)
	if hint >= 0 {
		if e := parsers[hint](text); countFrames(e) > 0 {
			return repaired(capExceptions(e), valid), true
		}
	}
	best := 0
	for i, p := range parsers {
		if i == hint {
			continue
		}
		e := p(text)
		if n := countFrames(e); n > best {
			excs, best = e, n
		}
	}
	if best == 0 {
		return nil, false
	}
	return repaired(capExceptions(excs), valid), true
}

// repaired replaces invalid UTF-8 in every string of excs with U+FFFD, as
// strings.ToValidUTF8 does, unless the text was valid.
func repaired(excs []Exception, valid bool) []Exception {
	if valid {
		return excs
	}
	fix := func(s *string) {
		if !utf8.ValidString(*s) {
			*s = strings.ToValidUTF8(*s, "\uFFFD")
		}
	}
	for i := range excs {
		e := &excs[i]
		fix(&e.Type)
		fix(&e.Value)
		fix(&e.Module)
		for k := range e.Frames {
			f := &e.Frames[k]
			fix(&f.Function)
			fix(&f.Module)
			fix(&f.Filename)
			fix(&f.AbsPath)
		}
	}
	return excs
}

func countFrames(excs []Exception) int {
	n := 0
	for _, e := range excs {
		n += len(e.Frames)
	}
	return n
}

// capExceptions keeps the last MaxExceptions exceptions, those nearest the
// thrown one.
func capExceptions(excs []Exception) []Exception {
	if len(excs) > MaxExceptions {
		excs = excs[len(excs)-MaxExceptions:]
	}
	return excs
}

// addCalleeFirst appends f to frames listed callee first, as Go, Java, JS and
// .NET print them: the first MaxFrames are nearest the crash, so later ones
// are dropped.
func addCalleeFirst(frames []Frame, f Frame) []Frame {
	if len(frames) >= MaxFrames {
		return frames
	}
	if frames == nil {
		frames = make([]Frame, 0, initialFrames)
	}
	return append(frames, f)
}

// initialFrames is the capacity a frame list starts with once its first
// frame is found: enough for most traces, so append seldom copies.
const initialFrames = 32

// addCallerFirst appends f to frames listed caller first, as Python prints
// them: the last MaxFrames are nearest the crash. Memory stays bounded by
// compacting whenever a quarter more than the cap has piled up; finish with
// lastFrames.
func addCallerFirst(frames []Frame, f Frame) []Frame {
	if len(frames) >= MaxFrames+MaxFrames/4 {
		frames = frames[:copy(frames, frames[len(frames)-MaxFrames:])]
	}
	if frames == nil {
		frames = make([]Frame, 0, initialFrames)
	}
	return append(frames, f)
}

// lastFrames trims frames built by addCallerFirst to the cap.
func lastFrames(frames []Frame) []Frame {
	if len(frames) > MaxFrames {
		return frames[len(frames)-MaxFrames:]
	}
	return frames
}

// reverseFrames turns a callee-first list into Sentry's caller-first order.
func reverseFrames(frames []Frame) []Frame {
	for i, j := 0, len(frames)-1; i < j; i, j = i+1, j-1 {
		frames[i], frames[j] = frames[j], frames[i]
	}
	return frames
}

// lineReader yields the lines of a text without allocating; a trailing \r is
// dropped so \r\n input reads like \n input.
type lineReader struct{ rest string }

func (r *lineReader) next() (string, bool) {
	if r.rest == "" {
		return "", false
	}
	line := r.rest
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line, r.rest = line[:i], line[i+1:]
	} else {
		r.rest = ""
	}
	return strings.TrimSuffix(line, "\r"), true
}

func (r *lineReader) peek() (string, bool) {
	c := *r
	return c.next()
}

// hasBlank reports whether s holds a space or a tab.
func hasBlank(s string) bool {
	return strings.IndexByte(s, ' ') >= 0 || strings.IndexByte(s, '\t') >= 0
}

// indent counts the leading spaces and tabs of line.
func indent(line string) int {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// atoi parses a line or column number: ASCII digits only, at most 9 of them
// so it cannot overflow.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// basename returns the last element of a slash or backslash separated path.
func basename(path string) string {
	if i := strings.LastIndexAny(path, "/\\"); i >= 0 {
		return path[i+1:]
	}
	return path
}

// takeHeader splits the header line(s) a parser collected in e.Value into
// the exception's module, type and value.
func (e *Exception) takeHeader() {
	typ, value := splitHeader(e.Value)
	e.Module, e.Type = splitQualified(typ)
	e.Value = value
}

// splitHeader splits a header such as "java.lang.IllegalStateException: boom",
// "ValueError: bad" or "TypeError: x is undefined" into type and value. A
// single word is a type without a message; anything else is only a value.
func splitHeader(h string) (typ, value string) {
	first := h
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if i := strings.IndexByte(first, ':'); i > 0 && !hasBlank(first[:i]) {
		return first[:i], strings.TrimPrefix(h[i+1:], " ")
	}
	if h != "" && !hasBlank(h) && !strings.Contains(h, "\n") {
		return h, ""
	}
	return "", h
}

// splitQualified splits a dotted name such as "java.lang.IllegalStateException"
// into module "java.lang" and name "IllegalStateException".
func splitQualified(name string) (module, short string) {
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// maxHeaderBytes bounds a multi-line header. Later lines are dropped whole,
// so the text stays valid UTF-8; Relay trims exception values far below this.
const maxHeaderBytes = 16 << 10

// header collects an exception's header or message, which may span lines,
// in amortized linear time: a parser scanning text that is not its format
// may take every line for a header. The first line is not copied, and the
// text is made only for an exception that is kept (text), so a header
// allocates nothing beyond its buffer, which a new start reuses.
type header struct {
	first string
	more  []byte // "\n" and each further line
	open  bool
}

// start begins a new header with its first line.
func (h *header) start(line string) {
	h.first, h.more, h.open = line, h.more[:0], true
}

// add appends a further line, or starts the header if none is open.
func (h *header) add(line string) {
	switch {
	case !h.open:
		h.start(line)
	case len(h.first)+len(h.more)+1+len(line) <= maxHeaderBytes:
		h.more = append(append(h.more, '\n'), line...)
	}
}

// reset empties the header, keeping its buffer.
func (h *header) reset() { h.first, h.more, h.open = "", h.more[:0], false }

// is reports whether the header is the one line s.
func (h *header) is(s string) bool { return h.first == s && len(h.more) == 0 }

// close ends the header and returns its text.
func (h *header) close() string {
	h.open = false
	return h.text()
}

// text is the header's text.
func (h *header) text() string {
	if len(h.more) == 0 {
		return h.first
	}
	return h.first + string(h.more)
}
