// Package sendtest is a test fixture: HTTP client extensions (a middleware,
// an authenticator) and a host that offers them, so that a test gives the
// send stage (or the whole exporter) a transport of its own the way a
// collector's configuration would, through confighttp's `middlewares` and
// `auth`, with no hook in a production type; and a raw HTTP/2 server
// (ServeHTTP2) that writes whatever frames an answer likes, for the hostile
// answers of internal/send and sentrysink's --huge-headers over TLS.
//
// It is beside the house: the component must never import it.
package sendtest

import (
	"context"
	"net/http"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
)

// ID is the middleware's extension ID in the host.
var ID = component.MustNewID("sendtest")

// Middleware wraps the transport confighttp built (net/http's, before any
// other wrapper): a test replaces it, or adjusts it and returns it.
type Middleware func(base http.RoundTripper) http.RoundTripper

// Transport is the middleware that sends every request through rt.
func Transport(rt http.RoundTripper) Middleware {
	return func(http.RoundTripper) http.RoundTripper { return rt }
}

// Use makes cfg's clients go through the middleware of a [Host].
func Use(cfg *confighttp.ClientConfig) {
	cfg.Middlewares = append(cfg.Middlewares, configmiddleware.Config{ID: ID})
}

// Host is a host whose one extension is m, under ID.
func Host(m Middleware) component.Host {
	return HostWith(map[component.ID]component.Component{ID: Extension(m)})
}

// HostWith is a host whose extensions are ext.
func HostWith(ext map[component.ID]component.Component) component.Host {
	return host{Host: componenttest.NewNopHost(), ext: ext}
}

type host struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

// Extension is m as a middleware extension, to be offered under an ID of the
// test's own (with [HostWith]) and named in a config's `middlewares`.
func Extension(m Middleware) component.Component { return extension{m: m} }

// Auth is an auth extension (extensionauth.HTTPClient) that sets header to
// value on every request, as a bearer-token authenticator would.
func Auth(header, value string) component.Component { return auth{header: header, value: value} }

type auth struct {
	component.StartFunc
	component.ShutdownFunc
	header, value string
}

func (a auth) RoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.Header.Set(a.header, a.value)
		return base.RoundTrip(req)
	}), nil
}

// Wrap is a middleware that wraps base in a round tripper of its own, as
// most middlewares do (so base is no longer the client's transport).
func Wrap(base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(base.RoundTrip)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// extension is m as a collector extension: an extensionmiddleware.HTTPClient.
type extension struct {
	component.StartFunc
	component.ShutdownFunc
	m Middleware
}

func (e extension) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, base http.RoundTripper) (http.RoundTripper, error) { return e.m(base), nil }, nil
}
