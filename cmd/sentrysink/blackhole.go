package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// runBlackhole listens on the host of listen (port 0: any free port) but never
// accepts, and fills the accept queue (a backlog of 0 holds one connection):
// from then on Linux drops every SYN, so a connect never completes, as with a
// black-holed egress. It writes the address to addrFile and holds until
// SIGINT or SIGTERM.
func runBlackhole(listen, addrFile string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host).To4()
	if ip == nil {
		return fmt.Errorf("--blackhole needs an IPv4 --listen address, got %q", listen)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	err = syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte(ip)})
	if err != nil {
		return err
	}
	err = syscall.Listen(fd, 0)
	if err != nil {
		return err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(ip.String(), strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	full := false
	for range 16 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			full = true
			break
		}
		defer c.Close()
	}
	if !full {
		return fmt.Errorf("the accept queue of %s could not be filled", addr)
	}
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(addr+"\n"), 0o600); err != nil {
			return err
		}
	}
	fmt.Printf("sentrysink: black hole on %s (connects never complete)\n", addr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
