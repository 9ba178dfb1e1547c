package send

import (
	"net/http"

	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/otel-sentry/sentryexporter/internal/inlinehttp"
)

// One envelope is one request, and net/http's HTTP/1.1 transport hands each
// request to a connection's writeLoop and its answer back from its readLoop:
// three goroutine switches per envelope, most of the client's cost at a
// gateway's rates (docs/performance.md). To a plain-http endpoint (a Relay
// in the cluster, say) the stage posts through internal/inlinehttp instead,
// which does the exchange on the worker's goroutine, whenever the client's
// settings ask for nothing that only confighttp's transport chain does:
// no auth extension, no middlewares or dialer middleware, no proxy_url, no
// cookies, keep-alive on, no cap on connections per host, no compression
// but the stage's own, and no otelhttp instrumentation that records.
// Everything else, https (HTTP/2 by default) and a host the environment's
// proxy serves included, goes through confighttp's client unchanged.

// inlineTransport returns the transport for client, built by confighttp
// from cfg (the stage's clientConfig: its compression is confighttp's,
// cleared when the stage compresses itself): inlinehttp's with client's as
// its fallback, or client's own when cfg asks for what only confighttp's
// chain does.
func inlineTransport(cfg *confighttp.ClientConfig, client http.RoundTripper, instrumented bool) http.RoundTripper {
	opts, ok := inlineOptions(cfg, client, instrumented)
	if !ok {
		return client
	}
	if t := inlinehttp.New(opts); t != nil {
		return t
	}
	return client
}

// inlineOptions are inlinehttp's options for cfg; false when cfg asks for
// what only confighttp's chain does.
func inlineOptions(cfg *confighttp.ClientConfig, client http.RoundTripper, instrumented bool) (inlinehttp.Options, bool) {
	if cfg.Compression.IsCompressed() || instrumented || cfg.Auth.HasValue() ||
		len(cfg.Middlewares) > 0 || cfg.DialerMiddleware.HasValue() || cfg.ProxyURL != "" ||
		cfg.Cookies.HasValue() || !cfg.Keepalive.HasValue() || cfg.MaxConnsPerHost > 0 {
		return inlinehttp.Options{}, false
	}
	headers := http.Header{}
	for k, v := range cfg.Headers.Iter {
		headers.Set(k, string(v))
	}
	if !inlinehttp.HeadersValid(headers) {
		return inlinehttp.Options{}, false // net/http reports them, per request
	}
	ka := cfg.Keepalive.Get()
	return inlinehttp.Options{
		Fallback:       client,
		Proxy:          http.ProxyFromEnvironment,
		MaxIdlePerHost: ka.MaxIdleConnsPerHost,
		IdleTimeout:    ka.IdleConnTimeout,
		ReadBufferSize: cfg.ReadBufferSize,
		Headers:        headers,
	}, true
}
