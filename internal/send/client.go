package send

import (
	"context"
	"net/http"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
)

// NewClient builds an HTTP client from cfg with confighttp, through the
// host's extensions (auth, middlewares): every HTTP client of the exporter
// is built here, each project's envelope client and the management API's.
// cfg's endpoint is ignored (each request has its own URL), and otelhttp's
// instrumentation is left out where it would record nothing
// (instrument.go). Whatever wraps its transport, what one answer may make it
// hold is bounded (answerlimits.go), and no redirect takes a request, with
// its credentials, to another host (redirect.go).
func NewClient(ctx context.Context, cfg confighttp.ClientConfig, host component.Host, tel component.TelemetrySettings) (*http.Client, error) {
	cfg.Endpoint = ""
	if !clientInstrumented(tel) {
		// confighttp wraps the transport in otelhttp only when both providers
		// are set: with nothing to record, leave it out.
		tel.TracerProvider = nil
	}
	cfg, extensions := withAnswerLimits(cfg, host.GetExtensions())
	client, err := cfg.ToClient(ctx, extensions, tel)
	if err != nil {
		return nil, err
	}
	client.CheckRedirect = sameHostRedirects
	return client, nil
}
