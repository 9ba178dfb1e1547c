package sentryexporter

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// faultHarness is one exporter routing service "healthy" to project 1 of a
// fake Sentry and service "sick" to project 2, whose network plays a fault.
// Its Consume* return as soon as the envelopes are handed over: nothing
// waits for project 2's network.
type faultHarness struct {
	*harness
	next int                        // first trace id of the next batch
	in   map[string]*account.Counts // items handed to each project
}

const (
	healthyProject = "1"
	sickProject    = "2"
)

func newFaultHarness(t *testing.T, sickDSN string, dial sendtest.Middleware, configure func(*Config)) *faultHarness {
	return newFaultHarnessWith(t, newFakeSentry(t), sickDSN, dial, configure)
}

// newFaultHarnessWith is newFaultHarness with project 1 on healthy (in
// memory, for a test in a synctest bubble, when healthy is).
func newFaultHarnessWith(t *testing.T, healthy *fakeSentry, sickDSN string, dial sendtest.Middleware, configure func(*Config)) *faultHarness {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.WithoutCancel(t.Context()))) }) // t.Context is done once cleanup runs

	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Routing.DSNs = map[string]configopaque.String{
		"healthy": configopaque.String(healthy.dsnFor(healthyProject)),
		"sick":    configopaque.String(sickDSN),
	}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.ClientConfig.Timeout = 0 // no timeout: only shutdown can end a hanging request
	// One envelope in flight per project, so the retries of each envelope are
	// exact: 100 ms, 200 ms, then 400 ms would pass the 600 ms budget: 3
	// attempts, on real time too (the 300 ms of backoff leave 300 ms for
	// the first two attempts, and the third always ends past 300 ms).
	cfg.MaxConcurrentRequests = 1
	cfg.RetryConfig = configretry.BackOffConfig{
		Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second,
		MaxElapsedTime: 600 * time.Millisecond, Multiplier: 2,
	}
	cfg.ClientReports.Interval = time.Hour
	cfg.Pending.DrainTimeout = 100 * time.Millisecond
	cfg.ErrorEvents.DedupeWindow = 0 // errors go out in their push: the counts below are per push
	if healthy.net != nil {
		useMemNet(&cfg.ClientConfig)
	}
	if configure != nil {
		configure(cfg)
	}
	host := healthy.host()
	if dial != nil {
		sendtest.Use(&cfg.ClientConfig)
		host = sendtest.Host(dial)
	}
	require.NoError(t, cfg.Validate())
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	te, err := f.CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	le, err := f.CreateLogs(t.Context(), set, cfg)
	require.NoError(t, err)
	exp := exporterOf(te)
	require.NoError(t, te.Start(t.Context(), host))
	require.NoError(t, le.Start(t.Context(), host))
	return &faultHarness{
		harness: &harness{t: t, sentry: healthy, tel: tel, traces: te, logs: le, exp: exp},
		in:      map[string]*account.Counts{healthyProject: {}, sickProject: {}},
	}
}

// push sends one batch of service svc (project p): 2 traces of 3 spans with an
// exception each, and 4 logs: 5 envelopes.
func (h *faultHarness) push(svc, p string) {
	td := makeTraces(h.next, 2, true)
	h.next += 2
	td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", svc)
	ld := makeLogs(4)
	ld.ResourceLogs().At(0).Resource().Attributes().PutStr("service.name", svc)
	in := h.in[p]
	in[account.CatSpan] += int64(td.SpanCount())
	in[account.CatTransaction] += 2
	in[account.CatError] += 2
	in[account.CatLogItem] += 4
	require.NoError(h.t, h.traces.ConsumeTraces(context.Background(), td))
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), ld))
}

func (h *faultHarness) project(name string) *project { return h.exp.static[name] }

// requireHealthyGotAll: project 1 stored every item it was handed.
func (h *faultHarness) requireHealthyGotAll() {
	got := byProject(h.sentry)[healthyProject]
	in := h.in[healthyProject]
	require.EqualValues(h.t, in[account.CatTransaction], got[envelope.ItemTypeTransaction], "transactions")
	require.EqualValues(h.t, in[account.CatError], got[envelope.ItemTypeEvent], "errors")
	require.EqualValues(h.t, in[account.CatLogItem], got[envelope.ItemTypeLog], "logs")
}

