package sentryexporter

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docTestName is a test, fuzzer or benchmark the README or docs/ name in
// backquotes; a trailing * or … names every one with that prefix.
var docTestName = regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)([*…]?)")

var goTestFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`)

// TestDocsNameTestsThatExist: every test the README's guarantees or docs/
// cite as their proof exists in this repository (its three modules), so a
// renamed or removed test cannot leave a claim backed by nothing.
func TestDocsNameTestsThatExist(t *testing.T) {
	have := map[string]bool{}
	repo := os.DirFS(".")
	err := fs.WalkDir(repo, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "dist") || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := fs.ReadFile(repo, path)
		if err != nil {
			return err
		}
		for _, m := range goTestFunc.FindAllStringSubmatch(string(src), -1) {
			have[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, have)

	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	for _, doc := range append([]string{"README.md"}, docs...) {
		src, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range docTestName.FindAllStringSubmatch(string(src), -1) {
			name, prefix := m[1], m[2] != ""
			assert.True(t, have[name] || prefix && hasPrefixed(have, name), "%s names %s, which no test file defines", doc, m[0][1:])
		}
	}
}

func hasPrefixed(names map[string]bool, prefix string) bool {
	for n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}
