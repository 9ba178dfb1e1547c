//go:build !unix

package cputime

import "time"

// Process is 0: only unix systems say what CPU time the process used.
func Process() time.Duration { return 0 }
