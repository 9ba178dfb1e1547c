package send

import (
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// The client configurations TestHostileAnswers runs its rows in: each puts
// something else around net/http's transport in confighttp's ToClient (or,
// for HTTP/2, another protocol under it), and none may loosen what an answer
// can make the client hold.
//
// `make test` runs every row in the bare client, and the rows about what an
// answer holds while read (headerRows) in every other; with
// SENTRYEXPORTER_HOSTILE_ALL set, every row in every configuration.

// hostileAllEnv runs the whole product of clients and rows.
const hostileAllEnv = "SENTRYEXPORTER_HOSTILE_ALL"

// hostileClient is one client configuration.
type hostileClient struct {
	name string
	// setup changes the client's config, its telemetry and the host's
	// extensions for srv; it returns what to stop after the row (or nil).
	setup func(t *testing.T, c *clientSetup, srv *rawServer) (stop func())
	// http2 runs the HTTP/2 rows over TLS (http2Rows), not the raw
	// HTTP/1.1 ones.
	http2 bool
}

// clientSetup is what a hostileClient may change.
type clientSetup struct {
	cfg *Config
	set *Settings
	ext map[component.ID]component.Component
}

var (
	testAuthID = component.MustNewIDWithName("sendtest", "auth")
	testWrapID = component.MustNewIDWithName("sendtest", "wrap")
)

func hostileClients() []hostileClient {
	return []hostileClient{
		{name: "bare", setup: func(*testing.T, *clientSetup, *rawServer) func() { return nil }},
		{name: "headers", setup: func(_ *testing.T, c *clientSetup, _ *rawServer) func() {
			c.cfg.Client.Headers = configopaque.MapList{{Name: "X-Scope", Value: "gateway"}}
			return nil
		}},
		{name: "auth", setup: func(_ *testing.T, c *clientSetup, _ *rawServer) func() {
			c.ext[testAuthID] = sendtest.Auth("Authorization", "Bearer test")
			c.cfg.Client.Auth = configoptional.Some(configauth.Config{AuthenticatorID: testAuthID})
			return nil
		}},
		{name: "middleware", setup: func(_ *testing.T, c *clientSetup, _ *rawServer) func() {
			c.ext[testWrapID] = sendtest.Extension(sendtest.Wrap)
			c.cfg.Client.Middlewares = append(c.cfg.Client.Middlewares, configmiddleware.Config{ID: testWrapID})
			return nil
		}},
		{name: "proxy_url", setup: func(t *testing.T, c *clientSetup, srv *rawServer) func() {
			p := startRelay(t, srv.ln.Addr().String())
			c.cfg.Client.ProxyURL = "http://" + p.ln.Addr().String()
			return p.close
		}},
		{name: "telemetry detailed", setup: detailedTelemetry},
		{name: "h2 over TLS", http2: true, setup: func(_ *testing.T, c *clientSetup, srv *rawServer) func() {
			c.cfg.Client.TLS.CAFile = srv.caFile
			return nil
		}},
		{
			// confighttp then installs golang.org/x/net/http2's transport,
			// not net/http's bundled one: it reads the same limits.
			name: "h2 over TLS with http2_read_idle_timeout", http2: true,
			setup: func(_ *testing.T, c *clientSetup, srv *rawServer) func() {
				c.cfg.Client.TLS.CAFile = srv.caFile
				c.cfg.Client.HTTP2ReadIdleTimeout = time.Minute
				return nil
			},
		},
	}
}

// detailedTelemetry: a meter provider that records otelhttp's metrics, as
// the collector's at `service::telemetry::metrics::level: detailed`, so that
// confighttp wraps the transport in otelhttp's.
func detailedTelemetry(t *testing.T, c *clientSetup, _ *rawServer) func() {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	c.set.Telemetry.MeterProvider = mp
	require.True(t, clientInstrumented(c.set.Telemetry), "otelhttp records, so it wraps the transport")
	return func() { _ = mp.Shutdown(t.Context()) }
}

// rowsFor are the rows client runs.
func rowsFor(client hostileClient) []hostileRow {
	if client.http2 {
		return http2Rows()
	}
	if client.name == "bare" || os.Getenv(hostileAllEnv) != "" {
		return hostileRows()
	}
	return headerRows()
}

// headerRows are the rows about what an answer's head holds while read: its
// header bytes, and 1xx answers without end.
func headerRows() []hostileRow {
	return append(hostileHeaders(), hostileInterim()[0])
}

// relay is a forward proxy as the client sees it: every connection it
// accepts is piped, byte for byte, to target (the raw server reads the
// proxied request's absolute URL as any other). What the answers hold, it
// holds not: it parses nothing.
type relay struct {
	ln net.Listener
	wg sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startRelay(t *testing.T, target string) *relay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &relay{ln: ln, conns: map[net.Conn]struct{}{}}
	r.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			r.track(c, up)
			r.wg.Go(func() { r.pipe(c, up) })
		}
	})
	t.Cleanup(r.close)
	return r
}

func (r *relay) track(conns ...net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range conns {
		r.conns[c] = struct{}{}
	}
}

// pipe copies both ways until either side ends, then closes both.
func (r *relay) pipe(a, b net.Conn) {
	var both sync.WaitGroup
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = a.Close()
		_ = b.Close()
	}
	both.Go(func() { cp(b, a) })
	cp(a, b)
	both.Wait()
	r.mu.Lock()
	delete(r.conns, a)
	delete(r.conns, b)
	r.mu.Unlock()
}

func (r *relay) close() {
	_ = r.ln.Close()
	r.mu.Lock()
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// TestAnswerLimitsNeedNetHTTP: a transport that is not net/http's cannot be
// bounded, so the client is not built (a config-time error), rather than
// run unbounded.
func TestAnswerLimitsNeedNetHTTP(t *testing.T) {
	wrap, err := answerLimits{}.GetHTTPRoundTripper(t.Context())
	require.NoError(t, err)
	_, err = wrap(t.Context(), http.DefaultTransport.(*http.Transport).Clone())
	require.NoError(t, err)
	_, err = wrap(t.Context(), sendtest.Wrap(http.DefaultTransport))
	require.ErrorIs(t, err, errNotNetHTTP)
}

// TestAnswerLimitsLeaveTheConfigAlone: the middleware is added to a copy of
// the config's list and of the host's extensions, never to the caller's.
func TestAnswerLimitsLeaveTheConfigAlone(t *testing.T) {
	cfg := testConfig().Client
	cfg.Middlewares = make([]configmiddleware.Config, 1, 4)
	cfg.Middlewares[0].ID = testWrapID
	ext := map[component.ID]component.Component{testWrapID: sendtest.Extension(sendtest.Wrap)}
	got, gotExt := withAnswerLimits(cfg, ext)
	require.Len(t, got.Middlewares, 2)
	require.Equal(t, answerLimitsID, got.Middlewares[1].ID, "innermost: confighttp applies the last first")
	require.Contains(t, gotExt, answerLimitsID)
	require.NotContains(t, ext, answerLimitsID)
	require.Zero(t, cfg.Middlewares[:2][1], "nothing written into the spare capacity of the caller's list")
}
