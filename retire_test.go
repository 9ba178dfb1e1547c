package sentryexporter

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// churnDiscovery is discovery through mgmt with room for maxProjects
// projects, each retired after idle without items.
func churnDiscovery(mgmt *fakeManagement, maxProjects int, idle time.Duration) func(*Config) {
	return func(c *Config) {
		c.DSN = ""
		c.Routing.MaxProjects = maxProjects
		c.Routing.IdleTimeout = idle
		c.Routing.Discovery = configoptional.Some(DiscoveryConfig{
			URL: mgmt.url, OrgSlug: "my-org", AuthToken: "sntrys_token", AutoCreateProjects: true, Team: "platform",
			CacheTTL: defaultDiscoveryTTL, LookupsPerMinute: 600, MaxCreatedPerHour: 100, MaxCreated: 100,
		})
	}
}

// TestIdleProjectsReleaseTheirSlots: nine service names, three times
// routing::max_projects, arrive one after another, while payments sends
// every 30 s throughout. Each name's project retires a minute after its
// last items, and its slot goes to the next name: every name is routed,
// nothing is unroutable, every span and log is stored once, and payments,
// in use all along, keeps its project. A retired name that comes back is
// routed again.
func TestIdleProjectsReleaseTheirSlots(t *testing.T) {
	synctest.Test(t, testIdleProjectsReleaseTheirSlots)
}

func testIdleProjectsReleaseTheirSlots(t *testing.T) {
	sentry := newMemSentry(t)
	mgmt := newFakeManagement(t, sentry, func() int64 { return 0 })
	h := newHarnessWith(t, sentry, churnDiscovery(mgmt, 3, time.Minute))
	push := func(services ...string) {
		td, ld := gatewayBatch(services...)
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
		require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
	}
	start := time.Now()
	points := 0
	metrics := func(service string) { // 4 cumulative streams, read twice: a baseline, then deltas
		for k := range 2 {
			require.NoError(t, h.metrics.ConsumeMetrics(t.Context(), counters(service, "/r", 4, start, time.Now(), int64(k+1))))
			points += 4
		}
	}
	const names = 9
	batches := 0 // a service's traces and logs
	var payments *project
	for i := range names + 1 {
		name := fmt.Sprintf("preview-%d", i%names) // the last is preview-0 again
		push("payments", name)
		metrics(name)
		batches += 2
		if payments == nil {
			payments = h.exp.byDSN[sentry.dsnFor("2")]
			require.NotNil(t, payments)
		}
		for range 4 { // 2 minutes: the name goes idle, payments does not
			time.Sleep(30 * time.Second)
			push("payments")
			batches++
		}
	}
	assert.Same(t, payments, h.exp.byDSN[sentry.dsnFor("2")], "payments was never retired")
	retired := h.sum("otelcol_exporter_sentry_projects_retired", nil)
	assert.Equal(t, payments.streams.Held(), h.exp.streams.Held(), "the retired projects' streams were given back")
	assert.Len(t, h.exp.stage.Lanes(), 1, "only payments' lane is left in the send stage")
	h.shutdown()
	sentry.requireNoInvalid()

	assert.Zero(t, h.dropped("span", "unroutable"), "every name found a slot")
	assert.Zero(t, h.droppedAll("span"))
	assert.Zero(t, h.droppedAll("log_item"))
	assert.EqualValues(t, 6*batches, h.sent("span"), "each span stored once")
	assert.EqualValues(t, 4*batches, h.sent("log_item"), "each log stored once")
	assert.EqualValues(t, points/2, h.sent("trace_metric"), "each stream's second point, a delta")
	assert.EqualValues(t, points/2, h.dropped("trace_metric", "no_baseline"), "each stream's first point, a baseline")
	assert.Len(t, mgmt.created, names, "each name created once; preview-0 came back to its project")
	got := byProject(sentry)
	for id := 10; id < 10+names; id++ {
		assert.NotEmpty(t, got[fmt.Sprint(id)]["log"], "project %d got its items", id)
	}
	assert.EqualValues(t, names+1, retired, "each name's project retired once it was idle, preview-0 twice")
}

