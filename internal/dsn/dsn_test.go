package dsn

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
)

func TestEnvelopeURL(t *testing.T) {
	tests := []struct{ dsn, endpoint, want string }{
		{"https://k@o1.ingest.sentry.io/42", "", "https://o1.ingest.sentry.io/api/42/envelope/"},
		{"https://k@example.com/sentry/42", "", "https://example.com/sentry/api/42/envelope/"},
		{"http://k@localhost:9000/7", "", "http://localhost:9000/api/7/envelope/"},
		{"https://k@example.com:443/7", "", "https://example.com/api/7/envelope/"},
		{"https://k@o1.ingest.sentry.io/42", "http://relay:3000", "http://relay:3000/api/42/envelope/"},
		{"https://k@o1.ingest.sentry.io/42", "http://relay:3000/prefix/", "http://relay:3000/prefix/api/42/envelope/"},
	}
	for _, tt := range tests {
		d, err := Parse(tt.dsn)
		require.NoError(t, err)
		got, err := EnvelopeURL(d, tt.endpoint)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
		assert.NotContains(t, got, "k@")
	}
}

func TestAuthHeader(t *testing.T) {
	d, err := Parse("https://pub:sec@o1.ingest.sentry.io/42")
	require.NoError(t, err)
	assert.Equal(t, "Sentry sentry_version=7, sentry_client="+sdkinfo.Name+"/"+sdkinfo.Version+", sentry_key=pub, sentry_secret=sec", d.AuthHeader)
	d, err = Parse("https://pub@o1.ingest.sentry.io/42")
	require.NoError(t, err)
	assert.Equal(t, "Sentry sentry_version=7, sentry_client="+sdkinfo.Name+"/"+sdkinfo.Version+", sentry_key=pub", d.AuthHeader)
}
