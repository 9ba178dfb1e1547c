package sentryexporter

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/send"
)

// received is one envelope as the fake Sentry saw it.
type received struct {
	at      time.Time // virtual time in a bubble
	project string
	env     *envelope.Envelope
}

// itemTypes lists the envelope's item types, client reports excluded.
func (r received) dataTypes() []string {
	var out []string
	for _, it := range r.env.Items {
		if it.Type != envelope.ItemTypeClientReport {
			out = append(out, it.Type)
		}
	}
	return out
}

// answer is what the fake Sentry replies to one envelope.
type answer struct {
	status  int
	headers map[string]string
	reset   bool // close the connection without an answer
	hang    bool // no answer until the request is cancelled
}

// fakeSentry plays Sentry's envelope endpoint: it rejects (400) anything the
// strict reader or validator rejects, records the rest, and answers what the
// test's respond func says (200 by default).
type fakeSentry struct {
	t       *testing.T
	srv     *httptest.Server // nil when served by net
	net     *memNet          // nil when served by srv
	url     string           // where its envelope endpoint is
	mu      sync.Mutex
	got     []received
	invalid []string
	respond func(env *envelope.Envelope) answer
	// oldRelay decodes Content-Encoding as a Relay that predates zstd does:
	// an encoding it does not know (zstd) is taken for identity.
	oldRelay bool
	// encodings counts the bodies received by Content-Encoding.
	encodings map[string]int
}

func newFakeSentry(t *testing.T) *fakeSentry {
	f := &fakeSentry{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{project}/envelope/", f.handle)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL
	return f
}

// stop makes f refuse connections from now on.
func (f *fakeSentry) stop() {
	if f.srv != nil {
		f.srv.Close()
		return
	}
	f.net.serve(strings.TrimPrefix(f.url, "http://"), refused{})
}

// The in-memory fakes' hosts are loopback ports nothing listens on: a
// client built without memNet is refused, and nothing leaves the machine.
const (
	memSentryHost = "127.0.0.1:1" // the fake Sentry
	memSickHost   = "127.0.0.1:2" // a second fake Sentry
	memAPIHost    = "127.0.0.1:3" // the fake management API
	memThiefHost  = "127.0.0.1:4" // a host a redirect points to, which must get nothing
)

// newMemSentry is a fake Sentry on an in-memory network, for tests in a
// synctest bubble (memnet_test.go).
func newMemSentry(t *testing.T) *fakeSentry {
	return newMemSentryOn(t, newMemNet(), memSentryHost)
}

// newMemSentryOn is a fake Sentry at host of net.
func newMemSentryOn(t *testing.T, net *memNet, host string) *fakeSentry {
	f := &fakeSentry{t: t, net: net, url: "http://" + host}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{project}/envelope/", f.handle)
	net.serve(host, mux)
	return f
}

func (f *fakeSentry) dsn() string { return f.dsnFor("1") }

// dsnFor is the DSN of one project of this fake Sentry.
func (f *fakeSentry) dsnFor(project string) string {
	return strings.Replace(f.url, "http://", "http://publickey@", 1) + "/" + project
}

func (f *fakeSentry) handle(w http.ResponseWriter, r *http.Request) {
	if auth := r.Header.Get("X-Sentry-Auth"); !strings.Contains(auth, "sentry_key=publickey") || !strings.Contains(auth, "sentry_version=7") {
		http.Error(w, `{"detail":"missing authorization information"}`, http.StatusUnauthorized)
		return
	}
	body, err := f.decoded(r)
	if err != nil {
		http.Error(w, fmt.Sprintf(`{"detail":%q}`, err.Error()), http.StatusBadRequest)
		return
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	env, err := envelope.Parse(data)
	if err == nil {
		err = envelope.Validate(env, envelope.RelayDefaults())
	}
	if err == nil {
		err = checkProfileChunks(env)
	}
	f.mu.Lock()
	if err != nil {
		f.invalid = append(f.invalid, err.Error())
		f.mu.Unlock()
		w.Header().Set("X-Sentry-Error", "invalid envelope")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"detail": err.Error()})
		return
	}
	f.got = append(f.got, received{at: time.Now(), project: r.PathValue("project"), env: env})
	respond := f.respond
	f.mu.Unlock()
	a := answer{status: http.StatusOK}
	if respond != nil {
		a = respond(env)
	}
	if a.hang {
		<-r.Context().Done()
		return
	}
	a.write(w, env)
}

// write plays the answer to env.
func (a answer) write(w http.ResponseWriter, env *envelope.Envelope) {
	if a.reset {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	for k, v := range a.headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(a.status)
	if a.status == http.StatusOK {
		fmt.Fprintf(w, `{"id":%q}`, env.Header.EventID)
	}
}

// decoded is r's body with its Content-Encoding undone, as the Relay f
// plays does it; it counts the bodies by encoding.
func (f *fakeSentry) decoded(r *http.Request) (io.ReadCloser, error) {
	ce := r.Header.Get("Content-Encoding")
	f.mu.Lock()
	if f.encodings == nil {
		f.encodings = map[string]int{}
	}
	f.encodings[ce]++
	oldRelay := f.oldRelay
	f.mu.Unlock()
	switch {
	case ce == "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, errors.New("failed to decode gzip payload")
		}
		return zr, nil
	case ce == "zstd" && !oldRelay:
		zr, err := zstd.NewReader(r.Body)
		if err != nil {
			return nil, errors.New("failed to decode zstd payload")
		}
		return zr.IOReadCloser(), nil
	}
	return r.Body, nil
}

