package sentryexporter

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
	"github.com/otel-sentry/sentryexporter/internal/send"
)

// TestProjectStatus: the exporter's component status from its projects'
// health, by the rules of projectStatus.
func TestProjectStatus(t *testing.T) {
	since := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	ok := send.Health{}
	refused := send.Health{State: send.HealthRefused, Status: 401}
	down := send.Health{State: send.HealthUnreachable, Since: since}
	tests := []struct {
		name      string
		health    []projectHealth
		discovery bool
		want      componentstatus.Status
		wantErr   []string
	}{
		{"all answer", []projectHealth{{"1", ok}, {"2", ok}}, false, componentstatus.StatusOK, nil},
		{
			"the only project's key refused",
			[]projectHealth{{"1", refused}},
			false, componentstatus.StatusPermanentError,
			[]string{"project 1 refused its key (HTTP 401)"},
		},
		{
			"every project's key refused",
			[]projectHealth{{"1", refused}, {"2", refused}},
			false, componentstatus.StatusPermanentError,
			[]string{"project 1 refused", "project 2 refused"},
		},
		{"every key refused, but discovery may add projects", []projectHealth{{"1", refused}}, true, componentstatus.StatusRecoverableError, nil},
		{
			"one key refused among healthy projects",
			[]projectHealth{{"1", ok}, {"2", refused}},
			false, componentstatus.StatusRecoverableError,
			[]string{"project 2 refused its key (HTTP 401)"},
		},
		{
			"one project unreachable",
			[]projectHealth{{"1", ok}, {"7", down}},
			false, componentstatus.StatusRecoverableError,
			[]string{"project 7: no answer or only 5xx from Sentry since 2026-12-02T10:00:00Z"},
		},
		{
			"one refused, one unreachable",
			[]projectHealth{{"1", down}, {"2", refused}},
			false, componentstatus.StatusRecoverableError,
			[]string{"project 2 refused", "project 1: no answer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := projectStatus(tt.health, tt.discovery)
			assert.Equal(t, tt.want, ev.Status())
			for _, want := range tt.wantErr {
				require.Error(t, ev.Err())
				assert.Contains(t, ev.Err().Error(), want)
			}
			if tt.want == componentstatus.StatusOK {
				assert.NoError(t, ev.Err())
			}
		})
	}
}

// statusHost records the component status the exporter reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
}

func (h *statusHost) last() *componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return nil
	}
	return h.events[len(h.events)-1]
}

// answerStatus makes f answer every envelope with status, and returns the
// func that changes it.
func answerStatus(f *fakeSentry, status int) (set func(int)) {
	var mu sync.Mutex
	f.setRespond(func(*envelope.Envelope) answer {
		mu.Lock()
		defer mu.Unlock()
		return answer{status: status}
	})
	return func(s int) {
		mu.Lock()
		defer mu.Unlock()
		status = s
	}
}

// requireRefusedReported: ev is the recoverable error of project 2's
// refused key, naming neither the key nor the healthy project 1.
func requireRefusedReported(t *testing.T, ev *componentstatus.Event) {
	t.Helper()
	require.NotNil(t, ev, "a refused key is reported to every pipeline's instance")
	assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status(), "one bad project among many degrades the gateway")
	assert.Contains(t, ev.Err().Error(), "project 2 refused its key (HTTP 401)")
	assert.NotContains(t, ev.Err().Error(), "revokedkey123")
	assert.NotContains(t, ev.Err().Error(), "project 1")
}

// TestStatusThroughAnswers: a gateway of two projects whose second one's
// Sentry answers 401, then 503 for longer than unreachableAfter, then 200:
// each pipeline's component instance sees a recoverable error naming that
// project (never its key), then another, then OK again; the healthy project
// is never reported.
func TestStatusThroughAnswers(t *testing.T) { synctest.Test(t, testStatusThroughAnswers) }

func testStatusThroughAnswers(t *testing.T) {
	net := newMemNet()
	healthy, sick := newMemSentryOn(t, net, memSentryHost), newMemSentryOn(t, net, memSickHost)
	setStatus := answerStatus(sick, http.StatusUnauthorized)
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Routing.DSNs = map[string]configopaque.String{
		"healthy": configopaque.String(healthy.dsnFor("1")),
		"sick":    configopaque.String(strings.Replace(sick.dsnFor("2"), "public@", "revokedkey123@", 1)),
	}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.Enabled = false
	cfg.ClientReports.Enabled = false
	useMemNet(&cfg.ClientConfig)
	set := exportertest.NewNopSettings(metadata.Type)
	te, err := f.CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	le, err := f.CreateLogs(t.Context(), set, cfg)
	require.NoError(t, err)
	tracesHost, logsHost := &statusHost{Host: net.host()}, &statusHost{Host: net.host()}
	require.NoError(t, te.Start(t.Context(), tracesHost))
	require.NoError(t, le.Start(t.Context(), logsHost))
	exp := exporterOf(te)
	push := func() {
		for _, svc := range []string{"healthy", "sick"} {
			td := makeTraces(0, 1, false)
			td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", svc)
			require.NoError(t, te.ConsumeTraces(t.Context(), td))
		}
		exp.settleInBubble()
		exp.reportStatus()
	}

	push()
	for _, h := range []*statusHost{tracesHost, logsHost} {
		requireRefusedReported(t, h.last())
	}

	setStatus(http.StatusServiceUnavailable)
	push() // the first 503: no longer refused, not yet unreachable
	assert.Equal(t, componentstatus.StatusOK, tracesHost.last().Status())
	time.Sleep(unreachableAfter + time.Second)
	push()
	ev := tracesHost.last()
	assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	assert.Contains(t, ev.Err().Error(), "project 2: no answer or only 5xx from Sentry since")

	setStatus(http.StatusOK)
	push()
	assert.Equal(t, componentstatus.StatusOK, tracesHost.last().Status(), "the next 2xx ends it")
	assert.Equal(t, componentstatus.StatusOK, logsHost.last().Status())
	n := len(tracesHost.events)
	push()
	assert.Len(t, tracesHost.events, n, "reported when it changes, not on every tick")

	require.NoError(t, te.Shutdown(t.Context()))
	require.NoError(t, le.Shutdown(t.Context()))
}
