//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package inlinehttp

// Elsewhere no non-blocking peek is known to this package: New returns nil
// and net/http's transport serves every request.
const supported = false

func peekEmpty(uintptr) bool { return false }
