package sentryexporter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// gatewayBatch is one batch from three services (and one without routing
// entry): 2 traces with exceptions and 4 logs per service.
func gatewayBatch(services ...string) (ptrace.Traces, plog.Logs) {
	td := ptrace.NewTraces()
	ld := plog.NewLogs()
	for i, svc := range services {
		t := makeTraces(i*10, 2, true)
		t.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", svc)
		t.ResourceSpans().At(0).CopyTo(td.ResourceSpans().AppendEmpty())
		l := makeLogs(4)
		l.ResourceLogs().At(0).Resource().Attributes().PutStr("service.name", svc)
		l.ResourceLogs().At(0).CopyTo(ld.ResourceLogs().AppendEmpty())
	}
	return td, ld
}

// byProject counts what each fake project stored, by item type.
func byProject(f *fakeSentry) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == envelope.ItemTypeClientReport {
				continue
			}
			if out[r.project] == nil {
				out[r.project] = map[string]int{}
			}
			n := 1
			if it.ItemCount > 0 {
				n = it.ItemCount
			}
			out[r.project][it.Type] += n
		}
	}
	return out
}

// Three services through one exporter to three projects: each project gets
// exactly its own spans, logs and errors; a limit on one leaves the others
// untouched.
func TestStaticRoutingThreeProjects(t *testing.T) { synctest.Test(t, testStaticRoutingThreeProjects) }

func testStaticRoutingThreeProjects(t *testing.T) {
	sentry := newMemSentry(t)
	h := newHarnessWith(t, sentry, func(c *Config) {
		c.DSN = ""
		c.Routing.DSNs = map[string]configopaque.String{
			"payments": configopaque.String(sentry.dsnFor("2")),
			"search":   configopaque.String(sentry.dsnFor("3")),
			"checkout": configopaque.String(sentry.dsnFor("4")),
		}
	})
	sentry.setRespond(searchOverErrorQuota())
	for range 2 {
		td, ld := gatewayBatch("payments", "search", "checkout", "unknown")
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
		require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
	}
	h.shutdown()
	sentry.requireNoInvalid()

	got := byProject(sentry)
	assert.Equal(t, map[string]int{"transaction": 4, "event": 4, "log": 8}, got["2"], "payments")
	// search: the first batch's two error events are in flight together and
	// both meet the 429; the second batch's are dropped before sending.
	assert.Equal(t, map[string]int{"transaction": 4, "event": 2, "log": 8}, got["3"], "search")
	assert.Equal(t, map[string]int{"transaction": 4, "event": 4, "log": 8}, got["4"], "checkout")
	assert.Len(t, got, 3, "nothing reached any other project")

	assert.EqualValues(t, 2, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "3", "category": "error", "reason": "rate_limited"}))
	assert.EqualValues(t, 2, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "3", "category": "error", "reason": "ratelimit_backoff"}))
	assert.Zero(t, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": "3", "category": "error"}))
	for _, p := range []string{"2", "4"} {
		assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": p}), "project %s untouched", p)
		assert.EqualValues(t, 4, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": p, "category": "error"}))
	}
	// "unknown" has no entry and there is no `dsn`: counted, never silent.
	assert.EqualValues(t, 12, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "unroutable", "category": "span", "reason": "unroutable"}))
	assert.EqualValues(t, 4, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "unroutable", "category": "error", "reason": "unroutable"}))
	assert.EqualValues(t, 8, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "unroutable", "category": "log_item", "reason": "unroutable"}))
}

// searchOverErrorQuota answers 429 to project 3's (search) error events,
// 200 to everything else. The first batch's two search errors are sent
// concurrently; the fake holds the first answer until the second has
// arrived, so both meet the 429 whatever the scheduler does (otherwise the
// second may see the limit and be dropped locally, which is correct too but
// not what TestStaticRoutingThreeProjects counts).
func searchOverErrorQuota() func(*envelope.Envelope) answer {
	var arrivals atomic.Int32
	bothArrived := make(chan struct{})
	return func(env *envelope.Envelope) answer {
		if !slices.ContainsFunc(env.Items, func(it envelope.Item) bool { return it.Type == envelope.ItemTypeEvent }) ||
			env.Header.Trace == nil || sentryProjectOf(env) != "search" {
			return answer{status: http.StatusOK}
		}
		if arrivals.Add(1) == 2 {
			close(bothArrived)
		}
		select {
		case <-bothArrived:
		case <-time.After(10 * time.Second): // fail on the counts, not by hanging
		}
		return answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "60:error:project"}}
	}
}

