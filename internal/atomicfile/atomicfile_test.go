package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteJSONReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	require.NoError(t, WriteJSON(path, map[string]int{"spans": 1}))
	require.NoError(t, WriteJSON(path, map[string]int{"spans": 2}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"spans":2}`, string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
	assert.Error(t, WriteJSON(filepath.Join(dir, "missing", "x.json"), 1), "a folder that does not exist")
}
