package stacktrace

import (
	"runtime"
	"strings"
	"testing"
)

// maxParseAlloc bounds the bytes one Parse allocates, whatever the text:
// the caps (MaxExceptions+1 exceptions of up to MaxFrames+MaxFrames/4
// frames each while parsing, for each parser), not the input, set it. The
// worst text found, long Python tracebacks chained without end, takes ~5 MiB.
const maxParseAlloc = 8 << 20

// hostileTexts are stack traces a hostile sender may put in
// exception.stacktrace, each about size bytes: many small exceptions or
// blocks, many frames, one endless line, invalid UTF-8.
func hostileTexts(size int) map[string]string {
	fill := func(unit string) string { return strings.Repeat(unit, max(1, size/len(unit))) }
	return map[string]string{
		"python one-frame tracebacks": fill("Traceback (most recent call last):\n  File \"/a.py\", line 1, in f\nE: x\ny\n\n"),
		"python chained causes":       fill("  File \"/a.py\", line 1, in f\nE: x\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n"),
		"python long tracebacks":      fill("Traceback (most recent call last):\n" + strings.Repeat("  File \"/a.py\", line 1, in f\n", 2*MaxFrames-1) + "E: x\n\n"),
		"python site-packages frames": "Traceback (most recent call last):\n" + fill("  File \"/s/site-packages/a/b/c.py\", line 1, in f\n"),
		"go panics":                   fill("panic: x\n\tmore\n") + "goroutine 1 [running]:\nmain.f()\n\t/a.go:1 +0x1\n",
		"go frames":                   "goroutine 1 [running]:\n" + fill("main.f()\n\t/a.go:1 +0x1\n"),
		"java causes and frames":      "E: x\n" + fill("\tat a.B.c(B.java:1)\nCaused by: E: y\n"),
		"java header lines":           "E: x\n" + fill(" more header\n") + "\tat a.B.c(B.java:1)\n",
		"js frames":                   "Error: x\n" + fill("    at f (/a.js:1:2)\n"),
		"dotnet inner blocks":         "E: x\n" + fill("   at A.B() in /a.cs:line 1\n--- End of inner exception stack trace ---\n"),
		"dotnet chain header":         fill("E: x ---> ") + "\n   at A.B() in /a.cs:line 1\n",
		"one endless line":            fill("x"),
		"invalid UTF-8":               "Traceback (most recent call last):\n" + fill("  File \"/\xff.py\", line 1, in f\xfe\n"),
	}
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestParseAllocBounded: a 4 MiB text of each hostile kind, with every
// language hint, allocates at most maxParseAlloc. Before the parsers
// stopped at their caps while parsing, 4 MiB of one-frame Python tracebacks
// allocated 190 MiB, of .NET inner-exception blocks 181 MiB, of Go panic
// lines 99 MiB.
func TestParseAllocBounded(t *testing.T) {
	for name, text := range hostileTexts(4 << 20) {
		t.Run(name, func(t *testing.T) {
			for _, lang := range []string{"", "python", "go", "java", "nodejs", "dotnet"} {
				var excs []Exception
				n := allocated(func() { excs, _ = Parse(text, lang) })
				if n > maxParseAlloc {
					t.Errorf("lang %q: %d KiB allocated for a %d KiB text", lang, n>>10, len(text)>>10)
				}
				for _, e := range excs {
					checkFuzzedException(t, e)
				}
			}
		})
	}
}

// FuzzParseAlloc repeats a fuzzed unit of text to 1 MiB, as a hostile
// sender would repeat a small exception or block, and fails when parsing
// it allocates more than maxParseAlloc: a parser that keeps what its caps
// drop allocates in proportion to the repetitions.
func FuzzParseAlloc(f *testing.F) {
	langs := []string{"", "go", "java", "python", "nodejs", "dotnet"}
	i := 0
	for _, s := range hostileUnits {
		f.Add(s, langs[i%len(langs)])
		i++
	}
	f.Fuzz(func(t *testing.T, unit, lang string) {
		if unit == "" {
			return
		}
		text := strings.Repeat(unit, (1<<20)/len(unit)+1)
		n := allocated(func() { Parse(text, lang) })
		if n > maxParseAlloc {
			t.Fatalf("%d KiB allocated for %d KiB of %q", n>>10, len(text)>>10, unit[:min(len(unit), 80)])
		}
	})
}

// hostileUnits are units of the hostile texts, repeated by FuzzParseAlloc
// (testdata/fuzz/FuzzParseAlloc holds those that found parsers keeping
// what their caps drop: Python tracebacks and chained causes, Go panic
// lines, .NET inner-exception blocks).
var hostileUnits = []string{
	"  File \"/s/site-packages/a/b.py\", line 1, in f\xff\n",
	"\tat a.B.c(B.java:1)\nCaused by: E: y\n",
	"    at f (/a.js:1:2)\n",
}