// sentryProjectOf finds the service of an error event by its tags.
func sentryProjectOf(env *envelope.Envelope) string {
	for _, it := range env.Items {
		if it.Type == envelope.ItemTypeEvent {
			if strings.Contains(string(it.Payload), `"service.name":"search"`) {
				return "search"
			}
		}
	}
	return ""
}

// Values without an entry go to `dsn` when there is one.
func TestStaticRoutingDefault(t *testing.T) { synctest.Test(t, testStaticRoutingDefault) }

func testStaticRoutingDefault(t *testing.T) {
	sentry := newMemSentry(t)
	h := newHarnessWith(t, sentry, func(c *Config) {
		c.DSN = configopaque.String(sentry.dsnFor("1"))
		c.Routing.DSNs = map[string]configopaque.String{"payments": configopaque.String(sentry.dsnFor("2"))}
	})
	td, ld := gatewayBatch("payments", "other")
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
	require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
	h.shutdown()
	got := byProject(sentry)
	assert.Equal(t, 2, got["1"]["transaction"])
	assert.Equal(t, 2, got["2"]["transaction"])
	assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", nil))
}

// fakeManagement plays Sentry's management API: projects known by slug, keys
// pointing at the fake Sentry, auto-create through the team endpoint, and a
// 429 with X-Sentry-Rate-Limit-Reset when told to.
type fakeManagement struct {
	mu        sync.Mutex
	url       string            // the API's base URL
	projects  map[string]string // slug -> project id
	nextID    int
	calls     int
	created   []string
	limitOnce bool
	gate      chan struct{} // when set, key look-ups answer only once it is closed
	sentry    *fakeSentry
	reset     func() int64
}

func newFakeManagement(t *testing.T, sentry *fakeSentry, reset func() int64) *fakeManagement {
	m := &fakeManagement{projects: map[string]string{"payments": "2"}, nextID: 10, sentry: sentry, reset: reset}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/0/projects/my-org/{slug}/keys/", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		gate := m.gate
		m.mu.Unlock()
		if gate != nil {
			<-gate
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.calls++
		if r.Header.Get("Authorization") != "Bearer sntrys_token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if m.limitOnce {
			m.limitOnce = false
			w.Header().Set("X-Sentry-Rate-Limit-Reset", strconv.FormatInt(m.reset(), 10))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		id, ok := m.projects[r.PathValue("slug")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, `[{"id":"k","public":"publickey","isActive":true,"projectId":%s,"dsn":{"public":%q}}]`, id, m.sentry.dsnFor(id))
	})
	mux.HandleFunc("POST /api/0/teams/my-org/platform/projects/", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.calls++
		var body struct{ Slug string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		m.projects[body.Slug] = strconv.Itoa(m.nextID)
		m.nextID++
		m.created = append(m.created, body.Slug)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":%q,"slug":%q}`, m.projects[body.Slug], body.Slug)
	})
	m.url = serveAPI(t, sentry, mux)
	return m
}

