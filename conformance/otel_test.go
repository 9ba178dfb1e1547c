package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otel-sentry/sentryexporter"
)

// The program instrumented with the OpenTelemetry Go SDK as its documentation
// shows: otelhttp around the ServeMux and on the client, a client span with
// db.* attributes for the database call, span.RecordError, and the logs SDK,
// all exported over OTLP/HTTP to a receiver that feeds this exporter.

type otelSDK struct {
	tp     *sdktrace.TracerProvider
	lp     *sdklog.LoggerProvider
	tracer trace.Tracer
	logger otellog.Logger
	prop   propagation.TextMapPropagator
	hc     *http.Client
}

// sdkResource is the resource both SDK conformance runs describe their service with: its
// name, version and environment, the SDK's and the host's attributes, and extra.
func sdkResource(t *testing.T, extra ...resource.Option) *resource.Resource {
	t.Helper()
	opts := append([]resource.Option{
		resource.WithAttributes(
			attribute.String("service.name", serviceName),
			attribute.String("service.version", release),
			attribute.String("deployment.environment.name", environment),
		),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
	}, extra...)
	res, err := resource.New(t.Context(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func newOTelSDK(t *testing.T, otlpURL string) *otelSDK {
	t.Helper()
	ctx := t.Context()
	res := sdkResource(t, resource.WithOS(), resource.WithProcess()) // what the user had: runtime, pid, command line, owner
	spans, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(otlpURL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(otlpURL+"/v1/logs"))
	if err != nil {
		t.Fatal(err)
	}
	// Batches are only sent by the flushes at the end (intervals of an hour),
	// so the test does not depend on timing.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(fullProbabilitySampler{}),
		sdktrace.WithBatcher(spans, sdktrace.WithBatchTimeout(time.Hour)),
	)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(res),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(logs, sdklog.WithExportInterval(time.Hour))),
	)
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	return &otelSDK{
		tp: tp, lp: lp, prop: prop,
		tracer: tp.Tracer("shop"),
		logger: lp.Logger("shop"),
		hc: &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport,
			otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(prop))},
	}
}

func (o *otelSDK) wrapServer(h http.Handler) http.Handler {
	return otelhttp.NewHandler(recordQuery(captureHeaders(h)), "server", otelhttp.WithTracerProvider(o.tp), otelhttp.WithPropagators(o.prop))
}

// recordQuery records url.query on the server span. The HTTP conventions make
// it conditionally required on server spans ("if and only if one was
// received"), but otelhttp v0.72 records neither url.query nor url.full, so
// without this the span carries no query at all and no exporter can write
// Sentry's request.query_string. A user who wants it adds it like this, as
// they add the captured headers.
func recordQuery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			trace.SpanFromContext(r.Context()).SetAttributes(attribute.String("url.query", r.URL.RawQuery))
		}
		h.ServeHTTP(w, r)
	})
}

// fullProbabilitySampler samples every trace and, like OTel's consistent
// probability sampler at 100 %, writes the rejection threshold into the W3C
// tracestate (ot=th:0), so the sample rate travels with each span. The SDK's
// AlwaysOn sampler writes no rate: with it the exporter cannot know that
// sentry-go's sample_rate 1 applies. Spans continuing a remote trace keep
// the tracestate they received.
type fullProbabilitySampler struct{}

func (fullProbabilitySampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	ts := trace.SpanContextFromContext(p.ParentContext).TraceState()
	if ts.Get("ot") == "" {
		if withTh, err := ts.Insert("ot", "th:0"); err == nil {
			ts = withTh
		}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample, Tracestate: ts}
}

func (fullProbabilitySampler) Description() string { return "FullProbabilitySampler{ot=th:0}" }

// captureHeaders records capturedHeaders on the server span.
func captureHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		span := trace.SpanFromContext(r.Context())
		for _, name := range capturedHeaders {
			if v := r.Header.Values(name); len(v) > 0 {
				span.SetAttributes(attribute.StringSlice("http.request.header."+strings.ToLower(name), v))
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (o *otelSDK) client() *http.Client { return o.hc }

// query is what database instrumentations (otelsql, pgx's otel tracer) record,
// with both the current and the older semantic convention names.
func (o *otelSDK) query(ctx context.Context, q dbQuery) {
	_, span := o.tracer.Start(ctx, q.operation+" "+q.collection, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("db.system.name", q.system),
			attribute.String("db.operation.name", q.operation),
			attribute.String("db.collection.name", q.collection),
			attribute.String("db.query.text", q.text),
			attribute.String("db.system", q.system),
			attribute.String("db.statement", q.text),
		))
	span.End()
}

func (*otelSDK) recordError(ctx context.Context, err error) {
	span := trace.SpanFromContext(ctx)
	span.RecordError(err, trace.WithStackTrace(true))
	span.SetStatus(codes.Error, err.Error())
}

func (o *otelSDK) recordAndLogError(ctx context.Context, err error, msg string) {
	o.recordError(ctx, err)
	o.emit(ctx, otellog.SeverityError, "ERROR", msg,
		attribute.String("exception.type", fmt.Sprintf("%T", err)),
		attribute.String("exception.message", err.Error()),
		attribute.String("exception.stacktrace", string(debug.Stack())),
	)
}

func (o *otelSDK) logError(ctx context.Context, err error, msg string) {
	o.emit(ctx, otellog.SeverityError, "ERROR", msg,
		attribute.String("exception.type", fmt.Sprintf("%T", err)),
		attribute.String("exception.message", err.Error()),
		attribute.String("exception.stacktrace", string(debug.Stack())),
	)
}

func (o *otelSDK) log(ctx context.Context, level, msg string, attrs ...logAttr) {
	kvs := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.value.(type) {
		case string:
			kvs = append(kvs, attribute.String(a.key, v))
		case int64:
			kvs = append(kvs, attribute.Int64(a.key, v))
		case bool:
			kvs = append(kvs, attribute.Bool(a.key, v))
		}
	}
	sev, text := otellog.SeverityInfo, "INFO"
	switch level {
	case "warn":
		sev, text = otellog.SeverityWarn, "WARN"
	case "error":
		sev, text = otellog.SeverityError, "ERROR"
	}
	o.emit(ctx, sev, text, msg, kvs...)
}

