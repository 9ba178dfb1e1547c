package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/otel-sentry/sentryexporter/cmd/internal/selfsigned"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// runHugeHeaders serves like a broken or hostile proxy in front of Sentry:
// it reads every request whole and answers it 200 with one header of size
// bytes (written in chunks, so the sink holds none of it), then keeps the
// connection for the next request. It speaks raw HTTP/1.1 over TCP, or with
// certFile raw HTTP/2 frames over TLS (a self-signed certificate written
// there; HTTP/2 only), writes addrFile, and serves until SIGINT or SIGTERM,
// then prints how many requests it answered.
func runHugeHeaders(listen, addrFile, certFile string, size int) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	serve := serveHugeHeaders
	scheme := "http"
	if certFile != "" {
		cfg, err := selfsigned.Config(certFile)
		if err != nil {
			ln.Close()
			return err
		}
		cfg.NextProtos = []string{"h2"}
		serve = func(ctx context.Context, c net.Conn, size int, answered *atomic.Int64) {
			serveHugeHeadersHTTP2(ctx, tls.Server(c, cfg), size, answered)
		}
		scheme = "https"
	}
	addr := ln.Addr().String()
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(addr+"\n"), 0o600); err != nil {
			ln.Close()
			return err
		}
	}
	fmt.Printf("sentrysink: answering every request with %d bytes of headers on %s://%s\n", size, scheme, addr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var answered atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serve(ctx, c, size, &answered) })
		}
	})
	<-ctx.Done()
	ln.Close()
	wg.Wait()
	fmt.Printf("sentrysink: final answered=%d\n", answered.Load())
	return nil
}

// hugePadding is what a huge header's value is written of.
var hugePadding = bytes.Repeat([]byte("a"), 64<<10)

// serveHugeHeaders answers the requests on c until either side ends it.
func serveHugeHeaders(ctx context.Context, c net.Conn, size int, answered *atomic.Int64) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Pad: "); err != nil {
			return
		}
		for n := size; n > 0; n -= len(hugePadding) {
			if _, err := c.Write(hugePadding[:min(n, len(hugePadding))]); err != nil {
				return
			}
		}
		if _, err := io.WriteString(c, "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
			return
		}
		answered.Add(1)
	}
}

// serveHugeHeadersHTTP2 answers the requests on the HTTP/2 connection c:
// each a 200 with one header of size bytes, in CONTINUATION frames written
// as they go (sendtest.ServeHTTP2), then a body of 2 bytes.
func serveHugeHeadersHTTP2(ctx context.Context, c *tls.Conn, size int, answered *atomic.Int64) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if c.HandshakeContext(ctx) != nil || c.ConnectionState().NegotiatedProtocol != "h2" {
		c.Close()
		return
	}
	sendtest.ServeHTTP2(c, func(s *sendtest.HTTP2Stream) {
		if s.WriteHeaders(http.StatusOK, "x-pad", size, 2, false) != nil {
			return
		}
		if _, err := s.WriteData(2); err == nil {
			answered.Add(1)
		}
	}, nil)
}
