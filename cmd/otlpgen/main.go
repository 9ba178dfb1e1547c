// Command otlpgen sends realistic OTLP/HTTP traffic (traces and logs, protobuf) to a
// collector: traces of an http.server root span with db and http.client children from a
// few services, some failing with an `exception` span event (Go, Java and Python stack
// traces), and logs at various severities carrying trace and span ids, some with
// exception.* attributes. It prints the totals at the end.
//
//	otlpgen --endpoint 127.0.0.1:4318 --duration 60s --rate 2000 --services 3
//	otlpgen --rate 0 --workers 8 --batch 1000     # as fast as the collector takes it
//	otlpgen --spans-per-trace 10 --signals traces # request-shaped traces of 10 spans only (make compare)
//	otlpgen --signals logs --rate 20000           # logs only, 20,000 records/s
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

type options struct {
	endpoint       string
	duration       time.Duration
	rate           float64
	services       int
	logsPerTrace   int
	exceptionRatio float64
	workers        int
	batch          int
	gzip           bool
	spansPerTrace  int
	signals        string
	timeout        time.Duration
	summaryFile    string
	quiet          bool
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "otlpgen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("otlpgen", flag.ContinueOnError)
	fs.StringVar(&o.endpoint, "endpoint", "127.0.0.1:4318", "OTLP/HTTP receiver host:port (or a http:// URL); /v1/traces and /v1/logs are appended")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to send")
	fs.Float64Var(&o.rate, "rate", 1000, "target spans (log records with --signals logs) per second across all workers (0: as fast as possible)")
	fs.IntVar(&o.services, "services", 3, "number of simulated services (checkout/go, inventory/java, payments/python, then numbered copies)")
	fs.IntVar(&o.logsPerTrace, "logs-per-trace", 2, "log records per trace (0: send no logs)")
	fs.Float64Var(&o.exceptionRatio, "exception-ratio", 0.05, "share of traces that fail with an exception event (and an exception log)")
	fs.IntVar(&o.workers, "workers", 4, "concurrent senders")
	fs.IntVar(&o.batch, "batch", 200, "spans per traces request (whole traces, so slightly more)")
	fs.BoolVar(&o.gzip, "gzip", false, "gzip the request bodies")
	fs.IntVar(&o.spansPerTrace, "spans-per-trace", 0, "make every trace this long (>= 3: server root, db and http.client children, from 4 on an internal span); 0: 3 or 4 spans")
	fs.StringVar(&o.signals, "signals", "both", "what to send: traces, logs or both; with logs alone --rate counts log records")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.StringVar(&o.summaryFile, "summary-file", "", "also write the totals as JSON to this file")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the final totals")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.workers < 1 || o.batch < 1 || o.duration <= 0 || o.rate < 0 {
		return errors.New("--workers, --batch and --duration must be positive and --rate not negative")
	}
	if o.spansPerTrace != 0 && o.spansPerTrace < 3 {
		return errors.New("--spans-per-trace must be 0 or at least 3")
	}
	if o.signals != "traces" && o.signals != "logs" && o.signals != "both" {
		return errors.New("--signals must be traces, logs or both")
	}
	if o.signals == "logs" && o.logsPerTrace < 1 {
		return errors.New("--signals logs needs --logs-per-trace of at least 1")
	}
	base := o.endpoint
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	base = strings.TrimRight(base, "/")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()

	client := &http.Client{
		Timeout: o.timeout,
		Transport: &http.Transport{
			MaxIdleConns:        o.workers * 2,
			MaxIdleConnsPerHost: o.workers * 2,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	s := &sender{opts: o, client: client, tracesURL: base + "/v1/traces", logsURL: base + "/v1/logs"}
	lim := newLimiter(o.rate, time.Now())

	start := time.Now()
	if !o.quiet {
		fmt.Printf("otlpgen: %s for %s, rate=%s spans/s, %d workers, batch %d, %d services, %d logs/trace, exception ratio %.3f\n",
			base, o.duration, rateString(o.rate), o.workers, o.batch, o.services, o.logsPerTrace, o.exceptionRatio)
	}
	var wg sync.WaitGroup
	for w := range o.workers {
		wg.Go(func() {
			g := newGenerator(uint64(time.Now().UnixNano())+uint64(w)*7919, o.services, o.logsPerTrace, o.exceptionRatio)
			g.spansPerTrace = o.spansPerTrace
			logsOnly := o.signals == "logs"
			minSpans := o.batch
			if logsOnly { // --batch counts log records: about logsPerTrace of them per trace
				minSpans = max(1, o.batch*max(g.spansPerTrace, 3)/o.logsPerTrace)
			}
			for ctx.Err() == nil {
				td, ld, c := g.batch(minSpans, time.Now())
				n := c.spans
				if logsOnly {
					n = c.logs
				}
				if !lim.wait(ctx, n) {
					return
				}
				s.send(ctx, td, ld, c)
			}
		})
	}
	done := make(chan struct{})
	if !o.quiet {
		go s.progress(done, start)
	}
	wg.Wait()
	close(done)
	tot := s.totals(time.Since(start))
	printTotals(os.Stdout, tot)
	if o.summaryFile != "" {
		b, _ := json.MarshalIndent(tot, "", "  ")
		if err := os.WriteFile(o.summaryFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if tot.Requests > 0 && tot.Requests == tot.failedRequests() {
		return errors.New("every request failed")
	}
	return nil
}

func rateString(r float64) string {
	if r == 0 {
		return "unlimited"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// limiter spreads work over time: each call reserves n units at the target rate.
type limiter struct {
	mu   sync.Mutex
	rate float64
	next time.Time
}

func newLimiter(rate float64, now time.Time) *limiter { return &limiter{rate: rate, next: now} }

// wait blocks until n more units fit the rate. It returns false if ctx ends first.
func (l *limiter) wait(ctx context.Context, n int) bool {
	if l.rate <= 0 {
		return ctx.Err() == nil
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now.Add(-time.Second)) {
		l.next = now.Add(-time.Second) // allow at most a second of catch-up burst
	}
	at := l.next
	l.next = l.next.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	l.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sender POSTs the batches and counts the outcome.
type sender struct {
	opts               options
	client             *http.Client
	tracesURL, logsURL string

	traces, spans, logs, exceptions atomic.Int64
	requests, bytes                 atomic.Int64
	rejectedSpans, rejectedLogs     atomic.Int64

	mu        sync.Mutex
	failures  map[string]int64 // "traces 503", "logs network error"…
	byService map[string]ServiceTotals
}

// Totals are the final figures.
type Totals struct {
	Seconds        float64          `json:"seconds"`
	Traces         int64            `json:"traces"`
	Spans          int64            `json:"spans"`
	Logs           int64            `json:"logs"`
	Exceptions     int64            `json:"exceptions"`
	Requests       int64            `json:"requests"`
	Bytes          int64            `json:"bytes"`
	RejectedSpans  int64            `json:"rejected_spans"`
	RejectedLogs   int64            `json:"rejected_logs"`
	HTTPErrors     map[string]int64 `json:"http_errors"`
	SpansPerSecond float64          `json:"spans_per_second"`
	// ByService is what was delivered for each service.name.
	ByService map[string]ServiceTotals `json:"by_service"`
}

// ServiceTotals is what was delivered for one service: spans, logs, and
// exceptions (each one a Sentry error event, from a span event or a log).
type ServiceTotals struct {
	Spans      int64 `json:"spans"`
	Logs       int64 `json:"logs"`
	Exceptions int64 `json:"exceptions"`
}

func (t Totals) failedRequests() int64 {
	var n int64
	for _, v := range t.HTTPErrors {
		n += v
	}
	return n
}

func (s *sender) fail(kind string) {
	s.mu.Lock()
	if s.failures == nil {
		s.failures = map[string]int64{}
	}
	s.failures[kind]++
	s.mu.Unlock()
}

// delivered adds what a successful request carried for each service: its
// spans and span exceptions for traces, its logs and log exceptions for logs.
func (s *sender) delivered(by map[string]counts, traces bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byService == nil {
		s.byService = map[string]ServiceTotals{}
	}
	for name, c := range by {
		t := s.byService[name]
		if traces {
			t.Spans += int64(c.spans)
			t.Exceptions += int64(c.spanExceptions)
		} else {
			t.Logs += int64(c.logs)
			t.Exceptions += int64(c.exceptions - c.spanExceptions)
		}
		s.byService[name] = t
	}
}

func (s *sender) send(ctx context.Context, td ptrace.Traces, ld plog.Logs, c batchCounts) {
	if s.opts.signals != "logs" {
		s.sendTraces(ctx, td, c)
	}
	if s.opts.signals != "traces" {
		s.sendLogs(ctx, ld, c)
	}
}

func (s *sender) sendTraces(ctx context.Context, td ptrace.Traces, c batchCounts) {
	tb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		s.fail("traces marshal error")
		return
	}
	if rb, ok := s.post(ctx, "traces", s.tracesURL, tb); ok {
		s.traces.Add(int64(c.traces))
		s.spans.Add(int64(c.spans))
		resp := ptraceotlp.NewExportResponse()
		if resp.UnmarshalProto(rb) == nil {
			s.rejectedSpans.Add(resp.PartialSuccess().RejectedSpans())
		}
		// exception span events ride with the spans
		s.exceptions.Add(int64(c.spanExceptions))
		s.delivered(c.byService, true)
	}
}

func (s *sender) sendLogs(ctx context.Context, ld plog.Logs, c batchCounts) {
	if ld.LogRecordCount() == 0 {
		return
	}
	lb, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		s.fail("logs marshal error")
		return
	}
	if rb, ok := s.post(ctx, "logs", s.logsURL, lb); ok {
		s.logs.Add(int64(c.logs))
		s.exceptions.Add(int64(c.exceptions - c.spanExceptions))
		s.delivered(c.byService, false)
		resp := plogotlp.NewExportResponse()
		if resp.UnmarshalProto(rb) == nil {
			s.rejectedLogs.Add(resp.PartialSuccess().RejectedLogRecords())
		}
	}
}

func (s *sender) totals(d time.Duration) Totals {
	s.mu.Lock()
	fails := maps.Clone(s.failures)
	byService := maps.Clone(s.byService)
	s.mu.Unlock()
	if fails == nil {
		fails = map[string]int64{}
	}
	t := Totals{
		Seconds:       d.Seconds(),
		Traces:        s.traces.Load(),
		Spans:         s.spans.Load(),
		Logs:          s.logs.Load(),
		Exceptions:    s.exceptions.Load(),
		Requests:      s.requests.Load(),
		Bytes:         s.bytes.Load(),
		RejectedSpans: s.rejectedSpans.Load(),
		RejectedLogs:  s.rejectedLogs.Load(),
		HTTPErrors:    fails,
		ByService:     byService,
	}
	if t.Seconds > 0 {
		t.SpansPerSecond = float64(t.Spans) / t.Seconds
	}
	return t
}

func (s *sender) progress(done <-chan struct{}, start time.Time) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	var prev int64
	for {
		select {
		case <-done:
			return
		case <-t.C:
			spans := s.spans.Load()
			fmt.Printf("otlpgen: t=%.0fs spans=%d (%.0f/s) logs=%d requests=%d errors=%d\n",
				time.Since(start).Seconds(), spans, float64(spans-prev)/10, s.logs.Load(), s.requests.Load(), s.totals(0).failedRequests())
			prev = spans
		}
	}
}

func printTotals(w io.Writer, t Totals) {
	fmt.Fprintf(w, "otlpgen totals: %.1fs traces=%d spans=%d (%.0f/s) logs=%d exceptions=%d requests=%d bytes=%d rejected_spans=%d rejected_logs=%d http_errors=",
		t.Seconds, t.Traces, t.Spans, t.SpansPerSecond, t.Logs, t.Exceptions, t.Requests, t.Bytes, t.RejectedSpans, t.RejectedLogs)
	if len(t.HTTPErrors) == 0 {
		fmt.Fprintln(w, "0")
		return
	}
	keys := make([]string, 0, len(t.HTTPErrors))
	for k := range t.HTTPErrors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q:%d", k, t.HTTPErrors[k])
	}
	fmt.Fprintf(w, "{%s}\n", strings.Join(parts, ","))
}

// post sends one protobuf body and returns the response body of a 2xx answer.
func (s *sender) post(ctx context.Context, kind, url string, body []byte) ([]byte, bool) {
	var rd io.Reader = bytes.NewReader(body)
	if s.opts.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		_ = zw.Close()
		rd = &b
		body = b.Bytes()
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, url, rd)
	if err != nil {
		s.fail(kind + " " + err.Error())
		return nil, false
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if s.opts.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	s.requests.Add(1)
	s.bytes.Add(int64(len(body)))
	resp, err := s.client.Do(req)
	if err != nil {
		s.fail(kind + " network error")
		return nil, false
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		s.fail(kind + " " + strconv.Itoa(resp.StatusCode))
		return nil, false
	}
	return rb, true
}
