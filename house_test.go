package sentryexporter

import (
	"fmt"
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
	{"translate: OTLP to Sentry JSON (spans and logs; metrics; profiles)", []string{"internal/translate", "internal/tracemetric", "internal/profilechunk"}},
	{"assembly of pdata batches: held spans regrouped per project", []string{"internal/assemblepdata"}},
	{"gate and account: the services every later stage calls", []string{"internal/gate", "internal/concurrency", "internal/membudget", "internal/account", "internal/settle"}},
	{"assemble, route's look-ups and split, stack traces, log spacing", []string{"internal/assemble", "internal/discovery", "internal/dsn", "internal/split", "internal/stacktrace", "internal/logthrottle", "internal/profilers"}},
	{"who we are on the wire", []string{"internal/sdkinfo"}},
	{"the protocol's vocabulary, and the generated telemetry", []string{"envelope", "ratelimit", "internal/metadata"}},
	{"the ground", []string{"internal/jsonstr", "internal/bufpool", "internal/atomicfile"}},
}

// purePackages are the packages that must stay free of the collector's types,
// also through what they import: small, pure, table-tested.
var purePackages = []string{
	"ratelimit", "envelope", "internal/jsonstr", "internal/bufpool", "internal/assemble", "internal/gate", "internal/concurrency", "internal/membudget",
	"internal/settle", "internal/stacktrace", "internal/sdkinfo", "internal/dsn", "internal/discovery", "internal/logthrottle", "internal/profilers",
}

// besideTheHouse are packages the component never imports: the test and
// load tools, and test-only fixtures.
var besideTheHouse = []string{"cmd/", "internal/errorshape/errorshapetest", "internal/account/accounttest", "internal/metadatatest", "internal/cputime", "internal/sendtest", "internal/profiletest"}

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

// forbiddenWork is what a package doc can say the package must not do that
// the code shows: a package whose must-not sentence names the work (words)
// may not import what the work takes (imports, a path or its prefix) nor
// refer to its tools (uses, as package.Name); an import path that ends in a
// slash forbids the paths below it. The limits a doc states that
// no import shows (never panic, never drop a span, never put a key in an
// error) are held by the package's own tests and fuzzers.
var forbiddenWork = []struct {
	words   *regexp.Regexp
	imports []string
	uses    []string
}{
	{
		regexp.MustCompile(`(?i)\bsend\b|\bspeak HTTP\b|\bknows nothing of HTTP\b`),
		[]string{modulePath + "/internal/send", "net", "go.opentelemetry.io/collector/config/confighttp"},
		[]string{"http.Client", "http.DefaultClient", "http.NewRequest", "http.NewRequestWithContext", "http.Transport", "http.RoundTripper", "http.Post", "http.Get"},
	},
	{regexp.MustCompile(`(?i)\bbuild (or gate )?envelopes\b|\bbuild, gate or send envelopes\b`), []string{modulePath + "/internal/encode"}, nil},
	{regexp.MustCompile(`(?i)\bread a rate limit\b`), []string{modulePath + "/ratelimit", modulePath + "/internal/gate"}, nil},
	{regexp.MustCompile(`(?i)\brecord an item's fate\b|\bcount\b`), []string{modulePath + "/internal/metadata", "go.opentelemetry.io/otel/metric"}, []string{"account.Accountant"}},
	{regexp.MustCompile(`(?i)\bhold pdata\b|\btranslate OTLP\b`), []string{"go.opentelemetry.io/collector/pdata/"}, nil},
}

// TestStagePackagesSayWhatTheyMustNotDo: every package under internal/ has a
// doc comment that states what it must not do, and where that sentence
// names work of forbiddenWork, the package's code does none of it.
func TestStagePackagesSayWhatTheyMustNotDo(t *testing.T) {
	docs, uses := map[string]string{}, map[string][]string{}
	walkPackages(t, func(pkg string, f *ast.File) {
		if f.Doc != nil {
			docs[pkg] += f.Doc.Text()
		}
		uses[pkg] = append(uses[pkg], packageUses(f)...)
	})
	imports := moduleImports(t)
	for _, f := range houseFloors {
		for _, p := range f.pkgs {
			if !strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "internal/metadata") {
				continue // generated, or outside internal/: ratelimit and envelope have their own doc.go
			}
			limits := mustNotSentences(docs[p])
			require.NotEmpty(t, docs[p], "%s has no package doc comment", p)
			assert.NotEmpty(t, limits, "%s's doc comment does not say what it must not do (a sentence with \"must not\" or \"must never\")", p)
			for _, limit := range limits {
				assertDoesNoneOf(t, p, limit, imports[p], uses[p])
			}
		}
	}
}

// assertDoesNoneOf fails when pkg, whose doc says limit, imports or uses
// what the work limit names takes.
func assertDoesNoneOf(t *testing.T, pkg, limit string, imports, uses []string) {
	t.Helper()
	for _, w := range forbiddenWork {
		if !w.words.MatchString(limit) {
			continue
		}
		for _, imp := range imports {
			for _, forbidden := range w.imports {
				assert.False(t, imp == forbidden || strings.HasSuffix(forbidden, "/") && strings.HasPrefix(imp, forbidden),
					"%s imports %s, yet its doc says: %q", pkg, imp, limit)
			}
		}
		for _, use := range uses {
			assert.NotContains(t, w.uses, use, "%s uses %s, yet its doc says: %q", pkg, use, limit)
		}
	}
}

