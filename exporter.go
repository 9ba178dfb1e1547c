package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/translate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// sentryExporter orchestrates, per batch: translate the items whose category is
// not rate limited (the rest are only counted), wrap them into envelopes, send
// them concurrently, and account for every outcome in one place.
type sentryExporter struct {
	cfg        *Config
	set        exporter.Settings
	logger     *zap.Logger
	dsn        *dsn
	translator *translate.Translator
	limits     *ratelimit.State
	reports    *clientReports // nil when client reports are disabled
	tb         *metadata.TelemetryBuilder
	acct       *accountant
	sender     *sender
	now        func() time.Time

	stopping     chan struct{}
	stopOnce     sync.Once
	reportLoopWG sync.WaitGroup
}

func newExporter(cfg *Config, set exporter.Settings, clk clocks) (*sentryExporter, error) {
	d, err := parseDSN(string(cfg.DSN))
	if err != nil {
		return nil, err
	}
	url, err := envelopeURL(d, cfg.ClientConfig.Endpoint)
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &sentryExporter{
		cfg:      cfg,
		set:      set,
		logger:   set.Logger,
		dsn:      d,
		limits:   &ratelimit.State{},
		tb:       tb,
		now:      clk.now,
		stopping: make(chan struct{}),
	}
	if cfg.ClientReports.Enabled {
		e.reports = &clientReports{}
	}
	e.acct = newAccountant(tb, d.projectID, e.reports)
	e.translator = translate.New(translate.Options{
		Environment:              cfg.Environment,
		Release:                  cfg.Release,
		SDKName:                  sdkName,
		SDKVersion:               sdkVersion,
		ErrorsFromSpanExceptions: cfg.ErrorEvents.FromSpanExceptions,
		ErrorsFromLogs:           cfg.ErrorEvents.FromLogs,
	})
	e.sender = &sender{
		url:       url,
		auth:      d.authHeader,
		userAgent: fmt.Sprintf("%s/%s (%s %s; %s/%s)", sdkName, sdkVersion, set.BuildInfo.Description, set.BuildInfo.Version, runtime.GOOS, runtime.GOARCH),
		limits:    e.limits,
		retry:     cfg.RetryConfig,
		slots:     make(chan struct{}, cfg.MaxConcurrentRequests),
		stopping:  e.stopping,
		now:       clk.now,
		wall:      clk.wall,
		pause:     clk.pause,
		logger:    set.Logger,
		acct:      e.acct,
	}
	err = tb.RegisterExporterSentryRateLimitRemainingCallback(func(_ context.Context, o metric.Float64Observer) error {
		e.acct.observeLimits(o, e.limits.Load(), e.now())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// start builds the HTTP client here because only Start gets the host's
// extensions, which auth needs; then it starts the client-report ticker.
func (e *sentryExporter) start(ctx context.Context, host component.Host) error {
	clientCfg := e.cfg.ClientConfig
	clientCfg.Endpoint = "" // the envelope URL is derived from the DSN (and `endpoint`) once, in newExporter
	if clientCfg.Keepalive.HasValue() && clientCfg.Keepalive.Get().MaxIdleConnsPerHost == 0 {
		// Go's default of 2 idle connections per host would close and reopen
		// connections under max_concurrent_requests concurrent envelopes.
		ka := *clientCfg.Keepalive.Get()
		ka.MaxIdleConnsPerHost = e.cfg.MaxConcurrentRequests
		clientCfg.Keepalive.Get().MaxIdleConnsPerHost = ka.MaxIdleConnsPerHost
	}
	client, err := clientCfg.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
	if err != nil {
		return err
	}
	e.sender.client = client
	if e.reports != nil {
		e.reportLoopWG.Add(1)
		go e.reportLoop()
	}
	return nil
}

// beginShutdown runs before exporterhelper drains its queue: from then on no
// envelope is retried, so the drain ends promptly; each queued batch still
// gets one attempt unless its category is rate limited.
func (e *sentryExporter) beginShutdown() {
	e.stopOnce.Do(func() { close(e.stopping) })
}

// shutdown runs last, after the queue drained: it sends the final client
// report (or logs its counts when an all-category limit blocks it).
func (e *sentryExporter) shutdown(ctx context.Context) error {
	e.beginShutdown()
	e.reportLoopWG.Wait()
	if e.reports != nil && e.sender.client != nil {
		e.flushReport(ctx, true)
	}
	if e.sender.client != nil {
		e.sender.client.CloseIdleConnections()
	}
	e.tb.Shutdown()
	return nil
}

func (e *sentryExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	now := e.now()
	limits := e.limits.Load()
	res := e.translator.Traces(td, translate.TracesWant{
		Transactions: e.cfg.TracesAs == TracesAsTransactions && !gateTransaction.limited(limits, now),
		SpanV2:       e.cfg.TracesAs == TracesAsSpans && !gateSpan.limited(limits, now),
		Errors:       e.cfg.ErrorEvents.FromSpanExceptions && !gateError.limited(limits, now),
	})
	skipped := counts{catSpan: int64(res.SkippedSpans), catError: int64(res.SkippedErrors)}
	if e.cfg.TracesAs == TracesAsTransactions { // in spans mode no transaction is ever built, so none is dropped
		skipped[catTransaction] = int64(res.SkippedTransactions)
	}
	e.acct.dropped(ctx, reasonRateLimitBackoff, skipped)
	e.acct.dropped(ctx, reasonInvalid, counts{catSpan: int64(res.InvalidSpans), catError: int64(res.InvalidErrors)})

	out := make([]outgoing, 0, len(res.Transactions)+len(res.SpanGroups)+len(res.Errors))
	for i := range res.Transactions {
		out = append(out, e.transactionEnvelope(&res.Transactions[i]))
	}
	for i := range res.SpanGroups {
		out = e.appendSpanEnvelopes(ctx, out, &res.SpanGroups[i])
	}
	for i := range res.Errors {
		out = append(out, e.errorEnvelope(&res.Errors[i]))
	}
	e.sendAll(ctx, out)
	res.Release() // every envelope is settled: the payload buffer can be reused
	return nil
}

func (e *sentryExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	now := e.now()
	limits := e.limits.Load()
	res := e.translator.Logs(ld, translate.LogsWant{
		Logs:   !gateLogs.limited(limits, now),
		Errors: e.cfg.ErrorEvents.FromLogs && !gateError.limited(limits, now),
	})
	e.acct.dropped(ctx, reasonRateLimitBackoff, counts{
		catLogItem: int64(res.SkippedLogs), catLogByte: int64(res.SkippedLogBytes), catError: int64(res.SkippedErrors),
	})
	e.acct.dropped(ctx, reasonInvalid, counts{catLogItem: int64(res.InvalidLogs), catError: int64(res.InvalidErrors)})

	out := e.appendLogEnvelopes(ctx, make([]outgoing, 0, len(res.Logs)/maxLogsPerEnvelope+1+len(res.Errors)), res.Logs)
	for i := range res.Errors {
		out = append(out, e.errorEnvelope(&res.Errors[i]))
	}
	e.sendAll(ctx, out)
	res.Release()
	return nil
}

// sendAll sends every envelope concurrently (the sender caps what is in
// flight) and accounts for each outcome. It returns when all are settled.
func (e *sentryExporter) sendAll(ctx context.Context, out []outgoing) {
	if len(out) == 1 {
		e.deliver(ctx, &out[0])
		return
	}
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func(o *outgoing) {
			defer wg.Done()
			e.deliver(ctx, o)
		}(&out[i])
	}
	wg.Wait()
}

// deliver sends one envelope, with any pending client report riding along,
// and accounts for it. A container that Sentry finds too large (413) is split
// in two and each half is sent once before its items are counted.
func (e *sentryExporter) deliver(ctx context.Context, o *outgoing) {
	report := e.attachReport(&o.env)
	res := e.sender.send(ctx, &o.env, o.gate)
	e.settleReport(report, res)
	if res.tooLarge && len(o.items) > 1 {
		for _, half := range o.halves() {
			e.acct.outcome(ctx, e.sender.send(ctx, &half.env, half.gate), half.counts)
		}
		return
	}
	e.acct.outcome(ctx, res, o.counts)
}

// attachReport appends the pending client report to env; it returns what it
// took so that settleReport can put it back if the envelope does not arrive.
func (e *sentryExporter) attachReport(env *envelope.Envelope) []envelope.Discard {
	if e.reports == nil {
		return nil
	}
	d := e.reports.take()
	if d == nil {
		return nil
	}
	env.Items = append(env.Items, envelope.Item{
		Type:    envelope.ItemTypeClientReport,
		Payload: envelope.AppendClientReport(nil, e.now(), d),
	})
	return d
}

// settleReport keeps a client report that did not reach Sentry. An envelope
// answered 429 still counts as delivered for its report: Relay never rate
// limits client_report items (they have no data category).
func (e *sentryExporter) settleReport(report []envelope.Discard, res sendResult) {
	if report != nil && !res.delivered && res.status != http.StatusTooManyRequests {
		e.reports.restore(report)
	}
}

// reportLoop sends the pending client report every client_reports.interval.
func (e *sentryExporter) reportLoop() {
	defer e.reportLoopWG.Done()
	t := time.NewTicker(e.cfg.ClientReports.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			e.flushReport(context.Background(), false)
		case <-e.stopping:
			return
		}
	}
}

// flushReport sends the pending client report in an envelope of its own.
// Only an all-category limit blocks it; then the counts are kept for later,
// or, at shutdown, logged so they are not lost without a trace.
func (e *sentryExporter) flushReport(ctx context.Context, final bool) {
	d := e.reports.take()
	if d == nil {
		return
	}
	env := envelope.Envelope{
		Header: envelope.Header{SDK: &envelope.SDKInfo{Name: sdkName, Version: sdkVersion}},
		Items:  []envelope.Item{{Type: envelope.ItemTypeClientReport, Payload: envelope.AppendClientReport(nil, e.now(), d)}},
	}
	res := e.sender.send(ctx, &env, gateInternal)
	if res.delivered || res.status == http.StatusTooManyRequests {
		return
	}
	if !final {
		e.reports.restore(d)
		return
	}
	fields := make([]zap.Field, 0, len(d)+1)
	fields = append(fields, zap.String("why", res.reason.wire()))
	for _, x := range d {
		fields = append(fields, zap.Uint64(x.Reason+"."+x.Category, x.Quantity))
	}
	e.logger.Warn("Final Sentry client report could not be sent; its counts are also in otelcol_exporter_sentry_dropped_items", fields...)
}
