package stacktrace

import (
	"testing"
	"unicode/utf8"
)

// FuzzParse checks the guard rails on any input: no panic, the caps hold,
// every string is valid UTF-8, and ok means at least one frame.
func FuzzParse(f *testing.F) {
	langs := []string{"", "go", "java", "python", "nodejs", "dotnet"}
	for i, s := range []string{goPanic, goDebugStack, goPkgErrors, javaChain, pythonChain, nodeAsync, firefox, dotnetInner} {
		f.Add(s, langs[i%len(langs)])
	}
	f.Add("panic: x\n\ngoroutine 1 [running]:\nf)\n\t/a.go:1 +0x1\n", "go")
	f.Add("a\n\tat b.c(d:1)\nCaused by: e\n\t... 99 more\n", "java")
	f.Add("at f (eval at g (h:1:2), <anonymous>:3:4)\n@:1\n", "")
	f.Add("E: a ---> F: b\n   at A..ctor() in x:line 1\n", "dotnet")
	f.Fuzz(func(t *testing.T, text, lang string) {
		excs, ok := Parse(text, lang)
		if ok != (countFrames(excs) > 0) {
			t.Fatalf("ok=%v with %d frames", ok, countFrames(excs))
		}
		if len(excs) > MaxExceptions {
			t.Fatalf("%d exceptions", len(excs))
		}
		for _, e := range excs {
			checkFuzzedException(t, e)
		}
	})
}

// checkFuzzedException fails on an exception that breaks Parse's promises:
// at most MaxFrames frames, valid UTF-8, no negative position.
func checkFuzzedException(t *testing.T, e Exception) {
	t.Helper()
	if len(e.Frames) > MaxFrames {
		t.Fatalf("%d frames", len(e.Frames))
	}
	for _, s := range []string{e.Type, e.Value, e.Module} {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 %q", s)
		}
	}
	for _, fr := range e.Frames {
		for _, s := range []string{fr.Function, fr.Module, fr.Filename, fr.AbsPath} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q", s)
			}
		}
		if fr.Lineno < 0 || fr.Colno < 0 {
			t.Fatalf("negative position %+v", fr)
		}
	}
}
