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

// TestParseRejects: each way a DSN can be wrong gets its own phrase, and no
// error repeats the DSN's public or secret key (sentry-go's own errors quote
// the whole input).
func TestParseRejects(t *testing.T) {
	const key, secret = "pubk3yABC", "s3cr3tXYZ"
	tests := []struct {
		name, raw, want string
	}{
		{"empty", "", "the scheme must be http or https"},
		{"scheme", "ftp://" + key + "@o1.ingest.sentry.io/42", "the scheme must be http or https"},
		{"scheme, with a secret", "ftp://" + key + ":" + secret + "@o1.ingest.sentry.io/42", "the scheme must be http or https"},
		{"no public key", "https://:" + secret + "@o1.ingest.sentry.io/42", "it has no public key"},
		{"no userinfo", "https://o1.ingest.sentry.io/42", "it has no public key"},
		{"no host", "https://" + key + "@/42", "it has no host"},
		{"port out of range", "https://" + key + "@o1.ingest.sentry.io:99999999999999999999/42", "the port is not a number"},
		{"port not a number", "https://" + key + ":" + secret + "@o1.ingest.sentry.io:x/42", "it is not a URL"},
		{"no project id", "https://" + key + "@o1.ingest.sentry.io/", "it has no project id"},
		{"project id not numeric", "https://" + key + ":" + secret + "@o1.ingest.sentry.io/checkout", "the project id (last path segment) must be numeric"},
		{"not a URL", "https://" + key + ":" + secret + "@o1.ingest.sentry.io/4%zz2", "it is not a URL"},
		{"control character", "https://" + key + "@o1.ingest.sentry.io/42\x7f", "it is not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(tt.raw)
			require.Error(t, err)
			assert.Nil(t, d)
			assert.Equal(t, "`dsn` is not a valid Sentry DSN: "+tt.want, err.Error())
			assert.NotContains(t, err.Error(), key)
			assert.NotContains(t, err.Error(), secret)
		})
	}
}

// TestParseAccepts: what Relay takes, and what the DSN keeps of it.
func TestParseAccepts(t *testing.T) {
	tests := []struct {
		raw, project, key, url string
	}{
		{"https://k@o1.ingest.sentry.io/42", "42", "k", "https://o1.ingest.sentry.io/api/42/envelope/"},
		{"http://k:s@localhost:9000/prefix/7", "7", "k", "http://localhost:9000/prefix/api/7/envelope/"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			d, err := Parse(tt.raw)
			require.NoError(t, err)
			assert.Equal(t, tt.project, d.ProjectID)
			assert.Equal(t, tt.key, d.PublicKey)
			assert.Equal(t, tt.url, d.envelopeURL)
		})
	}
}

// TestParseEndpoint: an `endpoint` is an http(s) URL with a host and no query
// or fragment; its errors name the key.
func TestParseEndpoint(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"http://relay:3000", ""},
		{"https://relay.example/prefix/", ""},
		{"", "`endpoint` must be an http or https URL"},
		{"relay:3000", "`endpoint` must be an http or https URL"},
		{"ftp://relay", "`endpoint` must be an http or https URL"},
		{"https://", "`endpoint` must be an http or https URL"},
		{"https://relay/%zz", "`endpoint` must be an http or https URL"},
		{"https://relay/?a=1", "`endpoint` must not have a query or fragment"},
		{"https://relay/#top", "`endpoint` must not have a query or fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			u, err := ParseEndpoint(tt.raw)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.raw, u.String())
				return
			}
			require.EqualError(t, err, tt.want)
			if tt.raw != "" { // no endpoint: EnvelopeURL keeps the DSN's URL
				_, err = EnvelopeURL(&DSN{ProjectID: "1"}, tt.raw)
				require.EqualError(t, err, tt.want, "EnvelopeURL checks the endpoint the same way")
			}
		})
	}
}