// firstThenOK answers first to the first envelope and 200 to every other.
func firstThenOK(first answer) func(*envelope.Envelope) answer {
	var once sync.Once
	return func(*envelope.Envelope) answer {
		a := answer{status: http.StatusOK}
		once.Do(func() { a = first })
		return a
	}
}

func (f *fakeSentry) setRespond(fn func(env *envelope.Envelope) answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.respond = fn
}

// bodies counts the request bodies received with a Content-Encoding ("" for none).
func (f *fakeSentry) bodies(contentEncoding string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.encodings[contentEncoding]
}

func (f *fakeSentry) envelopes() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func (f *fakeSentry) requireNoInvalid() {
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Empty(f.t, f.invalid, "the fake Sentry rejected envelopes as Relay would")
}

// countType counts envelopes that carry an item of the given type.
func (f *fakeSentry) countType(itemType string) int {
	n := 0
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == itemType {
				n++
				break
			}
		}
	}
	return n
}

// discards sums the client-report discards the fake Sentry received by "reason/category".
func (f *fakeSentry) discards() map[string]uint64 {
	return discardsOf(f.t, f.envelopes())
}

// discardsOf sums the client-report discards in envs by "reason/category".
func discardsOf(t *testing.T, envs []received) map[string]uint64 {
	out := map[string]uint64{}
	for _, r := range envs {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeClientReport {
				continue
			}
			var rep struct {
				Discarded []struct {
					Reason, Category string
					Quantity         uint64
				} `json:"discarded_events"`
			}
			require.NoError(t, json.Unmarshal(it.Payload, &rep))
			for _, d := range rep.Discarded {
				out[d.Reason+"/"+d.Category] += d.Quantity
			}
		}
	}
	return out
}

// harness is an exporter built through the factory and exporterhelper, with no
// sending queue. Its Consume* return only when every envelope is settled: they
// wait until every project's pending queue is empty, so counts can be read at once.
type harness struct {
	t       *testing.T
	sentry  *fakeSentry
	tel     *componenttest.Telemetry
	traces  exporter.Traces
	logs    exporter.Logs
	metrics exporter.Metrics
	// profiles is the profiles pipeline (profiles_test.go); nil in the
	// fault harness.
	profiles xexporter.Profiles
	exp      *sentryExporter
}

// waitIdle waits until l holds nothing: every envelope it was offered is
// settled (an envelope holds its bytes until its fate is recorded). It is
// for real time; in a synctest bubble, waitIdleInBubble.
func waitIdle(l *send.Lane) {
	for l.Held() != 0 {
		runtime.Gosched()
	}
}

// waitIdleInBubble is waitIdle in a synctest bubble: it waits until every
// other goroutine of the bubble is blocked, and while l still holds an
// envelope (one waiting for its retry) lets virtual time run on. Time moves
// only for retries: a test's times stay exact.
func waitIdleInBubble(l *send.Lane) {
	for synctest.Wait(); l.Held() != 0; synctest.Wait() {
		time.Sleep(time.Millisecond)
	}
}

// settle waits until no project holds an envelope (queued or in flight).
func (e *sentryExporter) settle() {
	for _, p := range e.allProjects() {
		waitIdle(p.lane)
	}
}

// settleInBubble is settle in a synctest bubble.
func (e *sentryExporter) settleInBubble() {
	for _, p := range e.allProjects() {
		waitIdleInBubble(p.lane)
	}
}

// settlingTraces and settlingLogs return from Consume* once every envelope
// the call handed over is settled.
type settlingTraces struct {
	exporter.Traces
	settle func()
}

func (s settlingTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	err := s.Traces.ConsumeTraces(ctx, td)
	s.settle()
	return err
}

type settlingMetrics struct {
	exporter.Metrics
	settle func()
}

func (s settlingMetrics) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	err := s.Metrics.ConsumeMetrics(ctx, md)
	s.settle()
	return err
}

type settlingLogs struct {
	exporter.Logs
	settle func()
}

func (s settlingLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	err := s.Logs.ConsumeLogs(ctx, ld)
	s.settle()
	return err
}

// newHarness is an exporter on real time, in the caller's synctest
// bubble, against a fake Sentry on an in-memory network.
func newHarness(t *testing.T, configure func(*Config)) *harness {
	return newHarnessWith(t, newMemSentry(t), configure)
}

