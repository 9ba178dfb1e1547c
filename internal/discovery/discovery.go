// Package discovery resolves a Sentry project slug to that project's public
// DSN through Sentry's management (web) API, so a gateway can route each
// service to its own Sentry project.
//
// The API calls are the ones the contrib sentry exporter uses:
//
//   - GET  {url}/api/0/projects/{org}/{project}/keys/ lists the project's
//     client keys (paginated with a Link header); 404 when the project does
//     not exist.
//   - POST {url}/api/0/teams/{org}/{team}/projects/ creates a project
//     (201 or 200; 409 when it already exists).
//   - GET  {url}/api/0/organizations/{org}/teams/ lists the organization's
//     teams; the first is used when auto-creating without a configured team.
//
// Every request carries "Authorization: Bearer <auth_token>".
//
// # Behavior
//
// A [Resolver] caches results per slug: a DSN for [Config.TTL], a failure
// for [Config.NegativeTTL]. Concurrent Resolve calls for one slug share a
// single lookup. The lookup runs detached from the callers' contexts (bounded
// by a 30 s timeout) so one caller giving up does not fail the others; every
// caller still returns as soon as its own context is done. The lookups belong
// to the Resolver: [Resolver.Shutdown] cancels those in flight and waits for
// them, and no lookup starts after it.
//
// The first active key (isActive) with a well-formed dsn.public wins, in the
// order the API lists them.
//
// When the API answers 429, no API call at all is made until the reset it
// announces (X-Sentry-Rate-Limit-Reset, epoch seconds, or Retry-After,
// seconds or an HTTP date; NegativeTTL when neither is given; at most one
// hour ahead). A response with X-Sentry-Rate-Limit-Remaining: 0 blocks the
// same way until its reset, so the limit is never hit in the first place.
// Slugs that fail because of the rate limit stay negatively cached until the
// reset or NegativeTTL, whichever is later.
//
// A refresh (TTL expired) that fails for a transient reason (transport error,
// 5xx, 401/403, rate limit, ...) keeps serving the last good DSN and tries
// again after NegativeTTL (or the rate-limit reset): the DSN itself keeps
// working for ingestion while the management API is unavailable. A refresh
// that finds the project gone (404 without auto-create) or without an active
// key drops the DSN.
//
// The cache holds at most [MaxCacheEntries] DSNs and, apart, as many
// failures; when one is full, its entry stored (or refreshed) longest ago is
// evicted. Failures never evict a DSN.
//
// Response bodies are read up to 1 MiB. Errors must never contain the auth
// token or a DSN; they name the slug, the request path and the HTTP status.
// The Resolver must not call the API once [Resolver.Shutdown] has begun.
package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"
)

const (
	// DefaultNegativeTTL is used when Config.NegativeTTL is 0.
	DefaultNegativeTTL = 30 * time.Second
	// MaxCacheEntries bounds the number of cached slugs (positive and
	// negative); the oldest entry is evicted beyond it.
	MaxCacheEntries = 10000
	// MaxSlugLen is the longest slug Slug returns.
	MaxSlugLen = 50

	maxResponseBytes = 1 << 20
	maxPages         = 100
	lookupTimeout    = 30 * time.Second
	maxRateLimitWait = time.Hour
	redacted         = "[REDACTED]"
)

// Config configures a Resolver.
type Config struct {
	// URL is the base URL of the Sentry web API, e.g. https://sentry.io.
	// URL is Sentry's (the exporter's config gives https://sentry.io by default).
	URL string
	// OrgSlug is the organization that owns the projects.
	OrgSlug string
	// AuthToken is sent as "Authorization: Bearer <AuthToken>".
	AuthToken string
	// Team receives auto-created projects. When empty, the organization's
	// first team is used.
	Team string
	// AutoCreateProjects creates a project that does not exist.
	AutoCreateProjects bool
	// TTL is how long a resolved DSN is cached (the exporter's config: 10
	// minutes by default, always positive).
	TTL time.Duration
	// NegativeTTL is how long a failure is cached (data for that project
	// is dropped meanwhile); DefaultNegativeTTL when 0.
	NegativeTTL time.Duration
	// LookupsPerMinute is each spender's budget of lookups that reach the
	// API (budget.go); 0: unbounded.
	LookupsPerMinute int
	// MaxCreatedPerHour and MaxCreated bound the projects created, per
	// hour and in the Resolver's lifetime; 0: unbounded.
	MaxCreatedPerHour, MaxCreated int
	// OnCreate, when set, is called (without locks held) after each project
	// the Resolver created, with the total so far.
	OnCreate func(slug string, total int)
}

