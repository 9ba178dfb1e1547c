package sentryexporter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// houseFloors is the house's plan, top floor first: a package imports only
// packages on floors below its own. docs/architecture.md draws the same plan
// and says why each floor stands where it does; a package that is on no
// floor fails the test, so the plan cannot fall behind the code.
var houseFloors = []struct {
	what string
	pkgs []string
}{
	{"the face: factory, config, lifecycle, routing, each project's wiring", []string{"."}},
	{"send: everything after an envelope is built (queue, retry, concurrency, memory, HTTP, outcome)", []string{"internal/send"}},
	{"encode: envelopes from payloads, with the trace's DSC", []string{"internal/encode"}},
	{"shape errors: one event of two renderings", []string{"internal/dedupe"}},
	{"shape errors: payload edits; the trace index", []string{"internal/errorshape", "internal/traceindex"}},
	{"translate: OTLP to Sentry JSON (spans and logs; metrics)", []string{"internal/translate", "internal/tracemetric"}},
	{"assembly of pdata batches: held spans regrouped per project", []string{"internal/assemblepdata"}},
	{"gate and account: the services every later stage calls", []string{"internal/admit", "internal/account"}},
	{"assemble, route's look-ups and split, stack traces, log spacing", []string{"internal/assemble", "internal/discovery", "internal/dsn", "internal/split", "internal/stacktrace", "internal/logthrottle"}},
	{"who we are on the wire", []string{"internal/sdkinfo"}},
	{"the protocol's vocabulary, and the generated telemetry", []string{"envelope", "ratelimit", "internal/metadata"}},
	{"the ground", []string{"internal/jsonstr", "internal/atomicfile"}},
}

// purePackages are the packages that must stay free of the collector's types,
// also through what they import: small, pure, table-tested.
var purePackages = []string{
	"ratelimit", "envelope", "internal/jsonstr", "internal/assemble", "internal/admit",
	"internal/stacktrace", "internal/sdkinfo", "internal/dsn", "internal/discovery", "internal/logthrottle",
}

// besideTheHouse are packages the component never imports: the test and
// load tools, and test-only fixtures.
var besideTheHouse = []string{"cmd/", "internal/errorshape/errorshapetest", "internal/account/accounttest", "internal/metadatatest"}

const modulePath = "github.com/otel-sentry/sentryexporter"

// TestHouseImportsRunDownward reads every non-test Go file of the module and
// fails on an import that runs up a floor or along one, on a package missing
// from the plan, and on a pure package that reaches the collector.
func TestHouseImportsRunDownward(t *testing.T) {
	imports := moduleImports(t)
	floorOf := map[string]int{}
	for i, f := range houseFloors {
		for _, p := range f.pkgs {
			floorOf[p] = i
		}
	}
	for pkg, deps := range imports {
		if beside(pkg) {
			continue
		}
		floor, ok := floorOf[pkg]
		if !assert.True(t, ok, "package %s is on no floor of houseFloors (and of docs/architecture.md)", pkg) {
			continue
		}
		for _, dep := range deps {
			if !strings.HasPrefix(dep, modulePath) {
				continue
			}
			rel := relPackage(dep)
			assert.False(t, beside(rel), "%s imports %s, which stands beside the house", pkg, rel)
			depFloor, ok := floorOf[rel]
			if ok {
				assert.Greater(t, depFloor, floor, "%s (%s) imports %s (%s): imports must run down a floor",
					pkg, houseFloors[floor].what, rel, houseFloors[depFloor].what)
			}
		}
	}
	for _, f := range houseFloors {
		for _, p := range f.pkgs {
			assert.Contains(t, imports, p, "houseFloors names %s, which is not a package", p)
		}
	}
	for _, p := range purePackages {
		for _, dep := range reach(imports, p) {
			assert.False(t, strings.HasPrefix(dep, "go.opentelemetry.io/collector") || dep == modulePath+"/internal/metadata",
				"%s must stay free of the collector, but reaches %s", p, dep)
		}
	}
}

// mustNot is how a package doc says what the package must not do: "must
// not" or "must never", as one phrase. A "never" alone passes no doc ("it
// never fails" states a property, not a limit of the package's job).
var mustNot = regexp.MustCompile(`(?i)\bmust\s+(not|never)\b`)

// TestStagePackagesSayWhatTheyMustNotDo: every package under internal/ has a
// doc comment that states its one job and what it must not do.
func TestStagePackagesSayWhatTheyMustNotDo(t *testing.T) {
	docs := map[string]string{}
	walkPackages(t, func(pkg string, f *ast.File) {
		if f.Doc != nil {
			docs[pkg] += f.Doc.Text()
		}
	})
	for _, f := range houseFloors {
		for _, p := range f.pkgs {
			if !strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "internal/metadata") {
				continue // generated, or outside internal/: ratelimit and envelope have their own doc.go
			}
			doc := docs[p]
			require.NotEmpty(t, doc, "%s has no package doc comment", p)
			assert.Regexp(t, mustNot, doc, "%s's doc comment does not say what it must not do (a sentence with \"must not\" or \"must never\")", p)
		}
	}
}

// moduleImports maps each package of this module (relative path, "." for
// the root) to its non-test imports.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	walkPackages(t, func(pkg string, f *ast.File) {
		deps := out[pkg]
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if !slices.Contains(deps, p) {
				deps = append(deps, p)
			}
		}
		out[pkg] = deps
	})
	return out
}

// walkPackages parses the package clause, doc and imports of every non-test,
// non-generated Go file of this module (not the nested modules: conformance,
// loadtest, tools; not build output).
func walkPackages(t *testing.T, fn func(pkg string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch {
			case p == ".":
				return nil
			case strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "dist") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "node_modules":
				return filepath.SkipDir
			}
			if _, serr := os.Stat(filepath.Join(p, "go.mod")); serr == nil {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(filepath.Dir(p)), f)
		return nil
	})
	require.NoError(t, err)
}

func relPackage(importPath string) string {
	if importPath == modulePath {
		return "."
	}
	return strings.TrimPrefix(importPath, modulePath+"/")
}

func beside(pkg string) bool {
	for _, b := range besideTheHouse {
		if pkg == b || strings.HasSuffix(b, "/") && strings.HasPrefix(pkg, b) {
			return true
		}
	}
	return false
}

// reach is every import path pkg reaches through this module's packages.
func reach(imports map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var out []string
	var visit func(string)
	visit = func(p string) {
		for _, dep := range imports[p] {
			if seen[dep] {
				continue
			}
			seen[dep] = true
			out = append(out, dep)
			if strings.HasPrefix(dep, modulePath) {
				visit(relPackage(dep))
			}
		}
	}
	visit(pkg)
	return out
}
