package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// root is the repository's root, seen from this module's folder.
const root = ".."

// read returns a file of the repository by its path from the root.
func read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// required says whether a missing tool fails the test instead of skipping it (CI sets DEPLOY_REQUIRED=1).
func required() bool { return os.Getenv("DEPLOY_REQUIRED") == "1" }

// tool returns the path of a program the test needs, or skips (fails under DEPLOY_REQUIRED=1)
// with how to get it.
func tool(t *testing.T, nameOrPath, howToGet string) string {
	t.Helper()
	p := nameOrPath
	if strings.ContainsRune(nameOrPath, '/') {
		if _, err := os.Stat(p); err != nil {
			p = ""
		}
	} else if lp, err := exec.LookPath(nameOrPath); err == nil {
		p = lp
	} else {
		p = ""
	}
	if p == "" {
		if required() {
			t.Fatalf("%s is missing and DEPLOY_REQUIRED=1: %s", nameOrPath, howToGet)
		}
		t.Skipf("SKIP: %s is missing (%s); DEPLOY_REQUIRED=1 makes this a failure", nameOrPath, howToGet)
	}
	return p
}

// otelcol is the built collector, bin/otelcol-sentry (make otelcol).
func otelcol(t *testing.T) string {
	t.Helper()
	return tool(t, filepath.Join(root, "bin", "otelcol-sentry"), "run `make otelcol`")
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// documents splits a YAML stream into its non-empty documents.
func documents(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range docSeparator.Split(string(b), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// tree decodes YAML into maps and slices, for configurations that have no Go type here
// (the collector's, metadata.yaml).
func tree(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// at walks a decoded tree by keys ("a", "b") and list indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for i, k := range path {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %v", path, path[:i])
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("%v: no key %q", path, k)
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d", path, k)
			}
			v = l[k]
		}
	}
	return v
}

// section returns the text of a markdown section: from the heading line that starts with
// heading to the next heading of the same or a higher level.
func section(t *testing.T, md []byte, heading string) string {
	t.Helper()
	level := strings.IndexFunc(heading, func(r rune) bool { return r != '#' })
	lines := strings.Split(string(md), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, heading) {
			continue
		}
		var b bytes.Buffer
		inCode := false
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(l, "```") {
				inCode = !inCode
			}
			if !inCode && strings.HasPrefix(l, "#") {
				if n := strings.IndexFunc(l, func(r rune) bool { return r != '#' }); n > 0 && n <= level {
					break
				}
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		return b.String()
	}
	t.Fatalf("no section %q", heading)
	return ""
}
