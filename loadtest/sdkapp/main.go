// Command sdkapp simulates instrumented services with the real OpenTelemetry Go SDK at
// its defaults, for make sdktraffic and make scaleout (docs/sdk-traffic.md).
//
// Each service has its own resource (service.name), TracerProvider and LoggerProvider:
// the default batch span processor (export every 5 s or every 512 spans) over
// otlptracehttp, and the default batch log processor over otlploghttp, as a production
// service would run them. A request is a SERVER span with nine sequential CLIENT child
// spans (DB queries) of ~10 ms each, so the batch processor splits the requests in flight
// across its exports: children in one OTLP request, their root in a later one. Every
// --exception-every-th request of each service fails: one query's error is recorded on its span
// (span.RecordError) and logged with the span's context and exception.* attributes, as
// instrumented code does. Every --slow-every-th request of each service holds its root open for
// --slow-tail after its last child (a streaming response): its children are exported
// seconds before its root.
//
// It sends --rate requests/s for --duration, waits for the requests in flight, shuts the
// providers down (which flushes them) and writes --summary-file: per service the
// requests, spans, logs and exceptions, what the SDK's exporters reported as exported or
// failed, and every request (trace id, root and child span ids, the exception, the log
// bodies) for sdkcheck. Every --async-every-th request of each service hands a job to
// the next service, processed --async-delay after the request ended: a CONSUMER span
// whose parent is the request's root (remote), so the trace crosses services and its head
// is exported first. With --profiles-endpoint the services also run in containers and
// are profiled as the eBPF profiler does (profiles.go). It stops by itself, within --duration + --slow-tail +
// --async-delay + 40 s.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sdkapp:", err)
		os.Exit(1)
	}
}

type options struct {
	endpoint       string
	services       int
	rate           float64
	duration       time.Duration
	children       int
	childDuration  time.Duration
	exceptionEvery int
	slowEvery      int
	slowTail       time.Duration
	asyncEvery     int
	asyncDelay     time.Duration
	summaryFile    string
	// profilesEndpoint: host:port (OTLP/HTTP) the services' profiles go to (profiles.go); "" for none.
	profilesEndpoint string
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("sdkapp", flag.ContinueOnError)
	fs.StringVar(&o.endpoint, "endpoint", "127.0.0.1:4318", "OTLP/HTTP host:port of the collector")
	fs.IntVar(&o.services, "services", 3, "number of services (distinct service.name, one TracerProvider and LoggerProvider each)")
	fs.Float64Var(&o.rate, "rate", 100, "requests per second, over all services")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long requests are started")
	fs.IntVar(&o.children, "children", 9, "sequential child spans per request")
	fs.DurationVar(&o.childDuration, "child-duration", 10*time.Millisecond, "duration of each child span")
	fs.IntVar(&o.exceptionEvery, "exception-every", 20, "every Nth request of each service fails (0: none)")
	fs.IntVar(&o.slowEvery, "slow-every", 0, "every Nth request of each service holds its root open for --slow-tail after its children (0: none)")
	fs.DurationVar(&o.slowTail, "slow-tail", 4*time.Second, "how long a slow request's root outlives its last child")
	fs.IntVar(&o.asyncEvery, "async-every", 0, "every Nth request of each service hands work to the next service, which processes it --async-delay after the request ended: a CONSUMER span with the request's root as remote parent, and its own children (0: none)")
	fs.DurationVar(&o.asyncDelay, "async-delay", 7*time.Second, "how long after its request a handed-over job is processed (longer than the SDK's 5 s export interval, so the trace's head is exported first)")
	fs.StringVar(&o.summaryFile, "summary-file", "", "write what was sent to this JSON file")
	fs.StringVar(&o.profilesEndpoint, "profiles-endpoint", "", "OTLP/HTTP host:port to send the services' eBPF-shaped profiles to every second; each service's resource then carries its container.id (\"\": no profiles)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.services < 1 || o.services > len(serviceNames) || o.rate <= 0 || o.children < 1 {
		return fmt.Errorf("--services must be 1..%d, --rate > 0, --children >= 1", len(serviceNames))
	}
	return newApp(o).run()
}

