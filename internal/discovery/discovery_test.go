package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

const (
	testOrg   = "acme"
	testToken = "sntrys_SECRET_token_0123456789"
)

// clock is an injectable, manually advanced clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_800_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fakeKey struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Public   string `json:"public"`
	Secret   string `json:"secret"`
	IsActive bool   `json:"isActive"`
	DSN      struct {
		Public string `json:"public"`
		Secret string `json:"secret"`
	} `json:"dsn"`
}

func key(public string, projectID int, active bool) fakeKey {
	k := fakeKey{ID: public, Name: "Default", Public: public, Secret: "s" + public, IsActive: active}
	k.DSN.Public = fmt.Sprintf("https://%s@o1.ingest.sentry.io/%d", public, projectID)
	k.DSN.Secret = fmt.Sprintf("https://%s:s%s@o1.ingest.sentry.io/%d", public, public, projectID)
	return k
}

// fakeAPI is a fake Sentry management API.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	projects map[string][][]fakeKey // slug -> pages of keys
	teams    []string
	created  []string // "team/slug" of created projects
	bodies   []map[string]string
	calls    []string // "METHOD path"
	nextID   int
	// override, when set, answers instead of the default behavior; it
	// returns false to fall through.
	override func(w http.ResponseWriter, r *http.Request) bool
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, projects: map[string][][]fakeKey{}, teams: []string{"first-team", "second-team"}, nextID: 100}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) addProject(slug string, pages ...[]fakeKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.projects[slug] = pages
}

func (f *fakeAPI) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	override := f.override
	f.mu.Unlock()

	if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
		http.Error(w, `{"detail":"Invalid token"}`, http.StatusUnauthorized)
		return
	}
	if override != nil && override(w, r) {
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && len(parts) == 6 && parts[2] == "projects" && parts[5] == "keys":
		f.serveKeys(w, r, parts[3], parts[4])
	case r.Method == http.MethodPost && len(parts) == 6 && parts[2] == "teams" && parts[5] == "projects":
		f.serveCreate(w, r, parts[4])
	case r.Method == http.MethodGet && len(parts) == 5 && parts[2] == "organizations" && parts[4] == "teams":
		f.serveTeams(w)
	default:
		http.NotFound(w, r)
	}
}

// serveKeys answers GET /api/0/projects/{org}/{project}/keys/: the page the
// cursor asks for, with Sentry's Link header.
func (f *fakeAPI) serveKeys(w http.ResponseWriter, r *http.Request, org, project string) {
	if org != testOrg {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	pages, ok := f.projects[project]
	f.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"detail":"The requested resource does not exist"}`)
		return
	}
	page := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		page, _ = strconv.Atoi(strings.Split(c, ":")[1])
	}
	if page >= len(pages) {
		_, _ = io.WriteString(w, "[]")
		return
	}
	hasNext := page+1 < len(pages)
	w.Header().Set("Link", fmt.Sprintf(
		`<http://%s%s?&cursor=100:%d:1>; rel="previous"; results="%t"; cursor="100:%d:1", <http://%s%s?&cursor=100:%d:0>; rel="next"; results="%t"; cursor="100:%d:0"`,
		r.Host, r.URL.Path, max(page-1, 0), page > 0, max(page-1, 0),
		r.Host, r.URL.Path, page+1, hasNext, page+1))
	_ = json.NewEncoder(w).Encode(pages[page])
}

