package cputime

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestProcessCountsWork: work adds CPU time.
func TestProcessCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no rusage")
	}
	before := Process()
	x := uint64(1)
	for range 50_000_000 {
		x = x*6364136223846793005 + 1
	}
	assert.NotZero(t, x)
	assert.Greater(t, Process(), before)
}