// mustNotSentences are the sentences of a doc comment that say what the
// package must not do.
func mustNotSentences(doc string) []string {
	var out []string
	for _, s := range regexp.MustCompile(`[.!?](\s+|$)`).Split(strings.Join(strings.Fields(doc), " "), -1) {
		if mustNot.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// packageUses lists the package-qualified names a file refers to, as
// package.Name.
func packageUses(f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				out = append(out, id.Name+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

// The size of a function: no function outside cmd/ and loadtest/ (the
// load and test tools) is longer than maxFuncLines, from its func line to
// its closing brace, or nests deeper than maxFuncNesting. Test files count
// as production code does; generated files do not.
const (
	maxFuncLines   = 60
	maxFuncNesting = 4
)

// oversizedFuncs are the functions that still break the size rule, in
// files other branches are reworking (file:func, as the test names them).
// This list must only shrink: the test fails on a function it names that
// now keeps the rule, so that a fixed one leaves the list for good.
var oversizedFuncs = []string{}

// TestFunctionsAReaderCanHold fails on a function over maxFuncLines lines
// or nested more than maxFuncNesting deep (funcSize says what counts),
// unless oversizedFuncs names it.
func TestFunctionsAReaderCanHold(t *testing.T) {
	found := map[string]string{}
	walkFuncs(t, func(name string, lines, nesting int) {
		if lines > maxFuncLines || nesting > maxFuncNesting {
			found[name] = fmt.Sprintf("%d lines, nesting %d", lines, nesting)
		}
	})
	for name, size := range found {
		if !slices.Contains(oversizedFuncs, name) {
			t.Errorf("%s: %s; at most %d lines and %d levels of nesting", name, size, maxFuncLines, maxFuncNesting)
		}
	}
	for _, name := range oversizedFuncs {
		if _, ok := found[name]; !ok {
			t.Errorf("%s keeps the size rule now (or is gone): remove it from oversizedFuncs", name)
		}
	}
}

func TestFuncSizeCounts(t *testing.T) {
	for _, tt := range []struct {
		name, src      string
		lines, nesting int
	}{
		{"flat", "func f() {\n\tx := 1\n\t_ = x\n}", 4, 0},
		{"else if stays on its if's level", "func f(a int) {\n\tif a > 0 {\n\t} else if a < 0 {\n\t\tfor {\n\t\t}\n\t} else {\n\t}\n}", 8, 2},
		{"a switch and its cases are one level", "func f(a int) {\n\tswitch a {\n\tcase 1:\n\t\tif a > 0 {\n\t\t}\n\t}\n}", 7, 2},
		{"func literals and selects nest", "func f(c chan int) {\n\tgo func() {\n\t\tfor range c {\n\t\t\tselect {\n\t\t\tcase <-c:\n\t\t\t\tif true {\n\t\t\t\t\tfor {\n\t\t\t\t\t}\n\t\t\t\t}\n\t\t\t}\n\t\t}\n\t}()\n}", 13, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x\n\n"+tt.src+"\n", 0)
			require.NoError(t, err)
			lines, nesting := funcSize(fset, f.Decls[0].(*ast.FuncDecl))
			assert.Equal(t, tt.lines, lines, "lines")
			assert.Equal(t, tt.nesting, nesting, "nesting")
		})
	}
}

// walkFuncs calls fn with the size of every function of the module's Go
// files, test files included, and of the conformance module's; not cmd/,
// not generated files, not the loadtest and tools modules.
func walkFuncs(t *testing.T, fn func(name string, lines, nesting int)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(p, d, "conformance")
		}
		if !strings.HasSuffix(p, ".go") || strings.HasPrefix(filepath.ToSlash(p), "cmd/") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil || ast.IsGenerated(f) {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				lines, nesting := funcSize(fset, fd)
				fn(filepath.ToSlash(p)+":"+funcName(fd), lines, nesting)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// funcSize is a function's length in lines, from its func line to its
// closing brace, and its deepest nesting: each if, for, switch, select and
// func literal opens a level; an else, an else if and a switch's cases stay
// on the level of their statement, as gofmt indents them.
func funcSize(fset *token.FileSet, fd *ast.FuncDecl) (lines, nesting int) {
	lines = fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
	var visit func(n ast.Node, level int)
	visit = func(n ast.Node, level int) {
		nesting = max(nesting, level)
		ast.Inspect(n, func(c ast.Node) bool {
			switch c := c.(type) {
			case *ast.IfStmt:
				if c != n {
					visit(c, level+1)
					return false
				}
				if e, ok := c.Else.(*ast.IfStmt); ok { // else if: the same level
					visitParts(visit, level, c.Init, c.Cond, c.Body)
					visit(e, level)
					return false
				}
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.FuncLit:
				if c != n {
					visit(c, level+1)
					return false
				}
			}
			return true
		})
	}
	visit(fd.Body, 0)
	return lines, nesting
}

// visitParts visits the non-nil nodes of ns on one level.
func visitParts(visit func(ast.Node, int), level int, ns ...ast.Node) {
	for _, n := range ns {
		if n != nil {
			visit(n, level)
		}
	}
}

// funcName is a function's name as oversizedFuncs spells it: Name, or
// Recv.Name for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
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

// walkPackages parses every non-test,
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
			return skipDir(p, d)
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(filepath.Dir(p)), f)
		return nil
	})
	require.NoError(t, err)
}

// skipDir is filepath.SkipDir for a directory that holds no Go code of
// this module: build output, testdata, hidden directories, and the nested
// modules other than those named in nested.
func skipDir(p string, d fs.DirEntry, nested ...string) error {
	switch {
	case p == ".":
		return nil
	case strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "dist") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "node_modules":
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && !slices.Contains(nested, filepath.ToSlash(p)) {
		return filepath.SkipDir // a nested module
	}
	return nil
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
