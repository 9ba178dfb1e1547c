package send

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// An envelope POST that Sentry (or whatever answers in its place) redirects
// to another host is not followed: nothing of it, neither X-Sentry-Auth nor
// `headers:` nor the auth extension's credentials nor the cookies, reaches
// that host. A redirect within the host is still followed.
func TestRedirectKeepsCredentialsOnTheirHost(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(other.Close)
	var moved atomic.Value // the headers the same-host target got
	sentry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away/":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cret", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, other.URL+"/api/1/envelope/", http.StatusTemporaryRedirect)
		case "/here/":
			http.Redirect(w, r, "/api/1/envelope/", http.StatusTemporaryRedirect)
		default:
			moved.Store(r.Header.Clone())
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(sentry.Close)

	authID := component.MustNewIDWithName("sendtest", "auth")
	cfg := confighttp.NewDefaultClientConfig()
	cfg.Headers = configopaque.MapList{{Name: "X-Relay-Token", Value: "relay-secret"}}
	cfg.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	cfg.Cookies = configoptional.Some(confighttp.CookiesConfig{})
	host := sendtest.HostWith(map[component.ID]component.Component{authID: sendtest.Auth("Authorization", "Bearer ext-secret")})
	client, err := NewClient(t.Context(), cfg, host, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)

	post := func(path string) error {
		req, nerr := http.NewRequestWithContext(t.Context(), http.MethodPost, sentry.URL+path, strings.NewReader("{}\n"))
		require.NoError(t, nerr)
		req.Header.Set("X-Sentry-Auth", "Sentry sentry_key=publickey, sentry_version=7")
		resp, derr := client.Do(req)
		if derr == nil {
			resp.Body.Close()
		}
		return derr
	}
	err = post("/away/")
	require.ErrorIs(t, err, errCrossHostRedirect)
	assert.Zero(t, elsewhere.Load(), "nothing reached the other host")

	require.NoError(t, post("/here/"), "a redirect within the host is followed")
	h := moved.Load().(http.Header)
	assert.Equal(t, "Bearer ext-secret", h.Get("Authorization"), "the credentials stayed on their host")
	assert.Equal(t, "relay-secret", h.Get("X-Relay-Token"))
}