// ErrUnresolved is wrapped by every error Resolve returns.
var ErrUnresolved = errors.New("project could not be resolved")

// Resolver resolves project slugs to DSNs. It is safe for concurrent use.
type Resolver struct {
	client  *http.Client
	cfg     Config
	base    *url.URL // nil when cfg.URL does not parse
	baseErr string
	now     func() time.Time

	lookups atomic.Int64

	// lookupCtx is the parent of every lookup; Shutdown cancels it and
	// waits for the lookups (lookupWG) to return.
	lookupCtx    context.Context
	cancelLookup context.CancelFunc
	lookupWG     sync.WaitGroup

	mu     sync.Mutex
	closed bool // Shutdown began: no lookup starts
	// cache holds the DSNs by slug, ordered by when each was stored
	// (read with Peek, which leaves the order as it is); failed holds the
	// failures apart, in a bound of their own, so that slugs that do not
	// resolve (invented names, say) never evict a DSN in use.
	cache     *simplelru.LRU[string, *entry]
	failed    *simplelru.LRU[string, *entry]
	inflight  map[string]*call
	rateUntil time.Time // no API call before this
	team      string    // team discovered from the organization

	spenders  *simplelru.LRU[string, *rate.Limiter] // by spender, seen longest ago evicted first (budget.go)
	creations creations
}

type entry struct {
	slug    string
	dsn     string // "" for a negative entry
	err     error
	expires time.Time
}

type call struct {
	done chan struct{}
	dsn  string
	err  error
}

// New returns a Resolver. A nil client means a client with a 30 s timeout;
// a nil now means time.Now.
func New(client *http.Client, cfg Config, now func() time.Time) *Resolver {
	if client == nil {
		client = &http.Client{Timeout: lookupTimeout}
	}
	if now == nil {
		now = time.Now
	}
	if cfg.NegativeTTL <= 0 {
		cfg.NegativeTTL = DefaultNegativeTTL
	}
	lookupCtx, cancel := context.WithCancel(context.Background())
	r := &Resolver{
		lookupCtx:    lookupCtx,
		cancelLookup: cancel,
		client:       client,
		cfg:          cfg,
		now:          now,
		cache:        newLRU[*entry](MaxCacheEntries),
		failed:       newLRU[*entry](MaxCacheEntries),
		inflight:     make(map[string]*call),
		spenders:     newLRU[*rate.Limiter](maxSpenders),
	}
	u, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	switch {
	case err != nil:
		r.baseErr = "invalid management API URL"
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		r.baseErr = "management API URL must be http(s)://host"
	default:
		u.User = nil
		u.RawQuery, u.Fragment = "", ""
		r.base = u
	}
	return r
}

// Resolve returns the public DSN of the project with that slug.
//
// Results are cached per TTL, concurrent calls for one slug share one
// lookup, a missing project is created when AutoCreateProjects is set.
// Failures return an error wrapping ErrUnresolved and are cached for
// NegativeTTL (or until the API's rate-limit reset, whichever is later).
// The slug must already be in the form Slug returns.
func (r *Resolver) Resolve(ctx context.Context, slug string) (string, error) {
	return r.ResolveFor(ctx, "", slug)
}

// ResolveFor is Resolve, charging a lookup that reaches the API to spender
// (a sender's name): past its Config.LookupsPerMinute, the slug is not
// looked up (a cached DSN, even a stale one, is still served).
func (r *Resolver) ResolveFor(ctx context.Context, spender, slug string) (string, error) {
	if slug == "" || Slug(slug) != slug {
		return "", fmt.Errorf("discovery: project %q: %w: invalid project slug", slug, ErrUnresolved)
	}
	if msg := r.configProblem(); msg != "" {
		return "", fmt.Errorf("discovery: project %q: %w: %s", slug, ErrUnresolved, msg)
	}
	now := r.now()

	r.mu.Lock()
	dsn, stale, done, err := r.cachedLocked(slug, now)
	if done {
		r.mu.Unlock()
		return dsn, err
	}
	c, ok := r.inflight[slug]
	if !ok {
		var staleOK bool
		if c, staleOK, err = r.startLocked(ctx, spender, slug, now); err != nil {
			r.mu.Unlock()
			if staleOK && stale != nil {
				return stale.dsn, nil
			}
			return "", err
		}
	}
	r.mu.Unlock()

	select {
	case <-c.done:
		return c.dsn, c.err
	case <-ctx.Done():
		return "", fmt.Errorf("discovery: project %q: %w: %w", slug, ErrUnresolved, context.Cause(ctx))
	}
}

