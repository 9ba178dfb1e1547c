// Command sentrysink is a small local Sentry-compatible ingest endpoint for demos, load
// and soak tests of the Sentry exporter. It serves POST /api/<project>/envelope/, checks
// X-Sentry-Auth, decompresses gzip/deflate/zstd bodies, parses and validates every envelope
// strictly with the repository's envelope package (Relay's grammar and default size
// limits), counts what arrived and answers like Relay: 200 {"id":…}, 400/413 with
// {"detail":…} for an invalid envelope, or 429 with X-Sentry-Rate-Limits when told to.
//
//	sentrysink --listen 127.0.0.1:8990 --stats-every 10s --summary-file sink.json
//	sentrysink --delay 50ms --quiet                 # a slow Sentry
//	sentrysink --hang                               # a hung Sentry: reads envelopes, never answers
//	sentrysink --hang-projects 7,9                  # only projects 7 and 9 hang
//	sentrysink --blackhole --addr-file a            # connects never complete (full accept queue)
//	sentrysink --huge-headers 33554432              # every answer a 200 with 32 MiB of headers
//	sentrysink --rate-limit 60::organization        # 429 for everything
//	sentrysink --rate-limit 60:span:key --rate-limit-status 200   # announce on 200
//	sentrysink --old-relay                          # refuses zstd bodies as Relays before zstd did
//	sentrysink --fail-ratio 0.2 --fail-status 503 --seed 1   # a brownout: a random 20 % answered 503
//	sentrysink --chaos --seed 7                     # random resets, 503s, 429s with random limits, 200s
//	sentrysink --hang-for 30s                       # hangs for 30 s from the first request, then heals
//	sentrysink --flap 10s                           # up 10 s, down (hung) 10 s, up 10 s… from the first request
//	sentrysink --timeline-file sink.tl              # one line per second: what was stored and answered
//	sentrysink --record-file sink.jsonl             # one JSON line per stored transaction, span, log, error event
//	sentrysink --print-free-port 3                  # print 3 free loopback ports and exit
//	sentrysink --print-summary sink.json            # render a summary file and exit
//	sentrysink --query sink.json envelopes items.transaction invalid_envelopes
//	sentrysink --print-metrics collector.out        # a collector's console metric export as Prometheus text
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/otel-sentry/sentryexporter/cmd/internal/selfsigned"
	"github.com/otel-sentry/sentryexporter/envelope"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sentrysink:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("sentrysink", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8990", "address to serve POST /api/<project>/envelope/ on (port 0 picks a free one, see --addr-file)")
	addrFile := fs.String("addr-file", "", "write the address actually listened on to this file once serving")
	delay := fs.Duration("delay", 0, "added latency before every answer")
	hang := fs.Bool("hang", false, "read and check every envelope, never answer (until the client gives up or the sink stops): a hung Sentry")
	hangProjects := fs.String("hang-projects", "", "comma-separated project ids that hang as with --hang; the others are answered")
	hugeHeaders := fs.Int("huge-headers", 0, "answer every request 200 with one header of this many bytes, keeping the connection (raw HTTP/1.1; with --tls-cert-file, raw HTTP/2 frames over TLS): a broken or hostile proxy; serves nothing else, writes --addr-file, runs until stopped")
	blackhole := fs.Bool("blackhole", false, "listen on --listen but never accept, with the accept queue filled: connects never complete (a black-holed address); serves nothing, writes --addr-file, runs until stopped")
	rateLimit := fs.String("rate-limit", "", `X-Sentry-Rate-Limits value to enforce, e.g. "60::organization" or "60:error:organization"`)
	rateLimitStatus := fs.Int("rate-limit-status", http.StatusTooManyRequests, "with --rate-limit: 429 rejects the envelopes whose items it covers and accepts the rest, as Relay does; 200 accepts all and announces the limit on each")
	oldRelay := fs.Bool("old-relay", false, "decode Content-Encoding like a Relay without zstd support: zstd bodies are taken for identity and refused with 400")
	failRatio := fs.Float64("fail-ratio", 0, "answer this share of the requests (drawn at random, see --seed) --fail-status instead of storing them: a brownout")
	failStatus := fs.Int("fail-status", http.StatusServiceUnavailable, "with --fail-ratio: the status answered")
	chaos := fs.Bool("chaos", false, "answer at random as TestInvariantUnderChaos does: 10 % connection reset, 10 % 503, 20 % 429 with a random X-Sentry-Rate-Limits and Retry-After: 1, 60 % stored")
	seed := fs.Uint64("seed", 1, "seed of the random answers of --fail-ratio and --chaos")
	hangAt := fs.Duration("hang-at", 0, "with --hang-for: when the hang starts, after the first request")
	hangFor := fs.Duration("hang-for", 0, "hang (hold every request unanswered) for this long from --hang-at after the first request, then heal: held requests are then handled as if they had just arrived (stored and answered), unless their client gave up")
	flap := fs.Duration("flap", 0, "from the first request, alternate up and down (hung, as --hang-for) every this long, up first")
	timelineFile := fs.String("timeline-file", "", "write one line per second of the wall clock to this file: requests, envelopes and items stored, answers by kind, requests held (columns named in its first line)")
	printMetricsFile := fs.String("print-metrics", "", "print a collector's metrics at this path (Prometheus text, or its console reader's JSON: the last export) as Prometheus text lines, and exit")
	quiet := fs.Bool("quiet", false, "do not print one line per accepted envelope")
	statsEvery := fs.Duration("stats-every", 10*time.Second, "print a summary line this often (0: never)")
	summaryFile := fs.String("summary-file", "", "write the JSON totals to this file every second and on exit")
	recordFile := fs.String("record-file", "", "append one JSON line per stored transaction, span, log and error event (ids, names, segment ids) to this file; flushed every 200 ms and on exit")
	printFreePort := fs.Int("print-free-port", 0, "print this many free loopback TCP ports, one a line, and exit")
	printSummaryFile := fs.String("print-summary", "", "print the --summary-file at this path for people, and exit")
	tlsCertFile := fs.String("tls-cert-file", "", "serve HTTPS (HTTP/2 and HTTP/1.1) with a self-signed certificate made at start for 127.0.0.1 and localhost, written to this file (PEM) for clients to trust (the exporter's tls::ca_file)")
	discoveryOrg := fs.String("discovery-org", "", "also serve the management API's key look-up of this organization (GET /api/0/projects/<org>/<slug>/keys/), as routing::discovery asks it: every slug is a project of this sink, numbered from 1001 in the order asked")
	queryFile := fs.String("query", "", "print the values of the dotted keys given as arguments (items.transaction, invalid_envelopes…) of the --summary-file at this path, and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *printFreePort > 0 {
		return printFreePorts(*printFreePort)
	}
	if *printSummaryFile != "" {
		return printSummary(os.Stdout, *printSummaryFile)
	}
	if *queryFile != "" {
		return query(os.Stdout, *queryFile, fs.Args())
	}
	if *printMetricsFile != "" {
		return printMetrics(os.Stdout, *printMetricsFile)
	}
	switch {
	case *failRatio < 0 || *failRatio > 1:
		return fmt.Errorf("--fail-ratio must be between 0 and 1, got %g", *failRatio)
	case *failStatus < 400 || *failStatus > 599 || *failStatus == http.StatusTooManyRequests:
		return fmt.Errorf("--fail-status must be a 4xx or 5xx other than 429 (--rate-limit answers 429s), got %d", *failStatus)
	case *chaos && *failRatio > 0:
		return errors.New("--chaos and --fail-ratio do not go together")
	case *hangAt < 0 || *hangFor < 0 || *flap < 0:
		return errors.New("--hang-at, --hang-for and --flap must not be negative")
	case *hangAt > 0 && *hangFor == 0:
		return errors.New("--hang-at needs --hang-for")
	}
	if *rateLimitStatus != http.StatusTooManyRequests && *rateLimitStatus != http.StatusOK {
		return fmt.Errorf("--rate-limit-status must be 429 or 200, got %d", *rateLimitStatus)
	}

	if *blackhole {
		return runBlackhole(*listen, *addrFile)
	}
	if *hugeHeaders > 0 {
		return runHugeHeaders(*listen, *addrFile, *tlsCertFile, *hugeHeaders)
	}

	out := newLineWriter(os.Stdout)
	defer out.Flush()
	stopping := make(chan struct{})
	cfg := handlerConfig{
		Delay:           *delay,
		Hang:            *hang,
		Stop:            stopping,
		RateLimit:       strings.TrimSpace(*rateLimit),
		RateLimitStatus: *rateLimitStatus,
		Limits:          envelope.RelayDefaults(),
		OldRelay:        *oldRelay,
		Answers:         newAnswerer(*seed, *failRatio, *failStatus, *chaos),
	}
	if *hangFor > 0 || *flap > 0 {
		cfg.Schedule = &schedule{hangAt: *hangAt, hangFor: *hangFor, flap: *flap}
	}
	if !*quiet {
		cfg.Log = out.WriteLine
	}
	var rec *recorder
	if *recordFile != "" {
		var err error
		if rec, err = newRecorder(*recordFile); err != nil {
			return err
		}
		defer rec.Close()
		cfg.Record = rec.record
	}
	for p := range strings.SplitSeq(*hangProjects, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if cfg.HangProjects == nil {
				cfg.HangProjects = map[string]bool{}
			}
			cfg.HangProjects[p] = true
		}
	}
	st := newStats(time.Now())
	var tw *timelineWriter
	if *timelineFile != "" {
		var err error
		if tw, err = newTimelineWriter(*timelineFile); err != nil {
			return err
		}
		defer tw.Close()
		st.tl = newTimeline(time.Now())
	}
	h := newHandler(cfg, st)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	if *tlsCertFile != "" {
		if srv.TLSConfig, err = selfsigned.Config(*tlsCertFile); err != nil {
			ln.Close()
			return err
		}
	}
	addr := ln.Addr().String()
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(addr+"\n"), 0o600); err != nil {
			ln.Close()
			return err
		}
	}
	scheme := selfsigned.Scheme(srv)
	if *discoveryOrg != "" {
		mux := http.NewServeMux()
		mux.Handle("/", h)
		mux.Handle("GET /api/0/projects/{org}/{slug}/keys/", newKeysAPI(*discoveryOrg, scheme, addr))
		srv.Handler = mux
	}
	out.WriteLine(fmt.Appendf(nil, "sentrysink listening on %s://%s/api/<project>/envelope/ (delay=%s hang=%t rate_limit=%q fail_ratio=%g chaos=%t seed=%d hang_at=%s hang_for=%s flap=%s)",
		scheme, addr, *delay, *hang, cfg.RateLimit, *failRatio, *chaos, *seed, *hangAt, *hangFor, *flap))
	out.Flush()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- selfsigned.Serve(srv, ln) }()

	var tick <-chan time.Time
	if *statsEvery > 0 {
		t := time.NewTicker(*statsEvery)
		defer t.Stop()
		tick = t.C
	}
	flush := time.NewTicker(200 * time.Millisecond)
	defer flush.Stop()
	summaryTick := time.NewTicker(time.Second)
	defer summaryTick.Stop()
	writeFile := func(t Totals) {
		if *summaryFile == "" {
			return
		}
		if err := writeSummary(*summaryFile, t); err != nil {
			fmt.Fprintln(os.Stderr, "sentrysink: summary file:", err)
		}
	}
	writeFile(st.snapshot(time.Now()))
	prev := st.snapshot(time.Now())
	report := func(final bool) {
		if final && tw != nil {
			tw.write(st.takeTimeline(time.Time{}))
		}
		cur := st.snapshot(time.Now())
		line := statsLine(cur, prev)
		if final {
			line = "final " + line
		}
		out.WriteLine([]byte(line))
		out.Flush()
		prev = cur
		writeFile(cur)
	}

	for {
		select {
		case now := <-flush.C:
			out.Flush()
			if rec != nil {
				rec.Flush()
			}
			if tw != nil {
				tw.write(st.takeTimeline(now))
			}
		case <-summaryTick.C:
			writeFile(st.snapshot(time.Now()))
		case <-tick:
			report(false)
		case err := <-serveErr:
			report(true)
			return err
		case <-ctx.Done():
			stop()
			close(stopping) // let held requests go
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := srv.Shutdown(sctx)
			cancel()
			report(true)
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		}
	}
}

// printFreePorts binds n loopback ports at once (so they differ), prints them and frees them.
func printFreePorts(n int) error {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		lns = append(lns, ln)
	}
	for _, ln := range lns {
		fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	}
	return nil
}

// lineWriter buffers output lines from concurrent requests; the main loop flushes it.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newLineWriter(f *os.File) *lineWriter {
	return &lineWriter{w: bufio.NewWriterSize(f, 64<<10)}
}

func (l *lineWriter) WriteLine(b []byte) {
	l.mu.Lock()
	// A bufio.Writer keeps its first error and stops writing; the lines are a
	// best-effort log of what arrived (the records are what the scripts check).
	_, _ = l.w.Write(b)
	_ = l.w.WriteByte('\n')
	l.mu.Unlock()
}

func (l *lineWriter) Flush() {
	l.mu.Lock()
	l.w.Flush()
	l.mu.Unlock()
}
