package sentryexporter

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// modulesBesideTheRoot are the repository's other Go modules, each with its
// own go.mod: `make test` vets and tests each of them too.
var modulesBesideTheRoot = []string{"conformance", "loadtest", "deploy"}

// TestModulesBuildSharedPackagesAlike fails when another module of the
// repository builds a package that the root's tests build too, at another
// version of its module. One such package (google.golang.org/genproto's rpc
// status, say) changes the build of everything above it, gRPC and pdata
// included, so `make test` compiled and vetted the collector's whole graph
// a second time for that module. Raise the older requirement (`go get
// module@version`, then `go mod tidy`) until every shared package agrees.
func TestModulesBuildSharedPackagesAlike(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root := builtPackages(t, goTool, ".")
	for _, dir := range modulesBesideTheRoot {
		differing := map[string]string{} // the module's version there: the root's
		for pkg, version := range builtPackages(t, goTool, dir) {
			if rootVersion, shared := root[pkg]; shared && rootVersion != version {
				differing[version] = rootVersion
			}
		}
		for version, rootVersion := range differing {
			t.Errorf("%s builds packages of %s; the root builds them from %s", dir, version, rootVersion)
		}
	}
}

// builtPackages lists the packages outside the standard library and outside
// this repository that the module in dir builds for its tests, each with
// its module's path@version.
func builtPackages(t *testing.T, goTool, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command(goTool, "list", "-deps", "-test",
		"-f", "{{if .Module}}{{if not .Module.Main}}{{if not .Module.Replace}}{{.ImportPath}} {{.Module.Path}}@{{.Module.Version}}{{end}}{{end}}{{end}}",
		"./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list in %s: %s", dir, stderr.String())
	pkgs := map[string]string{}
	lines := bufio.NewScanner(bytes.NewReader(out))
	for lines.Scan() {
		if pkg, version, ok := strings.Cut(lines.Text(), " "); ok {
			pkgs[pkg] = version
		}
	}
	require.NotEmpty(t, pkgs, "go list in %s listed nothing", dir)
	return pkgs
}
