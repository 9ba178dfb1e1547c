//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package inlinehttp

import "syscall"

const supported = true

// peekEmpty reports whether the socket fd has nothing to read and is still
// open: a non-blocking peek that would block.
func peekEmpty(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}