// TestProjectInUseIsNeverRetired: a project whose envelopes wait for a
// Sentry that does not answer holds them past idle_timeout and is not
// retired; once they are stored, it retires, and nothing of it was lost.
func TestProjectInUseIsNeverRetired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		mgmt := newFakeManagement(t, sentry, func() int64 { return 0 })
		h := newHarnessWith(t, sentry, churnDiscovery(mgmt, 2, time.Minute))
		sentry.setRespond(func(*envelope.Envelope) answer { return answer{hang: true} })
		td, _ := gatewayBatch("slow")
		require.NoError(t, h.exp.pushTraces(t.Context(), td)) // returns at once: the envelopes wait in the lane
		slow := h.exp.byDSN[sentry.dsnFor("10")]
		require.NotNil(t, slow)
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		assert.Same(t, slow, h.exp.byDSN[sentry.dsnFor("10")], "its envelopes are unsettled: it stays")
		assert.Zero(t, h.sum("otelcol_exporter_sentry_projects_retired", nil))

		sentry.setRespond(nil)
		waitIdleInBubble(slow.lane)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		assert.NotContains(t, h.exp.byDSN, sentry.dsnFor("10"), "settled and idle: retired")
		assert.EqualValues(t, 1, h.sum("otelcol_exporter_sentry_projects_retired", nil))
		assert.NotContains(t, h.exp.stage.Lanes(), slow.lane, "its lane left the stage at the next tick")
		h.shutdown()
		assert.EqualValues(t, 6, h.sent("span"), "stored once")
		assert.Zero(t, h.droppedAll("span"))
	})
}

// TestAProjectInUseKeepsItsSlot, on the exporter's clock: a project a push
// is using stays however long the clock runs; idleness counts from the
// end of its last use; when every slot is taken, a new project retires an
// idle one at once, and none that is in use.
func TestAProjectInUseKeepsItsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		mgmt := newFakeManagement(t, sentry, func() int64 { return 0 })
		h := newHarnessWith(t, sentry, churnDiscovery(mgmt, 2, time.Minute))
		e := h.exp
		core, logs := observer.New(zap.InfoLevel)
		e.logger = zap.New(core)
		now := time.Now()
		e.now = func() time.Time { return now }
		a, err := e.useProject(sentry.dsnFor("20"))
		require.NoError(t, err)
		now = now.Add(time.Hour)
		e.retireIdle(t.Context())
		assert.Same(t, a, e.byDSN[sentry.dsnFor("20")], "in use: kept")
		e.done(a)
		e.retireIdle(t.Context())
		assert.Same(t, a, e.byDSN[sentry.dsnFor("20")], "idle from the end of its use")

		b, err := e.useProject(sentry.dsnFor("21"))
		require.NoError(t, err)
		now = now.Add(time.Minute)
		c, err := e.useProject(sentry.dsnFor("22"))
		require.NoError(t, err, "the idle project gave its slot")
		assert.NotContains(t, e.byDSN, sentry.dsnFor("20"))
		_, err = e.useProject(sentry.dsnFor("23"))
		require.Error(t, err, "both projects left are in use")
		assert.Same(t, b, e.byDSN[sentry.dsnFor("21")])
		assert.Same(t, c, e.byDSN[sentry.dsnFor("22")])
		e.done(b)
		e.done(c)
		h.shutdown()
		assert.EqualValues(t, 1, h.sum("otelcol_exporter_sentry_projects_retired", nil))
		retiredLogs := logs.FilterMessageSnippet("Sentry projects retired").All()
		require.Len(t, retiredLogs, 1)
		assert.Equal(t, []any{"20"}, retiredLogs[0].ContextMap()["projects"], "by project id")
		for _, l := range logs.All() {
			assert.NotContains(t, fmt.Sprint(l.Message, l.ContextMap()), "publickey", "no DSN key in a log")
		}
	})
}