// cachedLocked answers slug from the caches when it can (done): a DSN not
// yet expired, or a failure not yet expired. An expired DSN comes back as
// stale, to answer with when no new look-up can be made. r.mu is held.
func (r *Resolver) cachedLocked(slug string, now time.Time) (dsn string, stale *entry, done bool, err error) {
	if e, ok := r.cache.Peek(slug); ok {
		if now.Before(e.expires) {
			return e.dsn, nil, true, nil
		}
		return "", e, false, nil
	}
	if e, ok := r.failed.Peek(slug); ok {
		if now.Before(e.expires) {
			return "", nil, true, e.err
		}
	}
	return "", nil, false, nil
}

// startLocked starts a look-up of slug, or says why none may start; staleOK
// reports that an expired DSN may answer instead. r.mu is held.
func (r *Resolver) startLocked(ctx context.Context, spender, slug string, now time.Time) (c *call, staleOK bool, err error) {
	switch {
	case r.closed:
		return nil, true, fmt.Errorf("discovery: project %q: %w: the resolver is shut down", slug, ErrUnresolved)
	case now.Before(r.rateUntil):
		return nil, true, fmt.Errorf("discovery: project %q: %w: management API rate limited for another %s",
			slug, ErrUnresolved, r.rateUntil.Sub(now).Round(time.Second))
	case ctx.Err() != nil:
		return nil, false, fmt.Errorf("discovery: project %q: %w: %w", slug, ErrUnresolved, ctx.Err())
	case !r.spend(spender, now):
		return nil, true, fmt.Errorf("discovery: project %q: %w: its sender's lookups are over %d a minute", slug, ErrUnresolved, r.cfg.LookupsPerMinute)
	}
	c = &call{done: make(chan struct{})}
	r.inflight[slug] = c
	// Added under r.mu, before Shutdown can set closed and wait.
	r.lookupWG.Go(func() { r.run(r.lookupCtx, slug, c) })
	return c, false, nil
}

// Shutdown cancels the lookups in flight and waits until they have returned,
// or until ctx is done (then it returns ctx's error). Their callers get an
// error wrapping ErrUnresolved. From then on Resolve calls no API: it answers
// from the cache (a DSN past its TTL included) or with an error wrapping
// ErrUnresolved. It is safe to call more than once.
func (r *Resolver) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancelLookup()
	done := make(chan struct{})
	go func() {
		r.lookupWG.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Resolver) configProblem() string {
	switch {
	case r.base == nil:
		return r.baseErr
	case r.cfg.OrgSlug == "":
		return "no organization slug configured"
	case r.cfg.AuthToken == "":
		return "no auth token configured"
	}
	return ""
}

// run performs the lookup for slug, caches its outcome and wakes the
// callers waiting on c.
func (r *Resolver) run(ctx context.Context, slug string, c *call) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	dsn, lerr := r.lookup(ctx, slug)
	now := r.now()

	r.mu.Lock()
	delete(r.inflight, slug)
	if lerr == nil {
		r.store(&entry{slug: slug, dsn: dsn, expires: now.Add(r.cfg.TTL)})
		c.dsn = dsn
	} else {
		expires := now.Add(r.cfg.NegativeTTL)
		if lerr.rateLimited && r.rateUntil.After(expires) {
			expires = r.rateUntil
		}
		var prev string
		if e, ok := r.cache.Peek(slug); ok {
			prev = e.dsn
		}
		if prev != "" && !lerr.definitive {
			// Keep serving the last good DSN; retry later.
			r.store(&entry{slug: slug, dsn: prev, expires: expires})
			c.dsn = prev
		} else {
			err := fmt.Errorf("discovery: project %q: %w: %s", slug, ErrUnresolved, r.redact(lerr.msg))
			r.store(&entry{slug: slug, err: err, expires: expires})
			c.err = err
		}
	}
	r.mu.Unlock()
	close(c.done)
}

