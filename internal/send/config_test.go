package send

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/internal/inlinehttp"
)

func newTestStage(cfg Config) *Stage {
	return New(cfg, Settings{Telemetry: componenttest.NewNopTelemetrySettings(), Logger: zap.NewNop(), Clock: RealClock()})
}

// TestNewDefaults: a timeout left at zero (or below) takes its default; one
// configured is kept.
func TestNewDefaults(t *testing.T) {
	for _, tt := range []struct {
		set, final, read time.Duration
	}{
		{0, defaultFinalReportTimeout, maxAnswerRead},
		{-time.Second, defaultFinalReportTimeout, maxAnswerRead},
		{5 * time.Second, 5 * time.Second, 5 * time.Second},
	} {
		cfg := testConfig()
		cfg.FinalReportTimeout, cfg.AnswerReadTimeout = tt.set, tt.set
		s := newTestStage(cfg)
		assert.Equal(t, tt.final, s.cfg.FinalReportTimeout, "final_report_timeout %v", tt.set)
		assert.Equal(t, tt.read, s.cfg.AnswerReadTimeout, "answer read timeout %v", tt.set)
	}
	assert.Equal(t, 2*time.Second, defaultFinalReportTimeout)
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
		{configcompression.TypeZstd, true, "inline"},
		{configcompression.TypeGzip, true, "inline"},
		{configcompression.TypeDeflate, false, "confighttp"},
		{"none", false, "inline"},
		{"", false, "inline"},
	} {
		t.Run(string(tt.compression), func(t *testing.T) {
			cfg := testConfig()
			cfg.Client.Compression = tt.compression
			s := newTestStage(cfg)
			assert.Equal(t, tt.own, s.comp != nil, "the stage's encoders")
			l, err := s.NewLane(LaneOptions{URL: "http://sentry.test/api/1/envelope/", Acct: nil})
			require.NoError(t, err)
			assert.Equal(t, tt.own, l.post.body != nil, "the lane's encoder")
			client, err := s.newClient(t.Context(), componenttest.NewNopHost())
			require.NoError(t, err)
			assert.Equal(t, tt.transport, transportKind(client.Transport))
		})
	}
}

// transportKind names what serves a client's requests: inlinehttp (over
// net/http's transport), net/http's transport alone, or confighttp's chain.
func transportKind(rt http.RoundTripper) string {
	switch rt.(type) {
	case *inlinehttp.Transport:
		return "inline"
	case *http.Transport:
		return "nethttp"
	default:
		return "confighttp"
	}
}

// TestInlineOnlyWhereNothingIsLost: inlinehttp serves a project's requests
// only when the client's settings ask for nothing that confighttp's
// transport chain alone does.
func TestInlineOnlyWhereNothingIsLost(t *testing.T) {
	authID := component.MustNewID("bearertokenauth")
	for _, tt := range []struct {
		name   string
		set    func(*confighttp.ClientConfig)
		inline bool
	}{
		{"defaults", func(*confighttp.ClientConfig) {}, true},
		{"headers", func(c *confighttp.ClientConfig) {
			c.Headers = configopaque.MapList{{Name: "X-Tenant", Value: "a"}, {Name: "Host", Value: "relay.internal"}}
		}, true},
		{"a header value with a newline", func(c *confighttp.ClientConfig) {
			c.Headers = configopaque.MapList{{Name: "X-Tenant", Value: "a\r\nX-Injected: 1"}}
		}, false},
		{"auth", func(c *confighttp.ClientConfig) {
			c.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
		}, false},
		{"middlewares", func(c *confighttp.ClientConfig) {
			c.Middlewares = []configmiddleware.Config{{ID: authID}}
		}, false},
		{"proxy_url", func(c *confighttp.ClientConfig) { c.ProxyURL = "http://proxy:3128" }, false},
		{"cookies", func(c *confighttp.ClientConfig) {
			c.Cookies = configoptional.Some(confighttp.CookiesConfig{})
		}, false},
		{"keep-alive off", func(c *confighttp.ClientConfig) {
			c.Keepalive = configoptional.None[confighttp.KeepaliveClientConfig]()
		}, false},
		{"max_conns_per_host", func(c *confighttp.ClientConfig) { c.MaxConnsPerHost = 4 }, false},
		{"deflate by confighttp", func(c *confighttp.ClientConfig) { c.Compression = configcompression.TypeDeflate }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig().Client
			tt.set(&cfg)
			_, ok := inlineOptions(&cfg, http.DefaultTransport, false)
			assert.Equal(t, tt.inline, ok)
		})
	}
	cfg := testConfig().Client
	_, ok := inlineOptions(&cfg, http.DefaultTransport, true)
	assert.False(t, ok, "otelhttp recording: confighttp's chain")
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
		opts, ok := inlineOptions(&clientCfg, nil, false)
		require.True(t, ok)
		assert.Equal(t, tt.want, opts.MaxIdlePerHost, "inlinehttp's, max_idle_conns_per_host %d", tt.set)
		client, err := s.newClient(t.Context(), componenttest.NewNopHost())
		require.NoError(t, err)
		assert.Equal(t, "inline", transportKind(client.Transport))
	}
}
