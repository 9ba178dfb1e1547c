package send

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// TestRequestHeaders: every request carries the envelope's content type, the
// project's X-Sentry-Auth and the User-Agent, and a Content-Encoding only for
// an encoding the stage applied itself (confighttp sets its own).
func TestRequestHeaders(t *testing.T) {
	tmpl, err := newRequestTemplate("http://sentry.test/api/7/envelope/", "Sentry sentry_key=public", "agent/1")
	require.NoError(t, err)
	for _, tt := range []struct {
		enc      BodyEncoding
		encoding []string // nil: no Content-Encoding header at all
	}{
		{EncodingLeftToConfighttp, nil},
		{EncodingGzip, []string{"gzip"}},
		{EncodingZstd, []string{"zstd"}},
	} {
		req := tmpl.new(t.Context(), io.NopCloser(strings.NewReader("body")), 4, tt.enc)
		assert.Equal(t, http.MethodPost, req.Method)
		assert.Equal(t, "http://sentry.test/api/7/envelope/", req.URL.String())
		assert.Equal(t, int64(4), req.ContentLength)
		assert.Equal(t, http.Header{
			"Content-Type":  {envelope.ContentType},
			"X-Sentry-Auth": {"Sentry sentry_key=public"},
			"User-Agent":    {"agent/1"},
		}, withoutEncoding(req.Header), tt.enc.ContentEncoding())
		got, ok := req.Header["Content-Encoding"]
		assert.Equal(t, tt.encoding != nil, ok, "Content-Encoding present")
		assert.Equal(t, tt.encoding, got)
		req.URL.Path = "/changed" // a round tripper may rewrite its request's URL
	}
	assert.Equal(t, "/api/7/envelope/", tmpl.base.URL.Path, "each request has its own URL")
}

func withoutEncoding(h http.Header) http.Header {
	h = h.Clone()
	delete(h, "Content-Encoding")
	return h
}