// serveCreate answers POST /api/0/teams/{org}/{team}/projects/: a new
// project with one key, or 409 for a slug that exists.
func (f *fakeAPI) serveCreate(w http.ResponseWriter, r *http.Request, team string) {
	var body map[string]string
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, body)
	if _, ok := f.projects[body["slug"]]; ok {
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"detail":"A project with this slug already exists."}`)
		return
	}
	f.nextID++
	f.projects[body["slug"]] = [][]fakeKey{{key("pk"+strconv.Itoa(f.nextID), f.nextID, true)}}
	f.created = append(f.created, team+"/"+body["slug"])
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"id": strconv.Itoa(f.nextID), "slug": body["slug"], "name": body["name"]})
}

// serveTeams answers GET /api/0/organizations/{org}/teams/.
func (f *fakeAPI) serveTeams(w http.ResponseWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]string
	for _, t := range f.teams {
		out = append(out, map[string]string{"id": "1", "slug": t, "name": t})
	}
	_ = json.NewEncoder(w).Encode(out)
}

// testTTL is the exporter's default cache_ttl.
const testTTL = 10 * time.Minute

func newResolver(f *fakeAPI, clk *clock, mod func(*Config)) *Resolver {
	cfg := Config{URL: f.srv.URL, OrgSlug: testOrg, AuthToken: testToken, TTL: testTTL}
	if mod != nil {
		mod(&cfg)
	}
	return New(f.srv.Client(), cfg, clk.Now)
}

func TestResolveAndCacheTTL(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("checkout", []fakeKey{key("inactive1", 42, false), key("pub42", 42, true), key("pub43", 42, true)})
	clk := newClock()
	r := newResolver(f, clk, nil)
	ctx := t.Context()

	dsn, err := r.Resolve(ctx, "checkout")
	require.NoError(t, err)
	assert.Equal(t, "https://pub42@o1.ingest.sentry.io/42", dsn)
	assert.EqualValues(t, 1, r.Lookups())
	assert.Equal(t, []string{"GET /api/0/projects/acme/checkout/keys/"}, f.callList())

	clk.Advance(testTTL - time.Second)
	dsn, err = r.Resolve(ctx, "checkout")
	require.NoError(t, err)
	assert.Equal(t, "https://pub42@o1.ingest.sentry.io/42", dsn)
	assert.EqualValues(t, 1, r.Lookups(), "cache hit within TTL")

	// The key was rotated meanwhile; after the TTL the new one is used.
	f.addProject("checkout", []fakeKey{key("rotated", 42, true)})
	clk.Advance(2 * time.Second)
	dsn, err = r.Resolve(ctx, "checkout")
	require.NoError(t, err)
	assert.Equal(t, "https://rotated@o1.ingest.sentry.io/42", dsn)
	assert.EqualValues(t, 2, r.Lookups(), "new lookup after TTL")
}

func TestCustomTTL(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("a", []fakeKey{key("pa", 1, true)})
	clk := newClock()
	r := newResolver(f, clk, func(c *Config) { c.TTL = time.Minute })
	_, err := r.Resolve(t.Context(), "a")
	require.NoError(t, err)
	clk.Advance(time.Minute)
	_, err = r.Resolve(t.Context(), "a")
	require.NoError(t, err)
	assert.EqualValues(t, 2, r.Lookups())
}

func TestPagination(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("paged",
		[]fakeKey{key("old1", 7, false), key("old2", 7, false)},
		[]fakeKey{key("old3", 7, false)},
		[]fakeKey{key("live", 7, true)},
		[]fakeKey{key("never-fetched", 7, true)},
	)
	r := newResolver(f, newClock(), nil)
	dsn, err := r.Resolve(t.Context(), "paged")
	require.NoError(t, err)
	assert.Equal(t, "https://live@o1.ingest.sentry.io/7", dsn)
	assert.EqualValues(t, 3, r.Lookups(), "stops at the page with the active key")
}

func TestPaginationNoActiveKey(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("dead", []fakeKey{key("old1", 7, false)}, []fakeKey{key("old2", 7, false)})
	r := newResolver(f, newClock(), nil)
	_, err := r.Resolve(t.Context(), "dead")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "no active key")
	assert.NotContains(t, err.Error(), "old1")
	assert.NotContains(t, err.Error(), "old2")
	assert.EqualValues(t, 2, r.Lookups(), `stops when next has results="false"`)
}

func TestLinkToOtherHostNotFollowed(t *testing.T) {
	var evilHits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		evilHits.Add(1)
		_, _ = io.WriteString(w, "[]")
	}))
	defer evil.Close()
	f := newFakeAPI(t)
	f.override = func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Link", `<`+evil.URL+`/api/0/projects/acme/x/keys/?cursor=1:1:0>; rel="next"; results="true"; cursor="1:1:0"`)
		_ = json.NewEncoder(w).Encode([]fakeKey{key("inactive", 1, false)})
		return true
	}
	r := newResolver(f, newClock(), nil)
	_, err := r.Resolve(t.Context(), "x")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "another host")
	assert.Zero(t, evilHits.Load())
}

func TestNotFoundWithoutAutoCreate(t *testing.T) {
	f := newFakeAPI(t)
	clk := newClock()
	r := newResolver(f, clk, nil)
	ctx := t.Context()

	_, err := r.Resolve(ctx, "missing")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), `"missing"`)
	assert.Contains(t, err.Error(), "404")
	assert.EqualValues(t, 1, r.Lookups())

	// Negatively cached for NegativeTTL: no call, same error.
	clk.Advance(DefaultNegativeTTL - time.Second)
	_, err2 := r.Resolve(ctx, "missing")
	require.ErrorIs(t, err2, ErrUnresolved)
	assert.EqualValues(t, 1, r.Lookups())

	// The project appears; after NegativeTTL it is found.
	f.addProject("missing", []fakeKey{key("pm", 5, true)})
	clk.Advance(2 * time.Second)
	dsn, err := r.Resolve(ctx, "missing")
	require.NoError(t, err)
	assert.Equal(t, "https://pm@o1.ingest.sentry.io/5", dsn)
	assert.EqualValues(t, 2, r.Lookups())
	assert.Empty(t, f.created)
}

func TestAutoCreateWithTeam(t *testing.T) {
	f := newFakeAPI(t)
	r := newResolver(f, newClock(), func(c *Config) { c.AutoCreateProjects = true; c.Team = "backend" })
	dsn, err := r.Resolve(t.Context(), "new-svc")
	require.NoError(t, err)
	assert.Equal(t, "https://pk101@o1.ingest.sentry.io/101", dsn)
	assert.Equal(t, []string{
		"GET /api/0/projects/acme/new-svc/keys/",
		"POST /api/0/teams/acme/backend/projects/",
		"GET /api/0/projects/acme/new-svc/keys/",
	}, f.callList())
	assert.Equal(t, []string{"backend/new-svc"}, f.created)
	assert.Equal(t, []map[string]string{{"name": "new-svc", "slug": "new-svc", "platform": "other"}}, f.bodies)
	assert.EqualValues(t, 3, r.Lookups())
}

func TestAutoCreateDiscoversTeam(t *testing.T) {
	f := newFakeAPI(t)
	r := newResolver(f, newClock(), func(c *Config) { c.AutoCreateProjects = true })
	_, err := r.Resolve(t.Context(), "svc-a")
	require.NoError(t, err)
	_, err = r.Resolve(t.Context(), "svc-b")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"GET /api/0/projects/acme/svc-a/keys/",
		"GET /api/0/organizations/acme/teams/",
		"POST /api/0/teams/acme/first-team/projects/",
		"GET /api/0/projects/acme/svc-a/keys/",
		"GET /api/0/projects/acme/svc-b/keys/",
		"POST /api/0/teams/acme/first-team/projects/", // team remembered
		"GET /api/0/projects/acme/svc-b/keys/",
	}, f.callList())
	assert.Equal(t, []string{"first-team/svc-a", "first-team/svc-b"}, f.created)
}

func TestAutoCreateNoTeams(t *testing.T) {
	f := newFakeAPI(t)
	f.teams = nil
	r := newResolver(f, newClock(), func(c *Config) { c.AutoCreateProjects = true })
	_, err := r.Resolve(t.Context(), "svc")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "no team")
	assert.Empty(t, f.created)
}

func TestAutoCreateConflict(t *testing.T) {
	// The project is created by someone else between our GET and POST.
	f := newFakeAPI(t)
	var keyGets atomic.Int64
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/keys/") && keyGets.Add(1) == 1 {
			f.addProject("racy", []fakeKey{key("pr", 9, true)})
			http.NotFound(w, r)
			return true
		}
		return false
	}
	r := newResolver(f, newClock(), func(c *Config) { c.AutoCreateProjects = true; c.Team = "t" })
	dsn, err := r.Resolve(t.Context(), "racy")
	require.NoError(t, err)
	assert.Equal(t, "https://pr@o1.ingest.sentry.io/9", dsn)
	assert.Empty(t, f.created, "POST answered 409")
	assert.Equal(t, []string{
		"GET /api/0/projects/acme/racy/keys/",
		"POST /api/0/teams/acme/t/projects/",
		"GET /api/0/projects/acme/racy/keys/",
	}, f.callList())
}

func TestAutoCreateFails(t *testing.T) {
	f := newFakeAPI(t)
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost {
			http.Error(w, `{"detail":"You do not have permission"}`, http.StatusForbidden)
			return true
		}
		return false
	}
	clk := newClock()
	r := newResolver(f, clk, func(c *Config) { c.AutoCreateProjects = true; c.Team = "t" })
	_, err := r.Resolve(t.Context(), "nope")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "HTTP 403")
	assert.EqualValues(t, 2, r.Lookups())
	_, err = r.Resolve(t.Context(), "nope")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.EqualValues(t, 2, r.Lookups(), "failure cached")
}

func TestConcurrentResolveSharesOneLookup(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("hot", []fakeKey{key("ph", 3, true)})
	// In a synctest bubble, with the API's handler called in memory (a
	// network wait is never durably blocked): synctest.Wait returns once
	// every caller waits, one on the API and the rest on its look-up.
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		f.override = func(_ http.ResponseWriter, _ *http.Request) bool {
			<-release
			return false
		}
		client := &http.Client{Transport: inMemory(f.serve)}
		r := New(client, Config{URL: "http://api.test", OrgSlug: testOrg, AuthToken: testToken, TTL: testTTL}, newClock().Now)

		const n = 50
		var wg sync.WaitGroup
		dsns := make([]string, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { dsns[i], errs[i] = r.Resolve(t.Context(), "hot") })
		}
		synctest.Wait()
		assert.EqualValues(t, 1, r.Lookups(), "every caller waits on one look-up")
		close(release)
		wg.Wait()

		for i := range n {
			require.NoError(t, errs[i])
			assert.Equal(t, "https://ph@o1.ingest.sentry.io/3", dsns[i])
		}
		assert.EqualValues(t, 1, r.Lookups())
		assert.Len(t, f.callList(), 1)
	})
}

// inMemory is a transport that calls h directly, with no network between.
type inMemory http.HandlerFunc

func (h inMemory) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	h(rec, req)
	return rec.Result(), nil
}

func TestCallerCancelDoesNotFailOthers(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("slow", []fakeKey{key("ps", 3, true)})
	hit := make(chan struct{})
	release := make(chan struct{})
	f.override = func(_ http.ResponseWriter, _ *http.Request) bool {
		close(hit)
		<-release
		return false
	}
	r := newResolver(f, newClock(), nil)

	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := r.Resolve(ctx, "slow")
		first <- err
	}()
	<-hit
	second := make(chan string, 1)
	go func() {
		dsn, _ := r.Resolve(t.Context(), "slow")
		second <- dsn
	}()
	cancel()
	err := <-first
	require.ErrorIs(t, err, ErrUnresolved)
	require.ErrorIs(t, err, context.Canceled)

	close(release)
	assert.Equal(t, "https://ps@o1.ingest.sentry.io/3", <-second)
	dsn, err := r.Resolve(t.Context(), "slow")
	require.NoError(t, err)
	assert.Equal(t, "https://ps@o1.ingest.sentry.io/3", dsn)
	assert.EqualValues(t, 1, r.Lookups())

	// An already cancelled context starts no lookup.
	_, err = r.Resolve(ctx, "other")
	require.ErrorIs(t, err, context.Canceled)
	assert.EqualValues(t, 1, r.Lookups())
}

func TestRateLimit429Reset(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("a", []fakeKey{key("pa", 1, true)})
	f.addProject("b", []fakeKey{key("pb", 2, true)})
	clk := newClock()
	reset := clk.Now().Add(2 * time.Minute)
	f.override = func(w http.ResponseWriter, _ *http.Request) bool {
		if clk.Now().Before(reset) {
			w.Header().Set("X-Sentry-Rate-Limit-Reset", strconv.FormatInt(reset.Unix(), 10))
			w.Header().Set("X-Sentry-Rate-Limit-Remaining", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	r := newResolver(f, clk, nil)
	ctx := t.Context()

	_, err := r.Resolve(ctx, "a")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "429")
	assert.EqualValues(t, 1, r.Lookups())

	// No API call at all until the reset, for any slug, even after
	// NegativeTTL has passed.
	for _, step := range []time.Duration{0, time.Second, DefaultNegativeTTL, time.Minute} {
		clk.Advance(step)
		for _, slug := range []string{"a", "b"} {
			_, err := r.Resolve(ctx, slug)
			require.ErrorIs(t, err, ErrUnresolved)
		}
	}
	assert.EqualValues(t, 1, r.Lookups())
	assert.Len(t, f.callList(), 1)

	clk.Advance(reset.Sub(clk.Now()))
	for _, slug := range []string{"a", "b"} {
		_, err := r.Resolve(ctx, slug)
		require.NoError(t, err, slug)
	}
	assert.EqualValues(t, 3, r.Lookups())
}

func TestRateLimitRetryAfter(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("a", []fakeKey{key("pa", 1, true)})
	var limited atomic.Bool
	limited.Store(true)
	f.override = func(w http.ResponseWriter, _ *http.Request) bool {
		if limited.Load() {
			w.Header().Set("Retry-After", "90")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	clk := newClock()
	r := newResolver(f, clk, nil)
	_, err := r.Resolve(t.Context(), "a")
	require.ErrorIs(t, err, ErrUnresolved)
	limited.Store(false)
	clk.Advance(89 * time.Second)
	_, err = r.Resolve(t.Context(), "a")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.EqualValues(t, 1, r.Lookups())
	clk.Advance(time.Second)
	_, err = r.Resolve(t.Context(), "a")
	require.NoError(t, err)
	assert.EqualValues(t, 2, r.Lookups())
}

func TestRateLimitRemainingZeroBlocksAhead(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("a", []fakeKey{key("pa", 1, true)})
	f.addProject("b", []fakeKey{key("pb", 2, true)})
	clk := newClock()
	reset := clk.Now().Add(10 * time.Second)
	f.override = func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("X-Sentry-Rate-Limit-Remaining", "0")
		w.Header().Set("X-Sentry-Rate-Limit-Reset", strconv.FormatInt(reset.Unix(), 10))
		return false
	}
	r := newResolver(f, clk, nil)
	dsn, err := r.Resolve(t.Context(), "a")
	require.NoError(t, err)
	assert.Equal(t, "https://pa@o1.ingest.sentry.io/1", dsn)
	_, err = r.Resolve(t.Context(), "b")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "rate limited")
	assert.EqualValues(t, 1, r.Lookups())
	clk.Advance(10 * time.Second)
	_, err = r.Resolve(t.Context(), "b")
	require.NoError(t, err)
}

func TestStaleDSNKeptOnTransientRefreshFailure(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("a", []fakeKey{key("pa", 1, true)})
	var status atomic.Int64
	f.override = func(w http.ResponseWriter, _ *http.Request) bool {
		if s := status.Load(); s != 0 {
			w.WriteHeader(int(s))
			return true
		}
		return false
	}
	clk := newClock()
	r := newResolver(f, clk, nil)
	want := "https://pa@o1.ingest.sentry.io/1"
	dsn, err := r.Resolve(t.Context(), "a")
	require.NoError(t, err)
	require.Equal(t, want, dsn)

	status.Store(http.StatusBadGateway)
	clk.Advance(testTTL)
	dsn, err = r.Resolve(t.Context(), "a")
	require.NoError(t, err, "transient failure keeps the last good DSN")
	assert.Equal(t, want, dsn)
	assert.EqualValues(t, 2, r.Lookups())
	clk.Advance(DefaultNegativeTTL - time.Second)
	_, _ = r.Resolve(t.Context(), "a")
	assert.EqualValues(t, 2, r.Lookups(), "retried only after NegativeTTL")

	status.Store(http.StatusNotFound)
	clk.Advance(time.Second)
	_, err = r.Resolve(t.Context(), "a")
	require.ErrorIs(t, err, ErrUnresolved, "a deleted project drops the DSN")
	assert.EqualValues(t, 3, r.Lookups())
}

func TestAuthTokenNeverInErrors(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter, r *http.Request){
		"401 echoing token": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"detail":"bad token `+testToken+`"}`)
		},
		"500": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
		"malformed json": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `[{"isActive": true, "dsn": {"public": "https://pubkey@host/1"`+testToken)
		},
		"invalid dsn": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `[{"isActive": true, "dsn": {"public": "ht tp://pubkey@ho st/1"}}]`)
		},
		"hijacked connection": func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		},
		"huge body": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "["+strings.Repeat(" ", maxResponseBytes)+"]")
		},
		"redirect elsewhere with token in URL": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/?token="+testToken, http.StatusFound)
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.override = func(w http.ResponseWriter, r *http.Request) bool { h(w, r); return true }
			r := newResolver(f, newClock(), func(c *Config) { c.AutoCreateProjects = true })
			_, err := r.Resolve(t.Context(), "svc")
			require.ErrorIs(t, err, ErrUnresolved)
			assert.Contains(t, err.Error(), `"svc"`)
			assert.NotContains(t, err.Error(), testToken)
			assert.NotContains(t, err.Error(), "pubkey")
			t.Log(err)
		})
	}
	// Transport failure without any server.
	r := New(nil, Config{URL: "http://127.0.0.1:1", OrgSlug: testOrg, AuthToken: testToken, TTL: testTTL}, nil)
	_, err := r.Resolve(t.Context(), "svc")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.NotContains(t, err.Error(), testToken)
}

