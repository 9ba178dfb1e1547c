// Command otlpgen sends realistic OTLP/HTTP traffic (traces, logs and metrics, protobuf) to a
// collector: traces of an http.server root span with db and http.client children from a
// few services, some failing with an `exception` span event (Go, Java and Python stack
// traces), and logs at various severities carrying trace and span ids, some with
// exception.* attributes, and metrics of every OTLP kind as an SDK exports them
// (cumulative; metrics.go). It prints the totals at the end.
//
//	otlpgen --endpoint 127.0.0.1:4318 --duration 60s --rate 2000 --services 3
//	otlpgen --rate 0 --workers 8 --batch 1000     # as fast as the collector takes it
//	otlpgen --spans-per-trace 10 --signals traces # request-shaped traces of 10 spans only (make compare)
//	otlpgen --signals logs --rate 20000           # logs only, 20,000 records/s
//	otlpgen --seed 7 --timeline-file gen.tl       # repeatable traces; what was delivered, second by second
//	otlpgen --metrics-interval 1s                 # and every service's metrics each second
//	otlpgen --signals metrics --rate 20000        # metrics only, 20,000 data points/s
//	otlpgen --large --batch 84 --rate 300         # items near Relay's limits (make partition's large cases)
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
	"math"
	"net"
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
	endpoint        string
	duration        time.Duration
	rate            float64
	services        int
	logsPerTrace    int
	exceptionRatio  float64
	workers         int
	batch           int
	gzip            bool
	spansPerTrace   int
	signals         string
	timeout         time.Duration
	summaryFile     string
	timelineFile    string
	seed            uint64
	exceptionOnSpan bool
	quiet           bool
	metricsInterval time.Duration
	metricStreams   int
	large           bool
	profilesEvery   time.Duration
	profileServices int
	profilesPerReq  int
	basicAuth       string // user:password for the receiver's basicauth; "" sends none
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
	fs.StringVar(&o.basicAuth, "basic-auth", "", "user:password sent with every request (HTTP basic auth), for a receiver behind an auth extension such as basicauth")
	fs.IntVar(&o.spansPerTrace, "spans-per-trace", 0, "make every trace this long (>= 3: server root, db and http.client children, from 4 on an internal span); 0: 3 or 4 spans")
	fs.StringVar(&o.signals, "signals", "both", "what to send: traces, logs, both, metrics or profiles; with logs alone --rate counts log records, with metrics alone data points, with profiles alone profile samples (each export 5 s of every service's CPU samples, its windows one after another)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.StringVar(&o.summaryFile, "summary-file", "", "also write the totals as JSON to this file")
	fs.StringVar(&o.timelineFile, "timeline-file", "", "also write one line per second of the wall clock (Unix seconds) to this file: requests answered, spans, logs and exceptions delivered, and what failed (columns named in its first line)")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the generated traces (worker w uses seed + w·7919); 0: from the clock")
	fs.BoolVar(&o.exceptionOnSpan, "exception-log-on-span", false, "log each exception with the span id of the span that records it, so that the exporter merges the two into one error event (by default the log names the db span: two events)")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the final totals")
	fs.DurationVar(&o.metricsInterval, "metrics-interval", 0, "also export every service's metrics (cumulative, all six OTLP kinds) this often, and once at the end, as an SDK's periodic reader does; 0: no metrics")
	fs.IntVar(&o.metricStreams, "metric-streams", 2, "attribute sets per instrument and service (with --signals metrics, per worker)")
	fs.DurationVar(&o.profilesEvery, "profiles-interval", 0, "also export one CPU profile per service this often, and once at the end, as the OpenTelemetry eBPF profiler does (profiles.go); 0: no profiles")
	fs.IntVar(&o.profilesPerReq, "profiles-per-request", 0, "with --profiles-interval, put this many services' profiles in one request, as a node's profiler sends its processes together (0: all of them; 1 with --large)")
	fs.IntVar(&o.profileServices, "profile-services", 0, "with --profiles-interval, only the first this many services profile (0: all)")
	fs.BoolVar(&o.large, "large", false, "items near Relay's limits, one service per request (large.go): 16 kB log bodies, 48 KiB stack traces, error events near 1 MB")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.workers < 1 || o.batch < 1 || o.duration <= 0 || o.rate < 0 {
		return errors.New("--workers, --batch and --duration must be positive and --rate not negative")
	}
	if o.spansPerTrace != 0 && o.spansPerTrace < 3 {
		return errors.New("--spans-per-trace must be 0 or at least 3")
	}
	if o.signals != "traces" && o.signals != "logs" && o.signals != "both" && o.signals != "metrics" && o.signals != "profiles" {
		return errors.New("--signals must be traces, logs, both, metrics or profiles")
	}
	if o.metricsInterval < 0 || o.metricStreams < 1 || o.profilesEvery < 0 {
		return errors.New("--metrics-interval and --profiles-interval must not be negative and --metric-streams must be positive")
	}
	if o.signals == "logs" && o.logsPerTrace < 1 {
		return errors.New("--signals logs needs --logs-per-trace of at least 1")
	}
	if o.basicAuth != "" && !strings.Contains(o.basicAuth, ":") {
		return errors.New("--basic-auth must be user:password") // never echo what was given: it may be a password
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
			// Below the receiver's idle timeout (confighttp's default is 1 min), so
			// this side closes an idle connection first. At 90 s the receiver
			// closed it, and a POST written onto it in that instant failed with
			// EOF: net/http does not replay a POST. (The likely cause of the one
			// "traces network error" that failed make partition in CI, 2026-12-03.)
			IdleConnTimeout: 30 * time.Second,
		},
	}
	s := &sender{
		opts: o, client: client, tracesURL: base + "/v1/traces", logsURL: base + "/v1/logs", metricsURL: base + "/v1/metrics",
		profilesURL: base + "/v1development/profiles",
	}
	if o.timelineFile != "" {
		s.timeline = map[int64]*genBucket{}
	}
	lim := newLimiter(o.rate, time.Now())

	start := time.Now()
	if !o.quiet {
		fmt.Printf("otlpgen: %s for %s, rate=%s spans/s, %d workers, batch %d, %d services, %d logs/trace, exception ratio %.3f\n",
			base, o.duration, rateString(o.rate), o.workers, o.batch, o.services, o.logsPerTrace, o.exceptionRatio)
	}
	seed := o.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	var wg sync.WaitGroup
	if o.metricsInterval > 0 && o.signals != "metrics" {
		wg.Go(func() {
			s.runMetricsEvery(ctx, newMeter(seed, o.services, o.metricStreams, 0, start), o.metricsInterval)
		})
	}
	var recent *recentSpans
	if o.profilesEvery > 0 {
		recent = newRecentSpans()
		n := o.services
		if o.profileServices > 0 {
			n = min(n, o.profileServices)
		}
		p := newProfiler(seed, n, recent, o.large)
		if o.profilesPerReq > 0 {
			p.perRequest = o.profilesPerReq
		}
		wg.Go(func() { s.runProfilesEvery(ctx, p, o.profilesEvery) })
	}
	for w := range o.workers {
		if o.signals == "profiles" {
			wg.Go(func() {
				s.profilesAtRate(ctx, lim, newProfiler(seed+uint64(w)*7919, o.services, newRecentSpans(), o.large))
			})
			continue
		}
		if o.signals == "metrics" {
			wg.Go(func() {
				s.metricsAtRate(ctx, lim, newMeter(seed+uint64(w)*7919, o.services, o.metricStreams, w, start))
			})
			continue
		}
		wg.Go(func() {
			g := newGenerator(seed+uint64(w)*7919, o.services, o.logsPerTrace, o.exceptionRatio)
			g.spansPerTrace = o.spansPerTrace
			g.exceptionLogOnSpan = o.exceptionOnSpan
			g.recent = recent
			next := g.batch
			if o.large {
				next = newLargeGen(g).batch
			}
			logsOnly := o.signals == "logs"
			minSpans := o.batch
			if logsOnly { // --batch counts log records: about logsPerTrace of them per trace
				minSpans = max(1, o.batch*max(g.spansPerTrace, 3)/o.logsPerTrace)
			}
			for ctx.Err() == nil {
				td, ld, c := next(minSpans, time.Now())
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
		if err := os.WriteFile(o.summaryFile, append(b, '\n'), 0o600); err != nil {
			return err
		}
	}
	if o.timelineFile != "" {
		if err := os.WriteFile(o.timelineFile, s.timelineText(), 0o600); err != nil {
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
	opts                           options
	client                         *http.Client
	tracesURL, logsURL, metricsURL string
	profilesURL                    string
	metricTotals
	profileTotals

	traces, spans, logs, exceptions           atomic.Int64
	requests, bytes                           atomic.Int64
	rejectedSpans, rejectedLogs               atomic.Int64
	failedSpans, failedLogs, failedExceptions atomic.Int64

	mu       sync.Mutex
	failures map[string]int64 // "traces 503", "logs network error", "traces timeout"…
	// slowest is the longest a request waited for its answer.
	slowest   time.Duration
	byService map[string]ServiceTotals
	// timeline is what each second saw (--timeline-file); nil without it.
	timeline map[int64]*genBucket
}

// genBucket is one second of --timeline-file.
type genBucket struct {
	requests, spans, logs, exceptions       int64
	failedRequests, failedSpans, failedLogs int64
}

// genTimelineHeader names the columns of --timeline-file. A request is counted
// in the second its answer came: spans, logs and exceptions that the
// collector accepted, and the requests and items it did not (failed_*).
const genTimelineHeader = "# sec requests spans logs exceptions failed_requests failed_spans failed_logs"

// note adds a request's outcome to the timeline's current second.
func (s *sender) note(now time.Time, ok bool, spans, logs, exceptions int) {
	if s.timeline == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.timeline[now.Unix()]
	if b == nil {
		b = &genBucket{}
		s.timeline[now.Unix()] = b
	}
	b.requests++
	if ok {
		b.spans += int64(spans)
		b.logs += int64(logs)
		b.exceptions += int64(exceptions)
		return
	}
	b.failedRequests++
	b.failedSpans += int64(spans)
	b.failedLogs += int64(logs)
}

// timelineText renders the timeline: the header, then one line per second
// from the first to the last, none left out.
func (s *sender) timelineText() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString(genTimelineHeader + "\n")
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for sec := range s.timeline {
		first, last = min(first, sec), max(last, sec)
	}
	for sec := first; sec <= last; sec++ {
		x := s.timeline[sec]
		if x == nil {
			x = &genBucket{}
		}
		fmt.Fprintf(&b, "%d %d %d %d %d %d %d %d\n", sec, x.requests, x.spans, x.logs, x.exceptions, x.failedRequests, x.failedSpans, x.failedLogs)
	}
	return []byte(b.String())
}

// Totals are the final figures.
type Totals struct {
	Seconds       float64 `json:"seconds"`
	Traces        int64   `json:"traces"`
	Spans         int64   `json:"spans"`
	Logs          int64   `json:"logs"`
	Exceptions    int64   `json:"exceptions"`
	Requests      int64   `json:"requests"`
	Bytes         int64   `json:"bytes"`
	RejectedSpans int64   `json:"rejected_spans"`
	RejectedLogs  int64   `json:"rejected_logs"`
	// FailedSpans, FailedLogs and FailedExceptions are what the requests that
	// failed (HTTPErrors) carried: offered, never accepted.
	FailedSpans      int64 `json:"failed_spans"`
	FailedLogs       int64 `json:"failed_logs"`
	FailedExceptions int64 `json:"failed_exceptions"`
	// MetricPoints are the metric data points delivered, and Rejected and Failed
	// those refused in a partial success or by a failed request.
	MetricPoints int64 `json:"metric_points"`
	// TraceMetricItems are the trace metric items the delivered points become in Sentry
	// (docs/mapping.md#metrics--trace-metrics): what the exporter stores or counts in category trace_metric.
	TraceMetricItems     int64 `json:"trace_metric_items"`
	RejectedMetricPoints int64 `json:"rejected_metric_points"`
	FailedMetricPoints   int64 `json:"failed_metric_points"`
	// Profiles and ProfileSamples are the OTLP profiles and sample timestamps delivered;
	// ProfileChunks, ProfileChunkSamples and ProfileDurationMs what the exporter makes of
	// them (docs/mapping.md#profiles): profile_chunk items, the samples they carry, and
	// their profile_duration in milliseconds.
	Profiles            int64            `json:"profiles"`
	ProfileSamples      int64            `json:"profile_samples"`
	ProfileChunks       int64            `json:"profile_chunks"`
	ProfileChunkSamples int64            `json:"profile_chunk_samples"`
	ProfileDurationMs   int64            `json:"profile_duration_ms"`
	RejectedProfiles    int64            `json:"rejected_profiles"`
	FailedProfiles      int64            `json:"failed_profiles"`
	HTTPErrors          map[string]int64 `json:"http_errors"`
	// SlowestRequestMS is the longest any request waited for its answer, failed ones included.
	SlowestRequestMS int64   `json:"slowest_request_ms"`
	SpansPerSecond   float64 `json:"spans_per_second"`
	// ByService is what was delivered for each service.name.
	ByService map[string]ServiceTotals `json:"by_service"`
}

// ServiceTotals is what was delivered for one service: spans, logs,
// exceptions (each one a Sentry error event, from a span event or a log) and
// metric data points.
type ServiceTotals struct {
	Spans        int64 `json:"spans"`
	Logs         int64 `json:"logs"`
	Exceptions   int64 `json:"exceptions"`
	MetricPoints int64 `json:"metric_points"`
	// TraceMetricItems are the trace metric items its points become.
	TraceMetricItems int64 `json:"trace_metric_items"`
	// ProfileChunks and ProfileChunkSamples are the profile_chunk items its profiles
	// become, and the samples they carry.
	ProfileChunks       int64 `json:"profile_chunks"`
	ProfileChunkSamples int64 `json:"profile_chunk_samples"`
}

func (t Totals) failedRequests() int64 {
	var n int64
	for _, v := range t.HTTPErrors {
		n += v
	}
	return n
}

// fail counts one failed request of kind; it reports whether it is the
// first of its kind.
func (s *sender) fail(kind string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[string]int64{}
	}
	s.failures[kind]++
	return s.failures[kind] == 1
}

// failNetwork counts a request that got no answer: "timeout" when the
// client's --timeout ran out, "network error" otherwise. The first of each
// is written to stderr with its error, so a failed check says what happened.
func (s *sender) failNetwork(kind string, err error) {
	what := kind + " network error"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		what = kind + " timeout"
	}
	if s.fail(what) {
		fmt.Fprintf(os.Stderr, "otlpgen: %s: %v\n", what, err)
	}
}

// waited keeps the longest a request has waited for its answer.
func (s *sender) waited(d time.Duration) {
	s.mu.Lock()
	s.slowest = max(s.slowest, d)
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
	rb, ok := s.post(ctx, "traces", s.tracesURL, tb)
	s.note(time.Now(), ok, c.spans, 0, c.spanExceptions)
	if !ok {
		s.failedSpans.Add(int64(c.spans))
		s.failedExceptions.Add(int64(c.spanExceptions))
	} else {
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
	rb, ok := s.post(ctx, "logs", s.logsURL, lb)
	s.note(time.Now(), ok, 0, c.logs, c.exceptions-c.spanExceptions)
	if !ok {
		s.failedLogs.Add(int64(c.logs))
		s.failedExceptions.Add(int64(c.exceptions - c.spanExceptions))
	} else {
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
	slowest := s.slowest
	s.mu.Unlock()
	if fails == nil {
		fails = map[string]int64{}
	}
	t := Totals{
		Seconds:              d.Seconds(),
		Traces:               s.traces.Load(),
		Spans:                s.spans.Load(),
		Logs:                 s.logs.Load(),
		Exceptions:           s.exceptions.Load(),
		Requests:             s.requests.Load(),
		Bytes:                s.bytes.Load(),
		RejectedSpans:        s.rejectedSpans.Load(),
		RejectedLogs:         s.rejectedLogs.Load(),
		FailedSpans:          s.failedSpans.Load(),
		FailedLogs:           s.failedLogs.Load(),
		FailedExceptions:     s.failedExceptions.Load(),
		MetricPoints:         s.metricPoints.Load(),
		TraceMetricItems:     s.traceMetricItems.Load(),
		RejectedMetricPoints: s.rejectedMetricPoints.Load(),
		FailedMetricPoints:   s.failedMetricPoints.Load(),
		Profiles:             s.profiles.Load(),
		ProfileSamples:       s.profileSamples.Load(),
		ProfileChunks:        s.profileChunks.Load(),
		ProfileChunkSamples:  s.profileChunkSamples.Load(),
		ProfileDurationMs:    s.profileDurationMs.Load(),
		RejectedProfiles:     s.rejectedProfiles.Load(),
		FailedProfiles:       s.failedProfiles.Load(),
		HTTPErrors:           fails,
		SlowestRequestMS:     slowest.Milliseconds(),
		ByService:            byService,
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
	fmt.Fprintf(w, "otlpgen totals: %.1fs traces=%d spans=%d (%.0f/s) logs=%d exceptions=%d metric_points=%d profiles=%d profile_chunks=%d requests=%d bytes=%d rejected_spans=%d rejected_logs=%d rejected_metric_points=%d slowest_request_ms=%d http_errors=",
		t.Seconds, t.Traces, t.Spans, t.SpansPerSecond, t.Logs, t.Exceptions, t.MetricPoints, t.Profiles, t.ProfileChunks, t.Requests, t.Bytes, t.RejectedSpans, t.RejectedLogs, t.RejectedMetricPoints, t.SlowestRequestMS)
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
	if user, password, ok := strings.Cut(s.opts.basicAuth, ":"); ok {
		req.SetBasicAuth(user, password)
	}
	s.requests.Add(1)
	s.bytes.Add(int64(len(body)))
	start := time.Now()
	resp, err := s.client.Do(req)
	s.waited(time.Since(start))
	if err != nil {
		s.failNetwork(kind, err)
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
