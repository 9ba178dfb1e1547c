package sentryexporter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// The servers below each play one network fault on 127.0.0.1, for the fault
// tests. Each returns the URL prefix a DSN is built on and a channel that is
// closed once the fault has been met (a connection or a query arrived).

// signal closes ch once.
type signal struct {
	once sync.Once
	ch   chan struct{}
}

func newSignal() *signal             { return &signal{ch: make(chan struct{})} }
func (s *signal) fire()              { s.once.Do(func() { close(s.ch) }) }
func (s *signal) C() <-chan struct{} { return s.ch }

// blackhole accepts connections and reads whatever comes, never writing a
// byte: over http an accepted request that is never answered, over https a
// TLS handshake that never finishes.
func blackhole(t *testing.T) (addr string, met <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := newSignal()
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			s.fire()
			wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String(), s.C()
}

// fullBacklog is a listening socket that never accepts, with its accept
// queue filled: a connect to it never completes (Linux drops the SYN).
func fullBacklog(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 16 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			return addr // the queue is full: connects no longer complete
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	t.Fatal("the listen backlog could not be filled")
	return ""
}

// fakeDNS is a DNS server on 127.0.0.1 (UDP) that answers every query
// NXDOMAIN, or never answers.
func fakeDNS(t *testing.T, nxdomain bool) (addr string, met <-chan struct{}) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	s := newSignal()
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			s.fire()
			if reply := nxdomainReply(buf[:n]); nxdomain && reply != nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	})
	t.Cleanup(func() {
		_ = pc.Close()
		wg.Wait()
	})
	return pc.LocalAddr().String(), s.C()
}

// nxdomainReply answers query q with "no such name": its header and question,
// QR, RA and RCODE 3 set, no other section.
func nxdomainReply(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	r := append([]byte(nil), q[:end]...)
	r[2] = 0x80 | q[2]&0x01 // QR, RD as asked
	r[3] = 0x80 | 3         // RA, NXDOMAIN
	r[4], r[5] = 0, 1
	clear(r[6:12])
	return r
}

// dnsThrough makes a project's HTTP client resolve names through the DNS
// server at addr, and only there: no query leaves the machine. Go's resolver
// keeps a lookup going after its caller gave up (up to its own timeout), so
// the test's end closes the lookups' sockets and refuses new ones.
func dnsThrough(t *testing.T, addr string) sendtest.Middleware {
	var mu sync.Mutex
	var conns []net.Conn
	done := false
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		done = true
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return func(http.RoundTripper) http.RoundTripper {
		dialer := &net.Dialer{Resolver: &net.Resolver{
			PreferGo: true,
			Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
				mu.Lock()
				defer mu.Unlock()
				if done {
					return nil, net.ErrClosed
				}
				var d net.Dialer
				conn, err := d.DialContext(ctx, "udp", addr)
				if err == nil {
					conns = append(conns, conn)
				}
				return conn, err
			},
		}}
		return &http.Transport{DialContext: dialer.DialContext}
	}
}

// answering is an HTTP server whose answer to every envelope is written by body
// after the request was read.
func answering(t *testing.T, body func(w http.ResponseWriter, r *http.Request)) (url string, met <-chan struct{}) {
	s := newSignal()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.fire()
		body(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, s.C()
}

// dribble answers 200, then a body of one byte at a time that never ends.
func dribble(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for {
		if _, err := w.Write([]byte{' '}); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// resetMidBody answers 200 with a body cut short by a TCP reset.
func resetMidBody(w http.ResponseWriter, _ *http.Request) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"id\":\"")
	_ = buf.Flush()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with RST
	}
	_ = conn.Close()
}

// hugeBody answers 200 with a 1 GiB body; written counts what the client let
// through before it hung up.
func hugeBody(written *atomic.Int64) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		w.WriteHeader(http.StatusOK)
		bw := bufio.NewWriterSize(w, 64<<10)
		chunk := make([]byte, 64<<10)
		for written.Load() < 1<<30 {
			n, err := bw.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
}