func (o *otelSDK) emit(ctx context.Context, sev otellog.Severity, text, msg string, kvs ...attribute.KeyValue) {
	var r otellog.Record
	r.SetTimestamp(time.Now())
	r.SetSeverity(sev)
	r.SetSeverityText(text)
	r.SetBody(attribute.StringValue(msg))
	r.AddAttributes(kvs...)
	o.logger.Emit(ctx, r)
}

// flush shuts both providers down, which exports what they batched, in the
// given order: logs first is the harder order for the exporter (a
// log-derived error arrives before the span that names its transaction);
// the collector's pipelines may deliver either.
func (o *otelSDK) flush(t *testing.T, logsFirst bool) {
	ctx := t.Context()
	shutdowns := []func(context.Context) error{o.tp.Shutdown, o.lp.Shutdown}
	if logsFirst {
		shutdowns[0], shutdowns[1] = shutdowns[1], shutdowns[0]
	}
	for _, shutdown := range shutdowns {
		if err := shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// exporterUnderTest is this exporter, built through its factory, behind an
// in-test OTLP/HTTP receiver.
type exporterUnderTest struct {
	traces  exporter.Traces
	logs    exporter.Logs
	metrics exporter.Metrics
	otlp    *httptest.Server
}

func newExporterUnderTest(t *testing.T, dsn string) *exporterUnderTest {
	t.Helper()
	return newExporterUnderTestWith(t, dsn, func(*sentryexporter.Config) {})
}

// newExporterUnderTestWith is newExporterUnderTest with the config changed by edit.
func newExporterUnderTestWith(t *testing.T, dsn string, edit func(*sentryexporter.Config)) *exporterUnderTest {
	t.Helper()
	ctx := t.Context()
	f := sentryexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*sentryexporter.Config)
	cfg.DSN = configopaque.String(dsn)
	// No sending queue: each OTLP request is one push, sent before the
	// receiver answers, in the order the SDK exported them.
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	edit(cfg)
	set := exportertest.NewNopSettings(f.Type())
	te, err := f.CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	le, err := f.CreateLogs(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	me, err := f.CreateMetrics(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{te, le, me} {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	e := &exporterUnderTest{traces: te, logs: le, metrics: me}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", e.receiveTraces)
	mux.HandleFunc("POST /v1/logs", e.receiveLogs)
	mux.HandleFunc("POST /v1/metrics", e.receiveMetrics)
	e.otlp = httptest.NewServer(mux)
	t.Cleanup(e.otlp.Close)
	return e
}

func (e *exporterUnderTest) receiveTraces(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := ptraceotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	if err == nil {
		err = e.traces.ConsumeTraces(r.Context(), req.Traces())
	}
	answer(w, err, func() ([]byte, error) { return ptraceotlp.NewExportResponse().MarshalProto() })
}

func (e *exporterUnderTest) receiveLogs(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := plogotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	if err == nil {
		err = e.logs.ConsumeLogs(r.Context(), req.Logs())
	}
	answer(w, err, func() ([]byte, error) { return plogotlp.NewExportResponse().MarshalProto() })
}

func (e *exporterUnderTest) receiveMetrics(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := pmetricotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	if err == nil {
		err = e.metrics.ConsumeMetrics(r.Context(), req.Metrics())
	}
	answer(w, err, func() ([]byte, error) { return pmetricotlp.NewExportResponse().MarshalProto() })
}

func answer(w http.ResponseWriter, err error, resp func() ([]byte, error)) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := resp()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// shutdown flushes whatever the exporter still holds (client reports, any
// window it keeps to pair exceptions of both signals).
func (e *exporterUnderTest) shutdown(t *testing.T) {
	ctx := t.Context()
	if err := e.traces.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.logs.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.metrics.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