var serviceNames = []string{"checkout", "inventory", "payments", "shipping", "search", "accounts", "billing", "catalog", "pricing", "reviews", "orders", "users"}

// service is one instrumented service: its providers and what it sent.
type service struct {
	name   string
	tp     *sdktrace.TracerProvider
	lp     *sdklog.LoggerProvider
	tracer trace.Tracer
	logger otellog.Logger
	spans  *countingSpanExporter
	logs   *countingLogExporter
}

type app struct {
	o        options
	services []*service

	mu       sync.Mutex
	requests []request
	// jobs are the handed-over jobs still to run (--async-every).
	jobs sync.WaitGroup
	// profilesExported and profilesFailed count the OTLP profiles sent (--profiles-endpoint).
	profilesExported, profilesFailed atomic.Int64
}

// request is what one request sent, as sdkcheck reads it.
type request struct {
	Service  string   `json:"service"`
	Name     string   `json:"name"`
	TraceID  string   `json:"trace_id"`
	Root     string   `json:"root"`
	Children []string `json:"children"`
	Slow     bool     `json:"slow,omitempty"`
	// Head is, for a job handed over by another service's request, the name of that
	// request: the trace's head segment, whose name the job's DSC should carry.
	Head        string     `json:"head,omitempty"`
	HeadService string     `json:"head_service,omitempty"`
	Exception   *exception `json:"exception,omitempty"`
	Logs        []string   `json:"logs"`
}

