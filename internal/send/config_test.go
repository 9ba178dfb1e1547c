package send

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/zap"
)

func newTestStage(cfg Config) *Stage {
	return New(cfg, Settings{Telemetry: componenttest.NewNopTelemetrySettings(), Logger: zap.NewNop()})
}

// TestCompressionByWhom: zstd and gzip are the stage's own (its encoders, and
// no compression of confighttp's in the client); every other compression is
// confighttp's, and then its transport chain serves every request.
func TestCompressionByWhom(t *testing.T) {
	for _, tt := range []struct {
		compression configcompression.Type
		own         bool
		transport   string
	}{
		{configcompression.TypeZstd, true, "nethttp"},
		{configcompression.TypeGzip, true, "nethttp"},
		{configcompression.TypeDeflate, false, "confighttp"},
		{"none", false, "nethttp"},
		{"", false, "nethttp"},
	} {
		t.Run(string(tt.compression), func(t *testing.T) {
			cfg := testConfig()
			cfg.Client.Compression = tt.compression
			s := newTestStage(cfg)
			assert.Equal(t, tt.own, s.comp != nil, "the stage's encoders")
			l, err := s.NewLane(LaneOptions{URL: "http://sentry.test/api/1/envelope/", Acct: nil})
			require.NoError(t, err)
			assert.Equal(t, tt.own, l.http.body != nil, "the lane's encoder")
			client, err := s.newClient(t.Context(), componenttest.NewNopHost())
			require.NoError(t, err)
			assert.Equal(t, tt.transport, transportKind(client.Transport))
			assert.Zero(t, client.Timeout, "`timeout` is on each request's context, not the client")
		})
	}
}

// transportKind names what serves a client's requests: net/http's transport
// alone, or confighttp's chain around it.
func transportKind(rt http.RoundTripper) string {
	switch rt.(type) {
	case *http.Transport:
		return "nethttp"
	default:
		return "confighttp"
	}
}

// TestIdleConnections: a project keeps up to max_concurrent_requests idle
// connections, unless keepalive sets its own number.
func TestIdleConnections(t *testing.T) {
	for _, tt := range []struct {
		set, want int
	}{
		{0, 8},
		{3, 3},
	} {
		cfg := testConfig()
		ka := confighttp.NewDefaultKeepaliveClientConfig()
		ka.MaxIdleConnsPerHost = tt.set
		cfg.Client.Keepalive = configoptional.Some(ka)
		s := newTestStage(cfg)
		clientCfg := s.clientConfig()
		assert.Equal(t, tt.want, clientCfg.Keepalive.Get().MaxIdleConnsPerHost, "net/http's, max_idle_conns_per_host %d", tt.set)
		client, err := s.newClient(t.Context(), componenttest.NewNopHost())
		require.NoError(t, err)
		tr, ok := client.Transport.(*http.Transport)
		require.True(t, ok, "net/http's transport, unwrapped")
		assert.Equal(t, tt.want, tr.MaxIdleConnsPerHost, "the transport's, max_idle_conns_per_host %d", tt.set)
	}
}