// count reads a counter of one project and category.
func (h *faultHarness) count(metric, p string, cat account.Category, extra ...string) int64 {
	attrs := map[string]string{"project": p, "category": string(cat.Wire())}
	for i := 0; i+1 < len(extra); i += 2 {
		attrs[extra[i]] = extra[i+1]
	}
	return h.sum(metric, attrs)
}

// requireInvariant: for each project and category, in = sent + dropped.
func (h *faultHarness) requireInvariant() {
	for _, p := range []string{healthyProject, sickProject} {
		for _, cat := range []account.Category{account.CatError, account.CatTransaction, account.CatSpan, account.CatLogItem} {
			sent := h.count("otelcol_exporter_sentry_sent_items", p, cat)
			dropped := h.count("otelcol_exporter_sentry_dropped_items", p, cat)
			assert.Equal(h.t, h.in[p][cat], sent+dropped, "project %s, %s: in = sent + dropped", p, cat.Wire())
		}
	}
}

// shutdown stops both pipelines and returns how long that took (logged, not asserted).
func (h *faultHarness) shutdownTimed() time.Duration {
	start := time.Now()
	h.shutdown()
	return time.Since(start)
}

// Every network fault, met by project 2 while project 1 is healthy:
//   - pushes return at once, whatever project 2's network does;
//   - project 1 gets all its data while the fault is in progress;
//   - a request that hangs is ended only by shutdown (the client has no timeout
//     here, so a leak would hang the test): cancelled and counted network_error,
//     with what was still queued behind it;
//   - a fault that fails fast is retried per retry_on_failure (at most 3
//     attempts here; probes after no answer are spaced), then counted
//     network_error;
//   - an answer whose status arrived is final, whatever its body does: the
//     body is read at most 16 KiB deep and for at most maxAnswerRead;
//   - in = sent + dropped for each project and category.
func TestNetworkFaults(t *testing.T) {
	var hugeWritten atomic.Int64
	for _, row := range networkFaults(&hugeWritten) {
		t.Run(row.name, func(t *testing.T) {
			f := row.fault(t)
			h := newFaultHarness(t, f.dsn, f.dial, nil)
			h.push("sick", sickProject) // returns at once: handed over
			if f.met != nil {
				<-f.met
			}
			for range 3 {
				h.push("healthy", healthyProject)
			}
			waitIdle(h.project("healthy").lane)
			h.requireHealthyGotAll()
			if f.hangs {
				h.requireHangInProgress(f)
			} else {
				waitIdle(h.project("sick").lane) // a fault that ends by itself: every envelope settles before shutdown
			}
			took := h.shutdownTimed()
			t.Logf("shutdown took %v", took)
			h.requireInvariant()
			h.requireFaultCounted(f)
		})
	}
	assert.Less(t, hugeWritten.Load(), int64(64<<20), "the huge body was not read to its end")
}

// networkFault is what project 2's network does, and what follows.
type networkFault struct {
	dsn     string              // of project 2
	dial    sendtest.Middleware // nil: net/http's own
	met     <-chan struct{}     // closed once the fault was met; nil: not observable
	hangs   bool                // the first request stays open until shutdown cancels it
	stored  bool                // Sentry's status (200) arrived: the items count as sent
	retried bool                // each envelope was tried 3 times before counted
}

