package sentryexporter

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// memNet is an in-memory network for tests in a synctest bubble, where a
// real socket cannot live: the fake Sentry and the fake management API are
// handlers served by host name. The exporter's HTTP clients reach it as a
// collector's would reach any client middleware: confighttp's ToClient
// wraps its transport with internal/sendtest's extension, which the config
// names (useMemNet) and the host offers (memNet.host), so
// the clients are built as in production and no production type has a
// hook for tests. A host it does not serve goes to the real transport.
type memNet struct {
	mu    sync.Mutex
	hosts map[string]http.Handler
}

func newMemNet() *memNet { return &memNet{hosts: map[string]http.Handler{}} }

// serve answers requests to host ("name:port" or "name") with h.
func (n *memNet) serve(host string, h http.Handler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hosts[host] = h
}

func (n *memNet) handler(host string) http.Handler {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hosts[host]
}

// host is a host whose one extension, internal/sendtest's client
// middleware, puts n in front of confighttp's transport.
func (n *memNet) host() component.Host {
	return sendtest.Host(func(base http.RoundTripper) http.RoundTripper { return memTransport{net: n, base: base} })
}

// useMemNet names the middleware of memNet's host in a client config.
func useMemNet(c *confighttp.ClientConfig) { sendtest.Use(c) }

// refused is a host that refuses connections (a server that stopped).
type refused struct{ http.Handler }

// errMemReset is a connection closed without an answer.
var errMemReset = errors.New("connection reset by peer")

// memTransport serves each request to a host of its net in the caller's
// goroutine, and passes the rest to base.
type memTransport struct {
	net  *memNet
	base http.RoundTripper
}

func (t memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.net.handler(req.URL.Host)
	if h == nil {
		return t.base.RoundTrip(req)
	}
	if _, ok := h.(refused); ok {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	sreq := req.Clone(req.Context())
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	w := &memWriter{ResponseRecorder: httptest.NewRecorder()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, sreq)
		_ = sreq.Body.Close()
	}()
	select {
	case <-done:
	case <-req.Context().Done():
		return nil, req.Context().Err() // the handler still holds the request; its answer comes too late
	}
	if w.reset {
		return nil, errMemReset
	}
	resp := w.Result()
	resp.Request = req
	return resp, nil
}

// memWriter records an answer; a handler that hijacks the connection to
// close it resets it.
type memWriter struct {
	*httptest.ResponseRecorder
	reset bool
}

func (w *memWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.reset = true
	return nil, nil, errMemReset
}
