// Command otlpsink is a minimal OTLP/HTTP receiver for `make compare`: it accepts
// POST /v1/traces and /v1/logs (protobuf, identity/gzip/zstd/deflate), counts requests,
// wire bytes (the body as sent), decoded bytes, spans and log records, answers an empty
// success, and writes its totals as JSON every second, in the keys sentrysink uses for
// the same figures (spans, logs, wire_bytes, uptime_seconds), so one query reads both.
//
//	otlpsink --listen 127.0.0.1:0 --addr-file sink.addr --summary-file sink.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otel-sentry/sentryexporter/cmd/internal/selfsigned"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "otlpsink:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("otlpsink", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:4319", "address to serve /v1/traces and /v1/logs on (port 0 picks a free one, see --addr-file)")
	addrFile := fs.String("addr-file", "", "write the address actually listened on to this file once serving")
	summaryFile := fs.String("summary-file", "", "write the JSON totals to this file every second and on exit")
	tlsCertFile := fs.String("tls-cert-file", "", "serve HTTPS (HTTP/2 and HTTP/1.1) with a self-signed certificate made at start for 127.0.0.1 and localhost, written to this file (PEM) for clients to trust (the exporter's tls::ca_file)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	st := newStats(time.Now())
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: newHandler(st), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	if *tlsCertFile != "" {
		if srv.TLSConfig, err = selfsigned.Config(*tlsCertFile); err != nil {
			ln.Close()
			return err
		}
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()+"\n"), 0o600); err != nil {
			ln.Close()
			return err
		}
	}
	scheme := selfsigned.Scheme(srv)
	fmt.Printf("otlpsink listening on %s://%s/v1/{traces,logs}\n", scheme, ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- selfsigned.Serve(srv, ln) }()
	write := func() {
		if *summaryFile == "" {
			return
		}
		if err := st.snapshot(time.Now()).writeFile(*summaryFile); err != nil {
			fmt.Fprintln(os.Stderr, "otlpsink: summary file:", err)
		}
	}
	write()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			write()
		case err := <-serveErr:
			write()
			return err
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := srv.Shutdown(sctx)
			cancel()
			write()
			t := st.snapshot(time.Now())
			fmt.Printf("otlpsink final: requests=%d spans=%d logs=%d wire_bytes=%d decoded_bytes=%d invalid=%d\n",
				t.Requests, t.Spans, t.Logs, t.WireBytes, t.DecodedBytes, t.Invalid)
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		}
	}
}