func TestHugeResponseRejected(t *testing.T) {
	f := newFakeAPI(t)
	f.override = func(w http.ResponseWriter, _ *http.Request) bool {
		_, _ = io.WriteString(w, "["+strings.Repeat(" ", maxResponseBytes)+"]")
		return true
	}
	r := newResolver(f, newClock(), nil)
	_, err := r.Resolve(t.Context(), "svc")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "larger than")
}

func TestInvalidInputMakesNoCall(t *testing.T) {
	f := newFakeAPI(t)
	r := newResolver(f, newClock(), nil)
	for _, slug := range []string{"", "Checkout", "../../admin", "a/b", "-a", strings.Repeat("a", 51)} {
		_, err := r.Resolve(t.Context(), slug)
		require.ErrorIs(t, err, ErrUnresolved, slug)
	}
	for _, cfg := range []Config{
		{URL: f.srv.URL, AuthToken: testToken},
		{URL: f.srv.URL, OrgSlug: testOrg},
		{URL: "ftp://x", OrgSlug: testOrg, AuthToken: testToken},
		{URL: "://", OrgSlug: testOrg, AuthToken: testToken},
	} {
		_, err := New(f.srv.Client(), cfg, nil).Resolve(t.Context(), "svc")
		require.ErrorIs(t, err, ErrUnresolved)
		assert.NotContains(t, err.Error(), testToken)
	}
	assert.Empty(t, f.callList())
}