// newHarnessWith builds the exporter against sentry.
func newHarnessWith(t *testing.T, sentry *fakeSentry, configure func(*Config)) *harness {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.WithoutCancel(t.Context()))) }) // t.Context is done once cleanup runs

	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.DSN = configopaque.String(sentry.dsn())
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig = configretry.BackOffConfig{
		Enabled: true, InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond,
		MaxElapsedTime: time.Hour, Multiplier: 2,
	}
	cfg.ClientReports.Interval = time.Hour // tests flush explicitly or at shutdown
	host := sentry.host()
	if sentry.net != nil {
		useMemNet(&cfg.ClientConfig)
	}
	if configure != nil {
		configure(cfg)
	}
	if d := &cfg.Routing.Discovery; sentry.net != nil && d.HasValue() && len(d.Get().ClientConfig.Middlewares) == 0 {
		useMemNet(&d.Get().ClientConfig) // discovery's client has its own settings: it reaches the memNet too
	}
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	te, err := f.CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	le, err := f.CreateLogs(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Start(t.Context(), host))
	require.NoError(t, le.Start(t.Context(), host))
	me, err := f.CreateMetrics(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, me.Start(t.Context(), host))
	pe, err := f.(xexporter.Factory).CreateProfiles(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, pe.Start(t.Context(), host))
	exp := exporterOf(te)
	settle := exp.settle
	if sentry.net != nil { // in memory: in a synctest bubble
		settle = exp.settleInBubble
	}
	return &harness{
		t: t, sentry: sentry, tel: tel, exp: exp,
		traces: settlingTraces{Traces: te, settle: settle}, logs: settlingLogs{Logs: le, settle: settle},
		metrics: settlingMetrics{Metrics: me, settle: settle}, profiles: settlingProfiles{Profiles: pe, settle: settle},
	}
}

// host is the host the exporter starts with: one whose extensions serve f
// when f is in memory.
func (f *fakeSentry) host() component.Host {
	if f.net == nil {
		return componenttest.NewNopHost()
	}
	return f.net.host()
}

// shutdown stops the three pipelines (the final client report goes out with the last).
func (h *harness) shutdown() {
	require.NoError(h.t, h.traces.Shutdown(context.Background()))
	require.NoError(h.t, h.logs.Shutdown(context.Background()))
	if h.metrics != nil { // the fault harness builds no metrics pipeline
		require.NoError(h.t, h.metrics.Shutdown(context.Background()))
	}
	if h.profiles != nil { // nor a profiles pipeline
		require.NoError(h.t, h.profiles.Shutdown(context.Background()))
	}
}

// sum reads a counter of ours by attributes; attrs may name a subset.
func (h *harness) sum(metric string, attrs map[string]string) int64 {
	m, err := h.tel.GetMetric(metric)
	if err != nil {
		return 0
	}
	var total int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		match := true
		for k, v := range attrs {
			got, ok := dp.Attributes.Value(attribute.Key(k))
			if !ok || got.AsString() != v {
				match = false
				break
			}
		}
		if match {
			total += dp.Value
		}
	}
	return total
}

// pendingBytes reads otelcol_exporter_sentry_pending_bytes of one project
// (-1: no data point for it).
func (h *harness) pendingBytes(project string) int64 {
	return h.gauge("otelcol_exporter_sentry_pending_bytes", project)
}

// gauge reads an int64 gauge of one project (-1: no data point for it).
func (h *harness) gauge(name, project string) int64 {
	m, err := h.tel.GetMetric(name)
	if err != nil {
		return -1
	}
	for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		if got, ok := dp.Attributes.Value("project"); ok && got.AsString() == project {
			return dp.Value
		}
	}
	return -1
}

// limitRemaining reads otelcol_exporter_sentry_rate_limit_remaining of project 1 and a category; -1 when absent.
func (h *harness) limitRemaining(category string) float64 {
	m, err := h.tel.GetMetric("otelcol_exporter_sentry_rate_limit_remaining")
	if err != nil {
		return -1
	}
	for _, dp := range m.Data.(metricdata.Gauge[float64]).DataPoints {
		p, _ := dp.Attributes.Value("project")
		c, _ := dp.Attributes.Value("category")
		if p.AsString() == "1" && c.AsString() == category {
			return dp.Value
		}
	}
	return -1
}

func (h *harness) dropped(cat, why string) int64 {
	return h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"category": cat, "reason": why})
}

func (h *harness) droppedAll(cat string) int64 {
	return h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"category": cat})
}

func (h *harness) sent(cat string) int64 {
	return h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"category": cat})
}

// inBubble runs a subtest in a synctest bubble of its own: t.Run cannot be
// called inside one.
func inBubble(f func(*testing.T)) func(*testing.T) {
	return func(t *testing.T) { synctest.Test(t, f) }
}

// exporterOf is the exporter behind a pipeline that NewFactory built: the
// pipeline's stopFirst knows it.
func exporterOf(c component.Component) *sentryExporter {
	switch c := c.(type) {
	case struct {
		stopFirst
		consumer.Traces
	}:
		return c.pipeline.shared.exp
	case struct {
		stopFirst
		consumer.Logs
	}:
		return c.pipeline.shared.exp
	case struct {
		stopFirst
		consumer.Metrics
	}:
		return c.pipeline.shared.exp
	}
	panic(fmt.Sprintf("%T is not a pipeline of NewFactory", c))
}