// store inserts or replaces e as the newest entry of its cache (DSNs, or
// failures), out of the other, evicting the oldest of its cache beyond
// its bound. r.mu must be held.
func (r *Resolver) store(e *entry) {
	if e.dsn != "" {
		r.failed.Remove(e.slug)
		r.cache.Add(e.slug, e)
		return
	}
	r.cache.Remove(e.slug)
	r.failed.Add(e.slug, e)
}

// newLRU is a bounded map by slug or spender: golang-lru's simplelru,
// guarded by the Resolver's mu.
func newLRU[V any](size int) *simplelru.LRU[string, V] {
	l, err := simplelru.NewLRU[string, V](size, nil)
	if err != nil {
		panic(err) // only for a size under 1; every size here is a positive constant
	}
	return l
}

func (r *Resolver) redact(s string) string {
	if r.cfg.AuthToken != "" {
		s = strings.ReplaceAll(s, r.cfg.AuthToken, redacted)
	}
	return s
}

// lookupError is a failed lookup. msg holds no secrets.
type lookupError struct {
	msg         string
	definitive  bool // the project is gone or has no usable key
	rateLimited bool
}

func lerrf(format string, args ...any) *lookupError {
	return &lookupError{msg: fmt.Sprintf(format, args...)}
}

func (r *Resolver) lookup(ctx context.Context, slug string) (string, *lookupError) {
	dsn, found, lerr := r.fetchKeys(ctx, slug)
	if lerr != nil || found {
		return dsn, lerr
	}
	if !r.cfg.AutoCreateProjects {
		return "", &lookupError{msg: "project not found (HTTP 404)", definitive: true}
	}
	team, lerr := r.teamSlug(ctx)
	if lerr != nil {
		return "", lerr
	}
	r.mu.Lock()
	ok := r.mayCreate(r.now())
	r.mu.Unlock()
	if !ok {
		return "", lerrf("project creation budget spent (%d an hour, %d in all)", r.cfg.MaxCreatedPerHour, r.cfg.MaxCreated)
	}
	lerr = r.createProject(ctx, team, slug)
	if lerr != nil {
		return "", lerr
	}
	if r.cfg.OnCreate != nil {
		r.cfg.OnCreate(slug, r.Created())
	}
	dsn, found, lerr = r.fetchKeys(ctx, slug)
	if lerr != nil {
		return "", lerr
	}
	if !found {
		return "", lerrf("project not found after creating it (HTTP 404)")
	}
	return dsn, nil
}

type projectKey struct {
	IsActive bool `json:"isActive"`
	DSN      struct {
		Public string `json:"public"`
	} `json:"dsn"`
}

// fetchKeys returns the DSN of the first active key; found is false when
// the project does not exist.
func (r *Resolver) fetchKeys(ctx context.Context, slug string) (dsn string, found bool, _ *lookupError) {
	next := r.endpoint("projects", r.cfg.OrgSlug, slug, "keys")
	for page := 0; page < maxPages && next != nil; page++ {
		resp, lerr := r.do(ctx, http.MethodGet, next, nil)
		if lerr != nil {
			return "", false, lerr
		}
		switch {
		case resp.status == http.StatusNotFound:
			return "", false, nil
		case resp.status != http.StatusOK:
			return "", false, statusError(http.MethodGet, next, resp.status)
		}
		var keys []projectKey
		if err := json.Unmarshal(resp.body, &keys); err != nil {
			return "", false, lerrf("GET %s: malformed keys response (HTTP %d)", next.Path, resp.status)
		}
		for _, k := range keys {
			if k.IsActive && validDSN(k.DSN.Public) {
				return k.DSN.Public, true, nil
			}
		}
		next, lerr = r.nextPage(next, resp.header)
		if lerr != nil {
			return "", false, lerr
		}
	}
	if next != nil {
		return "", false, lerrf("no active key in the first %d pages of keys", maxPages)
	}
	return "", true, &lookupError{msg: "project has no active key", definitive: true}
}

