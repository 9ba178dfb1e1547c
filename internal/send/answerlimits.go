package send

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
)

// What one answer may make a client hold, whatever wraps the transport.
//
// confighttp's ToClient builds net/http's transport, then wraps it: in the
// configured middlewares, the auth extension's round tripper, `headers:`,
// its compression and otelhttp. Only the transport reads answers, and what
// it has built is out of reach once wrapped; the one place that sees it
// bare is the innermost middleware. So every client of the exporter is
// built with one more middleware, last in the list (confighttp applies them
// from the last, so it wraps first): answerLimits, which sets the limits on
// the transport and hands it on unwrapped, before any connection exists.
// net/http reads them when it reads an answer, or opens an HTTP/2
// connection (the bundled HTTP/2 and golang.org/x/net/http2's, which
// `http2_read_idle_timeout` installs, alike).
const (
	// maxAnswerStreamBuffer is HTTP/2's receive window of a stream: how much
	// of an answer's body net/http buffers before the stage reads it (it
	// reads at most maxResponseRead). net/http's default is 4 MiB.
	maxAnswerStreamBuffer = 64 << 10
	// maxAnswerConnBuffer is HTTP/2's receive window of a connection: what
	// all its streams' answers may buffer at once. net/http's default is
	// 1 GiB; 64 KiB is the least HTTP/2 allows.
	maxAnswerConnBuffer = 256 << 10
	// maxAnswerFrame is the largest HTTP/2 frame the client accepts (its
	// read buffer, one per connection): the least HTTP/2 allows, where
	// net/http's default is 1 MiB.
	maxAnswerFrame = 16 << 10
)

// answerLimitsID names the middleware among the host's extensions. Its type
// is no extension's a collector could be configured with.
var answerLimitsID = component.MustNewID("sentryexporter_answer_limits")

// errNotNetHTTP: the innermost round tripper is not net/http's transport (a
// confighttp that builds another), so nothing could bound the answers.
var errNotNetHTTP = errors.New("sentry exporter: confighttp built no net/http transport to bound answers on")

// withAnswerLimits returns cfg and extensions with answerLimits added as
// the innermost middleware; neither argument is changed.
func withAnswerLimits(cfg confighttp.ClientConfig, extensions map[component.ID]component.Component) (confighttp.ClientConfig, map[component.ID]component.Component) {
	cfg.Middlewares = append(slices.Clone(cfg.Middlewares), configmiddleware.Config{ID: answerLimitsID})
	ext := maps.Clone(extensions)
	if ext == nil {
		ext = map[component.ID]component.Component{}
	}
	ext[answerLimitsID] = answerLimits{}
	return cfg, ext
}

// answerLimits is the middleware: an extensionmiddleware.HTTPClient that
// bounds net/http's transport and returns it as it is.
type answerLimits struct {
	component.StartFunc
	component.ShutdownFunc
}

func (answerLimits) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, base http.RoundTripper) (http.RoundTripper, error) {
		t, ok := base.(*http.Transport)
		if !ok {
			return nil, errNotNetHTTP
		}
		limitAnswers(t)
		return t, nil
	}, nil
}

// limitAnswers sets t's limits on what an answer may hold: its header bytes
// over HTTP/1 (1xx answers and a proxy's answer to CONNECT included) and
// its header list over HTTP/2 (net/http derives SETTINGS_MAX_HEADER_LIST_SIZE
// from MaxResponseHeaderBytes, plus 320 B), and HTTP/2's receive windows
// and frame size. The body is the stage's to bound (maxResponseRead,
// maxAnswerRead).
func limitAnswers(t *http.Transport) {
	t.MaxResponseHeaderBytes = maxAnswerHeader
	h2 := http.HTTP2Config{}
	if t.HTTP2 != nil {
		h2 = *t.HTTP2
	}
	h2.MaxReceiveBufferPerStream = maxAnswerStreamBuffer
	h2.MaxReceiveBufferPerConnection = maxAnswerConnBuffer
	h2.MaxReadFrameSize = maxAnswerFrame
	t.HTTP2 = &h2
}