func TestBaseURLWithPath(t *testing.T) {
	f := newFakeAPI(t)
	var got string
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		got = r.URL.Path
		_ = json.NewEncoder(w).Encode([]fakeKey{key("p", 1, true)})
		return true
	}
	r := New(f.srv.Client(), Config{URL: f.srv.URL + "/sentry/", OrgSlug: testOrg, AuthToken: testToken, TTL: testTTL}, nil)
	_, err := r.Resolve(t.Context(), "svc")
	require.NoError(t, err)
	assert.Equal(t, "/sentry/api/0/projects/acme/svc/keys/", got)
}

func TestCacheBounded(t *testing.T) {
	f := newFakeAPI(t)
	for _, s := range []string{"a", "b", "c"} {
		f.addProject(s, []fakeKey{key("p"+s, 1, true)})
	}
	r := newResolver(f, newClock(), nil)
	r.cache.Resize(2)
	r.failed.Resize(2)
	ctx := t.Context()
	for _, s := range []string{"a", "b", "c"} {
		_, err := r.Resolve(ctx, s)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, r.cache.Len())
	_, err := r.Resolve(ctx, "c")
	require.NoError(t, err)
	assert.EqualValues(t, 3, r.Lookups(), "c still cached")
	_, err = r.Resolve(ctx, "a")
	require.NoError(t, err)
	assert.EqualValues(t, 4, r.Lookups(), "a was evicted")
}

