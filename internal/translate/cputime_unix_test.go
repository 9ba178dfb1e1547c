//go:build unix

package translate

import (
	"syscall"
	"time"
)

// cpuNow is the CPU time (user + system) the process has used. Benchmarks
// report it per op so that figures stay comparable on a loaded machine, where
// wall time mostly measures waiting for a CPU.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