type exception struct {
	SpanID  string `json:"span_id"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

func newApp(o options) *app {
	return &app{o: o}
}

func (a *app) run() error {
	ctx := context.Background()
	for i := range a.o.services {
		s, err := a.newService(ctx, serviceNames[i])
		if err != nil {
			return err
		}
		a.services = append(a.services, s)
	}
	started := time.Now()
	fmt.Fprintf(os.Stderr, "sdkapp: %d services, %.0f requests/s for %s to http://%s (each request 1 server span + %d children of %s)\n",
		len(a.services), a.o.rate, a.o.duration, a.o.endpoint, a.o.children, a.o.childDuration)

	stopProfiles, profilesDone := make(chan struct{}), make(chan struct{})
	if a.o.profilesEndpoint != "" {
		go a.profileLoop(stopProfiles, profilesDone)
	} else {
		close(profilesDone)
	}
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / a.o.rate)
	n := 0
	for next := started; time.Since(started) < a.o.duration; next = next.Add(interval) {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		n++
		s := a.services[n%len(a.services)]
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			a.serve(s, n)
		}(n)
	}
	wg.Wait()
	a.jobs.Wait()
	close(stopProfiles)
	<-profilesDone
	fmt.Fprintf(os.Stderr, "sdkapp: %d requests in %s; flushing\n", n, time.Since(started).Round(time.Millisecond))

	// Shutdown flushes what the batch processors hold; bounded so that the program stops
	// by itself even when the collector is gone.
	var errs []string
	for _, s := range a.services {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := s.tp.Shutdown(sctx); err != nil {
			errs = append(errs, fmt.Sprintf("%s traces: %v", s.name, err))
		}
		if err := s.lp.Shutdown(sctx); err != nil {
			errs = append(errs, fmt.Sprintf("%s logs: %v", s.name, err))
		}
		cancel()
	}
	if err := a.writeSummary(errs); err != nil {
		return err
	}
	if len(errs) > 0 {
		fmt.Fprintln(os.Stderr, "sdkapp: shutdown:", errs)
	}
	return nil
}

func (a *app) newService(ctx context.Context, name string) (*service, error) {
	attrs := []attribute.KeyValue{
		attribute.String("service.name", name),
		attribute.String("service.version", "1.4.2"),
		attribute.String("deployment.environment.name", "loadtest"),
	}
	if a.o.profilesEndpoint != "" {
		attrs = append(attrs, attribute.String("container.id", containerID(name)))
	}
	res, err := resource.Merge(resource.Empty(), resource.NewSchemaless(attrs...))
	if err != nil {
		return nil, err
	}
	te, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(a.o.endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		return nil, err
	}
	le, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(a.o.endpoint), otlploghttp.WithInsecure())
	if err != nil {
		return nil, err
	}
	s := &service{name: name, spans: &countingSpanExporter{SpanExporter: te}, logs: &countingLogExporter{Exporter: le}}
	// The SDKs' defaults: the batch processors with no options.
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(s.spans))
	s.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(s.logs)))
	s.tracer = s.tp.Tracer("github.com/otel-sentry/sentryexporter/loadtest/sdkapp")
	s.logger = s.lp.Logger("github.com/otel-sentry/sentryexporter/loadtest/sdkapp")
	return s, nil
}

// queryError is the error a failing query returns.
type queryError struct {
	Query   string
	Request int
}

func (e queryError) Error() string {
	return fmt.Sprintf("query %q of request %d: deadline exceeded", e.Query, e.Request)
}

// errorType is exception.type as the Go SDK's span.RecordError writes it (typeStr in
// go.opentelemetry.io/otel/sdk/trace), so that the log record and the span event
// carry the same exception.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return fmt.Sprintf("%s.%s", t.PkgPath(), t.Name())
}

var tables = []string{"users", "carts", "items", "prices", "stock", "orders", "payments", "addresses", "sessions"}

// serve is request n of service s.
func (a *app) serve(s *service, n int) {
	route := fmt.Sprintf("/%s/items/{id}", s.name)
	name := "GET " + route
	ctx, root := s.tracer.Start(context.Background(), name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("http.request.method", "GET"),
			attribute.String("http.route", route),
			attribute.String("url.path", fmt.Sprintf("/%s/items/%d", s.name, n)),
			attribute.String("url.scheme", "http"),
			attribute.String("server.address", s.name+".internal"),
		))
	req := request{Service: s.name, Name: name, TraceID: root.SpanContext().TraceID().String(), Root: root.SpanContext().SpanID().String()}
	// Request n is request k of its service: each service fails (and is slow) every so
	// many of its own requests, whatever the number of services.
	k := n / len(a.services)
	failing := a.o.exceptionEvery > 0 && k%a.o.exceptionEvery == a.o.exceptionEvery-1
	failAt := n % a.o.children
	for i := range a.o.children {
		table := tables[i%len(tables)]
		query := fmt.Sprintf("SELECT * FROM %s WHERE id = $1", table)
		cctx, child := s.tracer.Start(ctx, "SELECT "+table, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(
				attribute.String("db.system.name", "postgresql"),
				attribute.String("db.query.text", query),
				attribute.String("db.collection.name", table),
			))
		req.Children = append(req.Children, child.SpanContext().SpanID().String())
		time.Sleep(a.o.childDuration)
		if failing && i == failAt {
			err := error(queryError{Query: query, Request: n})
			child.RecordError(err)
			child.SetStatus(codes.Error, err.Error())
			req.Exception = &exception{SpanID: child.SpanContext().SpanID().String(), Type: errorType(err), Message: err.Error()}
			body := fmt.Sprintf("%s request %d: query failed: %v", s.name, n, err)
			a.log(cctx, s, otellog.SeverityError, body,
				attribute.String("exception.type", req.Exception.Type),
				attribute.String("exception.message", req.Exception.Message))
			req.Logs = append(req.Logs, body)
		}
		child.End()
	}
	if a.o.slowEvery > 0 && k%a.o.slowEvery == a.o.slowEvery/2 {
		req.Slow = true
		time.Sleep(a.o.slowTail)
	}
	status := 200
	if failing {
		status = 500
		root.SetStatus(codes.Error, "")
	}
	root.SetAttributes(attribute.Int("http.response.status_code", status))
	body := fmt.Sprintf("%s request %d handled: %d", s.name, n, status)
	a.log(ctx, s, otellog.SeverityInfo, body, attribute.Int("http.response.status_code", status))
	req.Logs = append(req.Logs, body)
	root.End()

	a.mu.Lock()
	a.requests = append(a.requests, req)
	a.mu.Unlock()

	if a.o.asyncEvery > 0 && k%a.o.asyncEvery == a.o.asyncEvery/3 {
		next := a.services[(slices.Index(a.services, s)+1)%len(a.services)]
		parent := root.SpanContext()
		a.jobs.Add(1)
		time.AfterFunc(a.o.asyncDelay, func() {
			defer a.jobs.Done()
			a.consume(next, parent, req)
		})
	}
}

// consume is a job that request head (of another service) handed to service s, run
// after head ended: a CONSUMER span whose parent is head's root, propagated (remote),
// with the same sequential children as a request.
func (a *app) consume(s *service, parent trace.SpanContext, head request) {
	name := "process " + head.Service + ".events"
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	ctx, root := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("messaging.system", "kafka"),
			attribute.String("messaging.operation.type", "process"),
			attribute.String("messaging.destination.name", head.Service+".events"),
		))
	req := request{
		Service: s.name, Name: name, TraceID: root.SpanContext().TraceID().String(), Root: root.SpanContext().SpanID().String(),
		Head: head.Name, HeadService: head.Service,
	}
	for i := range a.o.children {
		table := tables[i%len(tables)]
		_, child := s.tracer.Start(ctx, "SELECT "+table, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(
				attribute.String("db.system.name", "postgresql"),
				attribute.String("db.query.text", fmt.Sprintf("SELECT * FROM %s WHERE id = $1", table)),
			))
		req.Children = append(req.Children, child.SpanContext().SpanID().String())
		time.Sleep(a.o.childDuration)
		child.End()
	}
	body := fmt.Sprintf("%s processed an event of %s", s.name, head.Root)
	a.log(ctx, s, otellog.SeverityInfo, body)
	req.Logs = append(req.Logs, body)
	root.End()

	a.mu.Lock()
	a.requests = append(a.requests, req)
	a.mu.Unlock()
}

// log emits a record carrying the trace context of ctx, as a log bridge does.
func (*app) log(ctx context.Context, s *service, sev otellog.Severity, body string, attrs ...attribute.KeyValue) {
	var r otellog.Record
	now := time.Now()
	r.SetTimestamp(now)
	r.SetObservedTimestamp(now)
	r.SetSeverity(sev)
	r.SetSeverityText(sev.String())
	r.SetBody(attribute.StringValue(body))
	r.AddAttributes(attrs...)
	s.logger.Emit(ctx, r)
}

// summary is the --summary-file.
type summary struct {
	Options   map[string]string          `json:"options"`
	Requests  int                        `json:"requests"`
	Spans     int                        `json:"spans"`
	Logs      int                        `json:"logs"`
	Errors    int                        `json:"exceptions"`
	ByService map[string]*serviceSummary `json:"by_service"`
	// SDK is what the SDK's exporters reported: items they exported (the collector
	// answered 2xx) and items in exports that failed. Items the batch processors dropped
	// before exporting (full queue) are the rest.
	SDK sdkCounts `json:"sdk"`
	// Profiles are the OTLP profiles (one per service a second) exported and failed.
	Profiles      profileCounts `json:"profiles"`
	ShutdownError []string      `json:"shutdown_errors,omitempty"`
	List          []request     `json:"list"`
}

type serviceSummary struct {
	Requests   int `json:"requests"`
	Spans      int `json:"spans"`
	Logs       int `json:"logs"`
	Exceptions int `json:"exceptions"`
	Slow       int `json:"slow"`
}

type profileCounts struct {
	Exported int64 `json:"exported"`
	Failed   int64 `json:"failed"`
}

type sdkCounts struct {
	SpansExported int64 `json:"spans_exported"`
	SpansFailed   int64 `json:"spans_failed"`
	LogsExported  int64 `json:"logs_exported"`
	LogsFailed    int64 `json:"logs_failed"`
}

func (a *app) writeSummary(errs []string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	sum := summary{
		Options: map[string]string{
			"services": fmt.Sprint(a.o.services), "rate": fmt.Sprint(a.o.rate), "duration": a.o.duration.String(),
			"children": fmt.Sprint(a.o.children), "child_duration": a.o.childDuration.String(),
			"exception_every": fmt.Sprint(a.o.exceptionEvery), "slow_every": fmt.Sprint(a.o.slowEvery), "slow_tail": a.o.slowTail.String(),
			"async_every": fmt.Sprint(a.o.asyncEvery), "async_delay": a.o.asyncDelay.String(),
			"profiles_endpoint": a.o.profilesEndpoint,
		},
		ByService:     map[string]*serviceSummary{},
		ShutdownError: errs,
		List:          a.requests,
		Profiles:      profileCounts{Exported: a.profilesExported.Load(), Failed: a.profilesFailed.Load()},
	}
	sort.Slice(sum.List, func(i, j int) bool { return sum.List[i].TraceID < sum.List[j].TraceID })
	for _, s := range a.services {
		sum.ByService[s.name] = &serviceSummary{}
		sum.SDK.SpansExported += s.spans.exported.Load()
		sum.SDK.SpansFailed += s.spans.failed.Load()
		sum.SDK.LogsExported += s.logs.exported.Load()
		sum.SDK.LogsFailed += s.logs.failed.Load()
	}
	for k := range a.requests {
		r := &a.requests[k]
		ss := sum.ByService[r.Service]
		ss.Requests++
		ss.Spans += 1 + len(r.Children)
		ss.Logs += len(r.Logs)
		if r.Exception != nil {
			ss.Exceptions++
		}
		if r.Slow {
			ss.Slow++
		}
		sum.Requests++
		sum.Spans += 1 + len(r.Children)
		sum.Logs += len(r.Logs)
		if r.Exception != nil {
			sum.Errors++
		}
	}
	fmt.Fprintf(os.Stderr, "sdkapp: sent %d requests: %d spans (SDK exported %d, failed %d), %d logs (exported %d, failed %d), %d exceptions\n",
		sum.Requests, sum.Spans, sum.SDK.SpansExported, sum.SDK.SpansFailed, sum.Logs, sum.SDK.LogsExported, sum.SDK.LogsFailed, sum.Errors)
	if a.o.summaryFile == "" {
		return nil
	}
	b, err := json.MarshalIndent(sum, "", " ")
	if err != nil {
		return err
	}
	tmp := a.o.summaryFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, a.o.summaryFile)
}

// countingSpanExporter counts the spans of exports that succeeded and failed.
type countingSpanExporter struct {
	sdktrace.SpanExporter
	exported, failed atomic.Int64
}

func (e *countingSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.failed.Add(int64(len(spans)))
	} else {
		e.exported.Add(int64(len(spans)))
	}
	return err
}

// countingLogExporter counts the records of exports that succeeded and failed.
type countingLogExporter struct {
	sdklog.Exporter
	exported, failed atomic.Int64
}

func (e *countingLogExporter) Export(ctx context.Context, records []sdklog.Record) error {
	err := e.Exporter.Export(ctx, records)
	if err != nil {
		e.failed.Add(int64(len(records)))
	} else {
		e.exported.Add(int64(len(records)))
	}
	return err
}