func TestNextLink(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{`<https://sentry.io/x/?&cursor=0:100:0>; rel="next"; results="true"; cursor="0:100:0"`, "https://sentry.io/x/?&cursor=0:100:0", true},
		{`<https://sentry.io/x/?&cursor=0:0:1>; rel="previous"; results="false"; cursor="0:0:1", <https://sentry.io/x/?&cursor=0:100:0>; rel="next"; results="true"; cursor="0:100:0"`, "https://sentry.io/x/?&cursor=0:100:0", true},
		{`<https://sentry.io/x/?&cursor=0:0:1>; rel="previous"; results="true"; cursor="0:0:1", <https://sentry.io/x/?&cursor=0:100:0>; rel="next"; results="false"; cursor="0:100:0"`, "", false},
		{`<https://example.com/next>; rel=next`, "https://example.com/next", true},
		{``, "", false},
		{`garbage<`, "", false},
	}
	for _, c := range cases {
		got, ok := nextLink([]string{c.in})
		assert.Equal(t, c.ok, ok, c.in)
		if c.ok {
			assert.Equal(t, c.want, got, c.in)
		}
	}
}

func TestSlug(t *testing.T) {
	cases := map[string]string{
		"checkout":                     "checkout",
		"Checkout-Service":             "checkout-service",
		"my_service":                   "my_service",
		"my service.v2":                "my-service-v2",
		"  --Foo!!Bar--  ":             "foo-bar",
		"a--b":                         "a-b",
		"a - b":                        "a-b",
		"café":                         "caf",
		"日本語":                          "",
		"":                             "",
		"---":                          "",
		"_x_":                          "_x_",
		"UPPER/lower\\mixed:42":        "upper-lower-mixed-42",
		strings.Repeat("ab", 40):       strings.Repeat("ab", 25),
		strings.Repeat("a", 49) + "-b": strings.Repeat("a", 49),
		strings.Repeat("x", 200) + "!": strings.Repeat("x", 50),
	}
	for in, want := range cases {
		got := Slug(in)
		assert.Equal(t, want, got, "Slug(%q)", in)
		assert.LessOrEqual(t, len(got), MaxSlugLen)
		assert.Equal(t, got, Slug(got), "idempotent for %q", in)
	}
}

