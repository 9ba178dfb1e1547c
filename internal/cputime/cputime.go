//go:build unix

// Package cputime is for benchmarks: the CPU time the process has used, so
// that a benchmark can report CPU per op, which stays comparable on a loaded
// machine where wall time mostly measures waiting for a CPU. It stands beside
// the house: the component must not import it.
package cputime

import (
	"syscall"
	"time"
)

// Process is the user and system CPU time the process has used so far; 0
// where the system does not say.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
