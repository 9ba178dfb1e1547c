package stacktrace

import "strings"

// parseDotnet reads Exception.ToString output: the header chain
// "Outer: msg ---> Inner: msg", then the innermost exception's frames
// ("   at Ns.Type.Method(String s) in C:\src\File.cs:line 42"), each
// "--- End of inner exception stack trace ---" moving one exception out.
// So the blocks come innermost (oldest) first, like Sentry's chain, and each
// block lists the callee first.
func parseDotnet(text string) []Exception {
	r := lineReader{rest: text}
	var h header
	blocks := [][]Frame{nil}
	found := false
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		t := strings.TrimSpace(line)
		if f, ok := dotnetFrame(t); ok {
			blocks[len(blocks)-1] = addCalleeFirst(blocks[len(blocks)-1], f)
			found = true
			continue
		}
		switch {
		case t == "--- End of inner exception stack trace ---":
			blocks = nextBlock(blocks)
		case strings.HasPrefix(t, "--- End of stack trace from previous location"), t == "":
		case !found:
			h.add(line)
		default:
			return dotnetFinish(h.close(), blocks)
		}
	}
	if !found {
		return nil
	}
	return dotnetFinish(h.close(), blocks)
}

// nextBlock starts a new frame block. Only the last MaxExceptions blocks
// are kept (dotnetFinish), so a block past the cap takes the oldest one's
// array (as chain does): however many blocks the text holds, a parse holds
// at most MaxExceptions+1.
func nextBlock(blocks [][]Frame) [][]Frame {
	if len(blocks) == MaxExceptions+1 {
		rotate(blocks)
		blocks = blocks[:MaxExceptions]
	}
	if n := len(blocks); n < cap(blocks) {
		blocks = blocks[:n+1]
		blocks[n] = blocks[n][:0]
		return blocks
	}
	return append(blocks, nil)
}

// dotnetFinish pairs the header chain with the frame blocks, aligned at the
// outermost exception, which owns the last block.
func dotnetFinish(header string, blocks [][]Frame) []Exception {
	// The separator is " ---> " between exceptions; keep at most
	// MaxExceptions+1 pieces so a huge chain is not split in full.
	segs := strings.SplitN(header, " ---> ", MaxExceptions+1)
	if len(segs) > MaxExceptions {
		segs = segs[:MaxExceptions] // the outermost ones, nearest the thrown exception
	}
	if len(blocks) > MaxExceptions {
		blocks = blocks[len(blocks)-MaxExceptions:]
	}
	n := max(len(segs), len(blocks))
	excs := make([]Exception, n)
	for i, s := range segs { // outermost first
		excs[n-1-i].Type, excs[n-1-i].Value = splitHeader(strings.TrimSpace(s))
	}
	for i, b := range blocks {
		excs[n-len(blocks)+i].Frames = reverseFrames(b)
	}
	return excs
}

// dotnetFrame parses "at Ns.Type.Method(String s) in /src/File.cs:line 42";
// the " in" part is missing without PDBs. Parameters are "Type name" pairs,
// so a non-empty list has a space, which keeps Java's "(Foo.java:12)" out.
func dotnetFrame(t string) (Frame, bool) {
	rest, ok := strings.CutPrefix(t, "at ")
	if !ok {
		return Frame{}, false
	}
	method, loc := rest, ""
	if i := strings.LastIndex(rest, ") in "); i >= 0 {
		method, loc = rest[:i+1], rest[i+len(") in "):]
	}
	open := strings.IndexByte(method, '(')
	if open <= 0 || !strings.HasSuffix(method, ")") {
		return Frame{}, false
	}
	name, params := method[:open], method[open+1:len(method)-1]
	if hasBlank(name) || params == "Native Method" || params == "Unknown Source" ||
		(params != "" && !strings.Contains(params, " ")) || strings.Contains(params, ":") {
		return Frame{}, false
	}
	module, fn := dotnetSplit(name)
	f := Frame{Function: fn, Module: module, InApp: dotnetInApp(module)}
	if loc != "" {
		path := loc
		if i := strings.LastIndex(loc, ":line "); i >= 0 {
			if n, ok := atoi(loc[i+len(":line "):]); ok {
				path, f.Lineno = loc[:i], n
			}
		}
		f.AbsPath, f.Filename = path, basename(path)
	}
	return f, true
}

// dotnetSplit splits "Ns.Type.Method" into type and method, keeping the dot
// of constructors: "Ns.Type..ctor" is ".ctor" on "Ns.Type".
func dotnetSplit(name string) (module, fn string) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return "", name
	}
	if name[i-1] == '.' {
		i--
	}
	return name[:i], name[i+1:]
}

// dotnetInApp is false for the framework's namespaces, as in the Sentry .NET
// SDK's default in-app excludes.
func dotnetInApp(module string) bool {
	for _, p := range [...]string{"System", "Microsoft", "Mono"} {
		if module == p || strings.HasPrefix(module, p+".") {
			return false
		}
	}
	return true
}