// nextPage returns the rel="next" page of a Link header when it has
// results, nil when there is none. The next page must be on the configured
// host, so the token is never sent elsewhere.
func (r *Resolver) nextPage(cur *url.URL, h http.Header) (*url.URL, *lookupError) {
	raw, ok := nextLink(h.Values("Link"))
	if !ok {
		return nil, nil
	}
	u, err := cur.Parse(raw)
	if err != nil {
		return nil, lerrf("GET %s: malformed Link header", cur.Path)
	}
	if u.Scheme != r.base.Scheme || u.Host != r.base.Host {
		return nil, lerrf("GET %s: Link header points to another host", cur.Path)
	}
	u.User = nil
	return u, nil
}

// nextLink extracts the target of the first rel="next" link, and whether
// its results parameter is not "false".
func nextLink(values []string) (string, bool) {
	for _, v := range values {
		rest := v
		for {
			target, params, tail, ok := cutLink(rest)
			if !ok {
				break
			}
			rest = tail
			if isNext, results := linkParams(params); isNext {
				return target, results && target != ""
			}
		}
	}
	return "", false
}

// cutLink cuts the first link, "<target>; params", off a Link header
// value: its target, its parameters, and what follows the target.
func cutLink(s string) (target, params, rest string, ok bool) {
	i := strings.IndexByte(s, '<')
	if i < 0 {
		return "", "", "", false
	}
	j := strings.IndexByte(s[i:], '>')
	if j < 0 {
		return "", "", "", false
	}
	target, rest = s[i+1:i+j], s[i+j+1:]
	params = rest
	if k := strings.IndexByte(rest, '<'); k >= 0 {
		params = rest[:k]
	}
	return target, params, rest, true
}

// linkParams reads a link's parameters: whether its rel names "next", and
// whether its results parameter is other than "false".
func linkParams(params string) (isNext, results bool) {
	results = true
	for p := range strings.SplitSeq(params, ";") {
		name, val, _ := strings.Cut(strings.TrimSpace(strings.Trim(strings.TrimSpace(p), ",")), "=")
		val = strings.Trim(strings.TrimSpace(val), `"`)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "rel":
			isNext = isNext || relNext(val)
		case "results":
			results = !strings.EqualFold(val, "false")
		}
	}
	return isNext, results
}

// relNext reports whether a rel value names "next" among its relations.
func relNext(rel string) bool {
	for r := range strings.FieldsSeq(rel) {
		if strings.EqualFold(r, "next") {
			return true
		}
	}
	return false
}

func validDSN(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") &&
		u.Host != "" && u.User != nil && u.User.Username() != ""
}

type team struct {
	Slug string `json:"slug"`
}

// teamSlug returns the configured team, or else the organization's first
// team (looked up once and remembered).
func (r *Resolver) teamSlug(ctx context.Context) (string, *lookupError) {
	if r.cfg.Team != "" {
		return r.cfg.Team, nil
	}
	r.mu.Lock()
	t := r.team
	r.mu.Unlock()
	if t != "" {
		return t, nil
	}
	u := r.endpoint("organizations", r.cfg.OrgSlug, "teams")
	resp, lerr := r.do(ctx, http.MethodGet, u, nil)
	if lerr != nil {
		return "", lerr
	}
	if resp.status != http.StatusOK {
		return "", statusError(http.MethodGet, u, resp.status)
	}
	var teams []team
	if err := json.Unmarshal(resp.body, &teams); err != nil {
		return "", lerrf("GET %s: malformed teams response (HTTP %d)", u.Path, resp.status)
	}
	for _, tm := range teams {
		if tm.Slug != "" {
			r.mu.Lock()
			r.team = tm.Slug
			r.mu.Unlock()
			return tm.Slug, nil
		}
	}
	return "", lerrf("organization has no team to create the project in")
}

func (r *Resolver) createProject(ctx context.Context, team, slug string) *lookupError {
	body, _ := json.Marshal(map[string]string{"name": slug, "slug": slug, "platform": "other"})
	u := r.endpoint("teams", r.cfg.OrgSlug, team, "projects")
	resp, lerr := r.do(ctx, http.MethodPost, u, body)
	if lerr != nil {
		return lerr
	}
	switch resp.status {
	case http.StatusOK, http.StatusCreated, http.StatusConflict:
		return nil
	}
	return statusError(http.MethodPost, u, resp.status)
}