// TestShutdownMidLookup: Shutdown cancels a lookup that the API never
// answers, waits for it, and leaves no goroutine behind; the caller gets an
// error, and nothing calls the API afterwards.
func TestShutdownMidLookup(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("hung", []fakeKey{key("ph", 3, true)})
	f.addProject("known", []fakeKey{key("pk", 4, true)})
	asked := make(chan struct{}, 1)
	f.override = func(_ http.ResponseWriter, r *http.Request) bool {
		if !strings.Contains(r.URL.Path, "/hung/") {
			return false
		}
		asked <- struct{}{}
		<-r.Context().Done() // hangs until the client gives up
		return true
	}
	clk := newClock()
	r := newResolver(f, clk, nil)
	dsn, err := r.Resolve(t.Context(), "known")
	require.NoError(t, err)

	resolved := make(chan error, 1)
	go func() {
		_, herr := r.Resolve(t.Context(), "hung")
		resolved <- herr
	}()
	<-asked
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a guard; Shutdown returns at once
	defer cancel()
	require.NoError(t, r.Shutdown(ctx))
	require.ErrorIs(t, <-resolved, ErrUnresolved)

	calls := len(f.callList())
	_, err = r.Resolve(t.Context(), "other")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.ErrorContains(t, err, "shut down")
	clk.Advance(testTTL + time.Second)
	got, err := r.Resolve(t.Context(), "known")
	require.NoError(t, err)
	assert.Equal(t, dsn, got, "past its TTL, the cached DSN is still served, without the API")
	assert.Len(t, f.callList(), calls, "no API call after Shutdown")
	require.NoError(t, r.Shutdown(ctx), "a second Shutdown")

	f.srv.Close()
	goleak.VerifyNone(t)
}