// serveAPI serves a fake management API where sentry is: on its in-memory
// network, or on a test server. It returns the API's base URL.
func serveAPI(t *testing.T, sentry *fakeSentry, h http.Handler) string {
	if sentry.net != nil {
		sentry.net.serve(memAPIHost, h)
		return "http://" + memAPIHost
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Discovery mode: known projects are resolved, unknown ones auto-created, and
// the management API's own 429 makes the exporter drop (and count) the data of
// projects it cannot resolve instead of queueing it.
func TestDiscoveryRouting(t *testing.T) { synctest.Test(t, testDiscoveryRouting) }

func testDiscoveryRouting(t *testing.T) {
	sentry := newMemSentry(t)
	mgmt := newFakeManagement(t, sentry, func() int64 { return time.Now().Add(30 * time.Second).Unix() })
	h := newHarnessWith(t, sentry, func(c *Config) {
		c.DSN = ""
		c.Routing.Discovery = configoptional.Some(DiscoveryConfig{
			URL: mgmt.url, OrgSlug: "my-org", AuthToken: "sntrys_token",
			AutoCreateProjects: true, Team: "platform", CacheTTL: defaultDiscoveryTTL,
		})
	})

	// The API is rate limited first: "payments" cannot be resolved, its data is dropped.
	mgmt.limitOnce = true
	td, ld := gatewayBatch("payments")
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
	assert.EqualValues(t, 6, h.sum("otelcol_exporter_sentry_dropped_items", map[string]string{"project": "unroutable", "category": "span"}))
	callsDuringLimit := mgmt.calls
	require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
	assert.Equal(t, callsDuringLimit, mgmt.calls, "no API call before the reset")

	time.Sleep(31 * time.Second)
	td, ld = gatewayBatch("payments", "Search Service")
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
	require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
	td, _ = gatewayBatch("payments", "Search Service")
	require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
	h.shutdown()
	sentry.requireNoInvalid()

	assert.Equal(t, []string{"search-service"}, mgmt.created, "the unknown project was created once, by its slug")
	assert.EqualValues(t, 1, h.sum("otelcol_exporter_sentry_projects_created", nil), "the creation counted")
	got := byProject(sentry)
	assert.Equal(t, map[string]int{"transaction": 4, "event": 4, "log": 4}, got["2"], "payments")
	assert.Equal(t, map[string]int{"transaction": 4, "event": 4, "log": 4}, got["10"], "search-service, created")
	assert.LessOrEqual(t, mgmt.calls, 1+1+2+1, "limited call, then one lookup per project (plus the create), cached afterwards")
}

// A management API that never answers cannot hold the shutdown: a push
// waiting on discovery gives up when pending::drain_timeout is over after
// shutdown began, and its items are counted unroutable.
func TestDiscoveryHangingAPIEndsWithTheDrain(t *testing.T) {
	synctest.Test(t, testDiscoveryHangingAPIEndsWithTheDrain)
}

func testDiscoveryHangingAPIEndsWithTheDrain(t *testing.T) {
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	sentry := newMemSentry(t)
	api := serveAPI(t, sentry, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release) })
	h := newHarnessWith(t, sentry, func(c *Config) {
		c.DSN = ""
		c.Routing.Discovery = configoptional.Some(DiscoveryConfig{URL: api, OrgSlug: "my-org", AuthToken: "sntrys_token", CacheTTL: defaultDiscoveryTTL})
		c.Pending.DrainTimeout = 50 * time.Millisecond
	})
	pushed := make(chan error, 1)
	go func() { pushed <- h.exp.pushTraces(t.Context(), makeTraces(0, 2, false)) }()
	<-asked
	h.exp.beginShutdown()
	select {
	case err := <-pushed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second): // a guard against a hang, far above the 50 ms drain; without it the lookup's own 30 s timeout would end the push
		t.Fatal("the push still waits on discovery after the drain time")
	}
	assert.EqualValues(t, 2*3, h.sum("otelcol_exporter_sentry_dropped_items",
		map[string]string{"project": "unroutable", "category": "span", "reason": "unroutable"}))
}

// Shutting down while a look-up hangs in the background ends it: the
// exporter's shutdown stops discovery (Resolver.Shutdown), and no goroutine
// of it outlives the exporter (goleak). The push gave up on the look-up
// after discoveryWait (virtual time), which went on in the background.
func TestDiscoveryShutdownMidLookup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := goleak.IgnoreCurrent()
		sentry := newMemSentry(t)
		asked := make(chan struct{}, 1)
		api := serveAPI(t, sentry, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			select {
			case asked <- struct{}{}:
			default:
			}
			<-r.Context().Done() // never answers
		}))
		h := newHarnessWith(t, sentry, func(c *Config) {
			c.DSN = ""
			c.Routing.Discovery = configoptional.Some(DiscoveryConfig{URL: api, OrgSlug: "my-org", AuthToken: "sntrys_token", CacheTTL: defaultDiscoveryTTL})
		})
		start := time.Now()
		require.NoError(t, h.exp.pushTraces(t.Context(), makeTraces(0, 1, false)))
		assert.Equal(t, discoveryWait, time.Since(start), "the push waited discoveryWait, no longer")
		<-asked
		h.shutdown()
		goleak.VerifyNone(t, before)
	})
}