func statusError(method string, u *url.URL, status int) *lookupError {
	return lerrf("%s %s: HTTP %d", method, u.Path, status)
}

// endpoint builds {base}/api/0/{segments...}/ with each segment escaped.
func (r *Resolver) endpoint(segments ...string) *url.URL {
	u := *r.base
	var raw strings.Builder
	raw.WriteString(strings.TrimRight(r.base.EscapedPath(), "/"))
	raw.WriteString("/api/0/")
	for _, s := range segments {
		raw.WriteString(url.PathEscape(s))
		raw.WriteByte('/')
	}
	u.RawPath = raw.String()
	u.Path, _ = url.PathUnescape(u.RawPath)
	return &u
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do makes one API call unless the API's rate limit is in force, and
// records any rate limit the response announces. A 429 is returned as an
// error; other statuses are left to the caller.
func (r *Resolver) do(ctx context.Context, method string, u *url.URL, body []byte) (*response, *lookupError) {
	r.mu.Lock()
	until := r.rateUntil
	r.mu.Unlock()
	if now := r.now(); now.Before(until) {
		return nil, &lookupError{
			msg:         fmt.Sprintf("management API rate limited for another %s", until.Sub(now).Round(time.Second)),
			rateLimited: true,
		}
	}

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, lerrf("%s %s: cannot build request", method, u.Path)
	}
	req.Header.Set("Authorization", "Bearer "+r.cfg.AuthToken)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	r.lookups.Add(1)
	resp, err := r.client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // url.Error repeats the full URL
		}
		return nil, lerrf("%s %s: %v", method, u.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, lerrf("%s %s: reading response (HTTP %d): %v", method, u.Path, resp.StatusCode, err)
	}
	if len(data) > maxResponseBytes {
		return nil, lerrf("%s %s: response larger than %d bytes (HTTP %d)", method, u.Path, maxResponseBytes, resp.StatusCode)
	}

	now := r.now()
	if resp.StatusCode == http.StatusTooManyRequests {
		until, ok := rateLimitReset(resp.Header, now)
		if !ok {
			until = now.Add(r.cfg.NegativeTTL)
		}
		r.limitUntil(until, now)
		return nil, &lookupError{msg: fmt.Sprintf("%s %s: HTTP 429 (management API rate limit)", method, u.Path), rateLimited: true}
	}
	if strings.TrimSpace(resp.Header.Get("X-Sentry-Rate-Limit-Remaining")) == "0" {
		if until, ok := rateLimitReset(resp.Header, now); ok {
			r.limitUntil(until, now)
		}
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// limitUntil blocks API calls until t, at most maxRateLimitWait from now.
func (r *Resolver) limitUntil(t, now time.Time) {
	if limit := now.Add(maxRateLimitWait); t.After(limit) {
		t = limit
	}
	r.mu.Lock()
	if t.After(r.rateUntil) {
		r.rateUntil = t
	}
	r.mu.Unlock()
}

// rateLimitReset reads X-Sentry-Rate-Limit-Reset (epoch seconds) or
// Retry-After (seconds or HTTP date).
func rateLimitReset(h http.Header, now time.Time) (time.Time, bool) {
	if v := strings.TrimSpace(h.Get("X-Sentry-Rate-Limit-Reset")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 && secs < 1e12 {
			return time.Unix(0, int64(secs*float64(time.Second))), true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 && secs < 1e9 {
			return now.Add(time.Duration(secs * float64(time.Second))), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Slug maps a resource attribute value (e.g. a service.name) to a Sentry
// project slug: lower case, characters outside [a-z0-9_-] become '-', runs
// of '-' collapsed, trimmed of '-', at most MaxSlugLen characters; "" when
// nothing is left.
func Slug(value string) string {
	b := make([]byte, 0, min(len(value), MaxSlugLen+1))
	dash := true // drops leading dashes
	for _, c := range strings.ToLower(value) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			b = append(b, byte(c))
			dash = false
		default:
			if !dash {
				b = append(b, '-')
				dash = true
			}
		}
		if len(b) > MaxSlugLen {
			break
		}
	}
	if len(b) > MaxSlugLen {
		b = b[:MaxSlugLen]
	}
	return strings.TrimRight(string(b), "-")
}
