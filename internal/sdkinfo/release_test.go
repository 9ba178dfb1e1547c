package sdkinfo

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoFile reads a file at the repository's root.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	require.NoError(t, err)
	return string(b)
}

// allMatches returns the first group of every match of re in s.
func allMatches(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestVersionStatedOnce: Version is the release; the distribution's version,
// the CHANGELOG's top entry, the user's manifest make ocb-user builds and
// every version of this module the README names are the same one (the
// User-Agent, X-Sentry-Auth and every sdk header take Version itself).
func TestVersionStatedOnce(t *testing.T) {
	v := "v" + Version
	dist := regexp.MustCompile(`(?m)^dist:\n(?: {2}.*\n)*? {2}version: (\S+)`).FindStringSubmatch(repoFile(t, "builder-config.yaml"))
	require.NotNil(t, dist, "builder-config.yaml states dist.version")
	assert.Equal(t, Version, dist[1], "builder-config.yaml dist.version")

	top := regexp.MustCompile(`(?m)^## (v\S+)`).FindStringSubmatch(repoFile(t, "CHANGELOG.md"))
	require.NotNil(t, top, "CHANGELOG.md has a release entry")
	assert.Equal(t, v, top[1], "CHANGELOG.md's top entry")

	module := regexp.MustCompile(`github\.com/otel-sentry/sentryexporter (v\d\S*)`)
	manifest := repoFile(t, "testdata/ocb-user/manifest.yaml")
	assert.Equal(t, []string{v}, allMatches(module, manifest), "the user's manifest")
	readme := repoFile(t, "README.md")
	named := allMatches(module, readme)
	require.NotEmpty(t, named, "the README names the module's version")
	for _, got := range named {
		assert.Equal(t, v, got, "a version of the module the README names")
	}
	assert.Contains(t, readme, "Version "+v, "the README's install section")
}

// TestReadmeShowsTheUserManifest: the README's install section is the
// manifest make ocb-user builds, its comment lines left out, verbatim.
func TestReadmeShowsTheUserManifest(t *testing.T) {
	var lines []string
	for l := range strings.Lines(repoFile(t, "testdata/ocb-user/manifest.yaml")) {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	assert.Contains(t, repoFile(t, "README.md"), "```yaml\n"+strings.Join(lines, "")+"```\n")
}