// Failures are cached apart from DSNs: any number of slugs that do not
// resolve (invented service names) never evict a DSN in use.
func TestFailuresNeverEvictADSN(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("a", []fakeKey{key("pa", 1, true)})
	r := newResolver(f, newClock(), nil)
	r.cache.Resize(2)
	r.failed.Resize(2)
	ctx := t.Context()
	_, err := r.Resolve(ctx, "a")
	require.NoError(t, err)
	for i := range 5 {
		_, ierr := r.Resolve(ctx, fmt.Sprintf("invented-%d", i))
		require.ErrorIs(t, ierr, ErrUnresolved)
	}
	calls := r.Lookups()
	_, err = r.Resolve(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, calls, r.Lookups(), "a's DSN is still cached")
	assert.Equal(t, 2, r.failed.Len(), "the failures have a bound of their own")
}

// Each spender (a sender) has its own budget of lookups that reach the
// API: one inventing names spends its own, refused at once and never
// cached, while another still looks its projects up; the budget refills.
func TestLookupBudgetPerSpender(t *testing.T) {
	f := newFakeAPI(t)
	f.addProject("a", []fakeKey{key("pa", 1, true)})
	clk := newClock()
	r := newResolver(f, clk, func(c *Config) { c.LookupsPerMinute = 3 })
	ctx := t.Context()
	var refused int
	for i := range 5 {
		_, err := r.ResolveFor(ctx, "noisy", fmt.Sprintf("invented-%d", i))
		require.ErrorIs(t, err, ErrUnresolved)
		if strings.Contains(err.Error(), "lookups are over 3 a minute") {
			refused++
		}
	}
	assert.Equal(t, 2, refused)
	assert.EqualValues(t, 3, r.Lookups(), "only the budget's lookups reached the API")
	_, err := r.ResolveFor(ctx, "quiet", "a")
	require.NoError(t, err, "another sender's budget is its own")
	clk.Advance(20 * time.Second) // one lookup's worth
	_, err = r.ResolveFor(ctx, "noisy", "invented-4")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.NotContains(t, err.Error(), "lookups are over", "refilled: looked up, not refused")
	assert.EqualValues(t, 5, r.Lookups())
}

