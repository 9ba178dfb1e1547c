package stacktrace

import "strings"

// parseJava reads Throwable.printStackTrace output: a header
// ("java.lang.IllegalStateException: boom", possibly spread over several
// lines), "\tat Class.method(File.java:42)" frames, "... N more", and
// "Caused by:" chains. Suppressed exceptions are skipped. Java prints the
// thrown exception first and each cause after it, callee first, so both the
// chain and the frames are reversed. Throwable.printEnclosedStackTrace is the
// authority for the layout.
func parseJava(text string) []Exception {
	r := lineReader{rest: text}
	j := javaTrace{skipFrom: -1}
	for {
		line, ok := r.next()
		if !ok || !j.read(line) {
			break
		}
	}
	if !j.found {
		return nil
	}
	j.flush()
	return j.sentryOrder()
}

// javaTrace is what parseJava has read so far.
type javaTrace struct {
	chain    []Exception // thrown exception first, as printed
	more     []int       // per exception, frames in common with its enclosing trace
	found    bool        // a frame was read
	h        header      // the header of the last exception while it has no frames yet
	skipFrom int         // the indentation of the Suppressed: block being skipped; -1: none
}

// read takes one line of the text and reports whether the trace goes on.
func (j *javaTrace) read(line string) bool {
	ind := indent(line)
	t := line[ind:]
	if j.skipFrom >= 0 {
		if t == "" || ind >= j.skipFrom {
			return true
		}
		j.skipFrom = -1
	}
	if t == "" {
		return true
	}
	if f, ok := javaFrame(t); ok {
		if len(j.chain) == 0 {
			j.chain, j.more = append(j.chain, Exception{}), append(j.more, 0)
		}
		j.flush()
		last := &j.chain[len(j.chain)-1]
		last.Frames, j.found = addCalleeFirst(last.Frames, f), true
		return true
	}
	if n, ok := javaMore(t); ok && len(j.chain) > 0 {
		j.flush()
		j.more[len(j.more)-1] = n
		return true
	}
	if strings.HasPrefix(t, "Suppressed: ") && ind > 0 {
		j.skipFrom = ind
		return true
	}
	if cause, ok := strings.CutPrefix(t, "Caused by: "); ok || len(j.chain) == 0 {
		if len(j.chain) == MaxExceptions {
			return false // the causes nearest the thrown exception are kept
		}
		j.flush()
		j.chain, j.more = append(j.chain, Exception{}), append(j.more, 0)
		if !ok {
			cause = javaStripThread(t)
		}
		j.h.start(cause)
		return true
	}
	if j.h.open {
		j.h.add(line)
		return true
	}
	return ind > 0 // a line at the margin that is not part of the trace ends it
}

// flush closes the open header of the last exception into its value.
func (j *javaTrace) flush() {
	if j.h.open {
		j.chain[len(j.chain)-1].Value = j.h.close()
	}
}

// sentryOrder completes each cause's frames with those "... n more" elided,
// splits the headers into module, type and value, and turns the chain and
// its frames around: the oldest (the root cause) first, frames caller first.
func (j *javaTrace) sentryOrder() []Exception {
	chain := j.chain
	for i := range chain {
		if i > 0 {
			chain[i].Frames = javaCommon(chain[i].Frames, chain[i-1].Frames, j.more[i])
		}
	}
	for i := range chain {
		chain[i].takeHeader()
	}
	for i, k := 0, len(chain)-1; i < k; i, k = i+1, k-1 {
		chain[i], chain[k] = chain[k], chain[i]
	}
	for i := range chain {
		chain[i].Frames = reverseFrames(chain[i].Frames)
	}
	return chain
}

// javaCommon appends the n outermost frames that "... n more" elided: the
// last n of the enclosing exception's complete, callee-first trace. The
// copy keeps the enclosing trace's backing array out of reach of appends.
func javaCommon(frames, enclosing []Frame, n int) []Frame {
	n = min(n, len(enclosing), MaxFrames-len(frames))
	if n <= 0 {
		return frames
	}
	out := make([]Frame, len(frames), len(frames)+n)
	copy(out, frames)
	return append(out, enclosing[len(enclosing)-n:]...)
}

// javaStripThread drops the prefix of an uncaught exception,
// `Exception in thread "main" java.lang.RuntimeException: boom`.
func javaStripThread(h string) string {
	if rest, ok := strings.CutPrefix(h, "Exception in thread \""); ok {
		if _, after, ok := strings.Cut(rest, "\" "); ok {
			return after
		}
	}
	return h
}

// javaMore parses "... 12 more".
func javaMore(t string) (int, bool) {
	v, ok := strings.CutPrefix(t, "... ")
	if !ok {
		return 0, false
	}
	v, ok = strings.CutSuffix(v, " more")
	if !ok {
		return 0, false
	}
	return atoi(v)
}

// javaFrame parses "at com.example.Foo.bar(Foo.java:42)", also with a Java 9
// class loader or module prefix ("app//", "java.base@17/"), the locations
// "Native Method", "Unknown Source" and "<generated>", and text after the
// closing parenthesis such as logback's " ~[app.jar:1.0]". The location must
// look like a Java file name, which keeps JavaScript and .NET lines out.
func javaFrame(t string) (Frame, bool) {
	rest, ok := strings.CutPrefix(t, "at ")
	if !ok {
		return Frame{}, false
	}
	open := strings.IndexByte(rest, '(')
	if open <= 0 {
		return Frame{}, false
	}
	closing := strings.IndexByte(rest[open:], ')')
	if closing < 0 {
		return Frame{}, false
	}
	qual, loc := rest[:open], rest[open+1:open+closing]
	if hasBlank(qual) {
		return Frame{}, false
	}
	qual = qual[strings.LastIndexByte(qual, '/')+1:]
	class, method := splitQualified(qual)
	if class == "" {
		return Frame{}, false
	}
	file, lineno := loc, 0
	if i := strings.LastIndexByte(loc, ':'); i >= 0 {
		if lineno, ok = atoi(loc[i+1:]); !ok {
			return Frame{}, false
		}
		file = loc[:i]
	}
	switch {
	case file == "Native Method", file == "Unknown Source", file == "<generated>":
		file = ""
	case file == "" || strings.ContainsAny(file, " \t/\\:"):
		return Frame{}, false
	}
	return Frame{
		Function: method,
		Module:   class,
		Filename: file,
		Lineno:   lineno,
		InApp:    javaInApp(class),
	}, true
}

// javaNotInApp lists the package prefixes of the JDK and of JVM languages'
// runtimes.
var javaNotInApp = [...]string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.", "groovy.", "org.codehaus.groovy."}

func javaInApp(class string) bool {
	for _, p := range javaNotInApp {
		if strings.HasPrefix(class, p) {
			return false
		}
	}
	return true
}