// A slow management API holds a push for at most discoveryWait: the items of
// the project being looked up are counted unroutable (the other resources of
// the batch go on), and the look-up, finished in the background, serves the
// next push from the cache.
func TestDiscoverySlowAPIHoldsAPushBriefly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		mgmt := newFakeManagement(t, sentry, func() int64 { return 0 })
		mgmt.projects["checkout"] = "5"
		mgmt.gate = make(chan struct{})
		h := newHarnessWith(t, sentry, func(c *Config) {
			c.DSN = ""
			c.Routing.Discovery = configoptional.Some(DiscoveryConfig{URL: mgmt.url, OrgSlug: "my-org", AuthToken: "sntrys_token", CacheTTL: defaultDiscoveryTTL})
		})
		start := time.Now()
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), makeTraces(0, 2, false)))
		assert.Equal(t, discoveryWait, time.Since(start), "the push waited discoveryWait, no longer: the look-up never ends before the gate opens")
		assert.EqualValues(t, 2*3, h.sum("otelcol_exporter_sentry_dropped_items",
			map[string]string{"project": "unroutable", "category": "span", "reason": "unroutable"}))

		close(mgmt.gate) // the look-up in the background completes and is cached
		synctest.Wait()
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), makeTraces(10, 1, false)))
		assert.Positive(t, byProject(sentry)["5"]["transaction"], "a later push is routed by the cached look-up")
		h.shutdown()
		sentry.requireNoInvalid()
	})
}

// Discovery's client is its own: the envelopes' `headers` (a Relay's token
// here, and an Authorization that would replace the auth token) never reach
// the management API, and a management API that redirects to another host
// gets no call there: the auth token stays on its host.
func TestDiscoveryCredentialsStayWithTheirHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		var seen []http.Header
		var mu sync.Mutex
		api := serveAPI(t, sentry, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Clone())
			mu.Unlock()
			http.Redirect(w, r, "http://"+memThiefHost+"/api/0/", http.StatusFound)
		}))
		var stolen atomic.Int64
		sentry.net.serve(memThiefHost, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) }))
		h := newHarnessWith(t, sentry, func(c *Config) {
			c.DSN = ""
			c.ClientConfig.Headers = configopaque.MapList{{Name: "Authorization", Value: "Bearer relay-token"}, {Name: "X-Relay", Value: "relay-secret"}}
			c.Routing.Discovery = configoptional.Some(DiscoveryConfig{URL: api, OrgSlug: "my-org", AuthToken: "sntrys_token", CacheTTL: defaultDiscoveryTTL})
		})
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), makeTraces(0, 1, false)))
		h.shutdown()
		assert.Zero(t, stolen.Load(), "the redirect to another host was not followed")
		require.NotEmpty(t, seen)
		for _, hdr := range seen {
			assert.Equal(t, "Bearer sntrys_token", hdr.Get("Authorization"), "the auth token, not the envelopes' header")
			assert.Empty(t, hdr.Get("X-Relay"), "the envelopes' headers stay with the envelopes")
		}
		assert.EqualValues(t, 3, h.sum("otelcol_exporter_sentry_dropped_items",
			map[string]string{"project": "unroutable", "category": "span", "reason": "unroutable"}))
	})
}

// A batch of many new names waits discoveryWait once, not once per name:
// its look-ups run concurrently, all within one deadline.
func TestDiscoveryManyNamesOneWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		mgmt := newFakeManagement(t, sentry, func() int64 { return 0 })
		mgmt.gate = make(chan struct{})
		h := newHarnessWith(t, sentry, func(c *Config) {
			c.DSN = ""
			c.Routing.Discovery = configoptional.Some(DiscoveryConfig{URL: mgmt.url, OrgSlug: "my-org", AuthToken: "sntrys_token", CacheTTL: defaultDiscoveryTTL})
		})
		names := make([]string, 40)
		for i := range names {
			names[i] = fmt.Sprintf("preview-%d", i)
		}
		td, _ := gatewayBatch(names...)
		start := time.Now()
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
		assert.Equal(t, discoveryWait, time.Since(start), "one wait for the whole batch")
		assert.EqualValues(t, 40*6, h.sum("otelcol_exporter_sentry_dropped_items",
			map[string]string{"project": "unroutable", "category": "span", "reason": "unroutable"}))
		close(mgmt.gate)
		h.shutdown()
	})
}