// Projects are created within a budget per hour and in all; each creation
// is reported (OnCreate), and what is over the budget is not created.
func TestCreationBounded(t *testing.T) {
	f := newFakeAPI(t)
	clk := newClock()
	var reported []string
	r := newResolver(f, clk, func(c *Config) {
		c.AutoCreateProjects, c.Team = true, "backend"
		c.MaxCreatedPerHour, c.MaxCreated = 2, 3
		c.OnCreate = func(slug string, total int) { reported = append(reported, fmt.Sprintf("%s#%d", slug, total)) }
	})
	ctx := t.Context()
	for _, s := range []string{"s1", "s2"} {
		_, err := r.Resolve(ctx, s)
		require.NoError(t, err)
	}
	_, err := r.Resolve(ctx, "s3")
	require.ErrorIs(t, err, ErrUnresolved)
	assert.Contains(t, err.Error(), "project creation budget spent (2 an hour, 3 in all)")
	clk.Advance(time.Hour)
	_, err = r.Resolve(ctx, "s3")
	require.NoError(t, err, "a new hour, a new budget")
	_, err = r.Resolve(ctx, "s4")
	require.ErrorIs(t, err, ErrUnresolved, "3 in all")
	clk.Advance(time.Hour)
	_, err = r.Resolve(ctx, "s5")
	require.ErrorIs(t, err, ErrUnresolved, "the total is never refilled")
	assert.Equal(t, []string{"backend/s1", "backend/s2", "backend/s3"}, f.created)
	assert.Equal(t, []string{"s1#1", "s2#2", "s3#3"}, reported)
	assert.Equal(t, 3, r.Created())
}