// networkFaults are TestNetworkFaults' rows; hugeWritten counts what the
// huge body's server wrote.
func networkFaults(hugeWritten *atomic.Int64) []struct {
	name  string
	fault func(t *testing.T) networkFault
} {
	type fault = networkFault
	return []struct {
		name  string
		fault func(t *testing.T) networkFault
	}{
		{"accepted, never answered", func(t *testing.T) fault {
			addr, met := blackhole(t)
			return fault{dsn: "http://publickey@" + addr + "/2", met: met, hangs: true}
		}},
		{"connect never completes", func(t *testing.T) fault {
			return fault{dsn: "http://publickey@" + fullBacklog(t) + "/2", hangs: true}
		}},
		{"DNS never answers", func(t *testing.T) fault {
			addr, met := fakeDNS(t, false)
			return fault{dsn: "http://publickey@sentry.sick.example:9/2", dial: dnsThrough(t, addr), met: met, hangs: true}
		}},
		{"DNS NXDOMAIN", func(t *testing.T) fault {
			addr, _ := fakeDNS(t, true)
			return fault{dsn: "http://publickey@sentry.sick.example:9/2", dial: dnsThrough(t, addr), retried: true}
		}},
		{"TLS handshake never finishes", func(t *testing.T) fault {
			addr, met := blackhole(t)
			return fault{dsn: "https://publickey@" + addr + "/2", met: met, hangs: true}
		}},
		{"headers, then a body that never ends", func(t *testing.T) fault {
			url, met := answering(t, dribble)
			return fault{dsn: strings.Replace(url, "http://", "http://publickey@", 1) + "/2", met: met, stored: true}
		}},
		{"reset mid-body", func(t *testing.T) fault {
			url, _ := answering(t, resetMidBody)
			return fault{dsn: strings.Replace(url, "http://", "http://publickey@", 1) + "/2", stored: true}
		}},
		{"huge body", func(t *testing.T) fault {
			url, _ := answering(t, hugeBody(hugeWritten))
			return fault{dsn: strings.Replace(url, "http://", "http://publickey@", 1) + "/2", stored: true}
		}},
	}
}

// requireHangInProgress: while project 2's request hangs, it holds its
// envelopes (the gauge says so), the hung request counts in flight, and it
// sends one at a time; project 1 holds nothing.
func (h *faultHarness) requireHangInProgress(f networkFault) {
	t := h.t
	require.Positive(t, h.project("sick").lane.Held(), "the fault is still in progress")
	assert.Equal(t, h.project("sick").lane.Held(), h.pendingBytes(sickProject), "the gauge shows what the faulty project holds")
	assert.Zero(t, h.pendingBytes(healthyProject), "the healthy project holds nothing once its data is sent")
	// The request that hangs counts against the memory budget: its body
	// on the wire and the fixed cost of a request; the healthy project holds none.
	if f.met != nil {
		held := h.project("sick").lane.InFlightBytes()
		assert.Greater(t, held, int64(32<<10), "the hung request is counted in flight")
		assert.Equal(t, held, h.gauge("otelcol_exporter_sentry_in_flight_bytes", sickProject))
	}
	assert.Zero(t, h.gauge("otelcol_exporter_sentry_in_flight_bytes", healthyProject))
	assert.EqualValues(t, 1, h.gauge("otelcol_exporter_sentry_concurrency_limit", sickProject), "a project whose request got no answer sends one at a time")
}

// requireFaultCounted: after shutdown, project 2's items are sent or counted
// network_error, project 1 dropped nothing, and project 2's failed requests
// are as many as the fault makes.
func (h *faultHarness) requireFaultCounted(f networkFault) {
	t := h.t
	for _, cat := range []account.Category{account.CatError, account.CatTransaction, account.CatSpan, account.CatLogItem} {
		if f.stored {
			assert.Equal(t, h.in[sickProject][cat], h.count("otelcol_exporter_sentry_sent_items", sickProject, cat), "%s sent", cat.Wire())
		} else {
			assert.Equal(t, h.in[sickProject][cat], h.count("otelcol_exporter_sentry_dropped_items", sickProject, cat, "reason", "network_error"),
				"%s counted network_error", cat.Wire())
		}
		assert.Zero(t, h.count("otelcol_exporter_sentry_dropped_items", healthyProject, cat), "project 1 dropped nothing")
	}
	failed := h.sum("otelcol_exporter_sentry_requests", map[string]string{"project": sickProject, "status": "network_error"})
	switch {
	case f.retried:
		// Each probe after one with no answer waits its gap (50 ms, then
		// 100 ms: initial_interval), so not every envelope fits its third
		// attempt in max_elapsed_time.
		assert.GreaterOrEqual(t, failed, int64(2*5+1), "5 envelopes, each retried, and the final client report")
		assert.LessOrEqual(t, failed, int64(3*5+1), "at most 3 attempts each")
	case f.hangs:
		assert.EqualValues(t, 1+1, failed, "one request was in flight (cancelled), the rest never went out; and the final client report")
	default:
		assert.Zero(t, failed)
	}
}
