package send

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configcompression"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// The pooled encoders round-trip under concurrent use, and reused buffers
// never leak one body into another.
func TestCompressorsRoundTrip(t *testing.T) {
	c := NewCompressors(configcompression.DefaultCompressionLevel)
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			var buf []byte // reused, as the sender reuses its buffers
			for i := range 50 {
				body := bytes.Repeat([]byte{byte('a' + (g+i)%26), '{', '"', '}'}, 100+i*37)
				for _, enc := range []BodyEncoding{EncodingZstd, EncodingGzip} {
					buf = c.Compress(enc, body, buf[:0])
					out := buf
					var got []byte
					var err error
					if enc == EncodingZstd {
						got, err = dec.DecodeAll(out, nil)
					} else {
						var zr *gzip.Reader
						if zr, err = gzip.NewReader(bytes.NewReader(out)); err == nil {
							got, err = io.ReadAll(zr)
						}
					}
					if err != nil || !bytes.Equal(got, body) {
						t.Errorf("%s round trip: %v (%d bytes, want %d)", enc.ContentEncoding(), err, len(got), len(body))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestCompressorLevels: the configured level, or the fastest for 0 and the
// collector's default (-1); gzip's at most BestCompression.
func TestCompressorLevels(t *testing.T) {
	for _, tt := range []struct {
		level configcompression.Level
		gzip  int
	}{
		{configcompression.DefaultCompressionLevel, gzip.BestSpeed},
		{0, gzip.BestSpeed},
		{1, 1},
		{6, 6},
		{9, 9},
		{12, gzip.BestCompression},
	} {
		assert.Equal(t, tt.gzip, NewCompressors(tt.level).gzipLevel, "level %d", tt.level)
	}
}

// TestRefusedEncoding: only a 400 or a 415 to a zstd body may mean that
// Sentry could not decode it.
func TestRefusedEncoding(t *testing.T) {
	for _, tt := range []struct {
		enc    BodyEncoding
		status int
		want   bool
	}{
		{EncodingZstd, 400, true},
		{EncodingZstd, 415, true},
		{EncodingZstd, 401, false},
		{EncodingZstd, 413, false},
		{EncodingZstd, 500, false},
		{EncodingZstd, 200, false},
		{EncodingZstd, 0, false},
		{EncodingGzip, 400, false},
		{EncodingGzip, 415, false},
		{EncodingByClient, 400, false},
	} {
		assert.Equal(t, tt.want, refusedEncoding(tt.enc, Result{Status: tt.status}), "%s answered %d", tt.enc.ContentEncoding(), tt.status)
	}
}

// TestCompressionFallback: a zstd body Sentry refuses with a 400 or a 415 is
// sent again once with gzip; if the gzip body is taken (stored, 429 or 413:
// Sentry read it), the project stays on gzip from then on, counted and
// logged once. If it is not (refused the same way, a 5xx, no answer), the
// refusal was not about the encoding and the project keeps zstd. Any other
// answer, and any answer to another encoding, is not sent again.
func TestCompressionFallback(t *testing.T) {
	tests := []struct {
		name       string
		configured configcompression.Type
		toZstd     answer // what Sentry answers to a zstd body
		toGzip     answer // and to a gzip body
		want       []string
		fallback   bool
	}{
		{"zstd taken", configcompression.TypeZstd, answer{status: 200}, answer{status: 200}, []string{"zstd", "zstd"}, false},
		{"a Relay without zstd: 400, gzip stored", configcompression.TypeZstd, answer{status: 400}, answer{status: 200}, []string{"zstd", "gzip", "gzip"}, true},
		{"415, gzip stored", configcompression.TypeZstd, answer{status: 415}, answer{status: 200}, []string{"zstd", "gzip", "gzip"}, true},
		{"400, gzip answered 429", configcompression.TypeZstd, answer{status: 400}, answer{status: 429}, []string{"zstd", "gzip", "gzip"}, true},
		{"400, gzip answered 413", configcompression.TypeZstd, answer{status: 400}, answer{status: 413}, []string{"zstd", "gzip", "gzip"}, true},
		{"400, gzip refused too: not the encoding", configcompression.TypeZstd, answer{status: 400}, answer{status: 400}, []string{"zstd", "gzip", "zstd", "gzip"}, false},
		{"400, gzip answered 503", configcompression.TypeZstd, answer{status: 400}, answer{status: 503}, []string{"zstd", "gzip", "zstd", "gzip"}, false},
		{"400, no answer to gzip", configcompression.TypeZstd, answer{status: 400}, answer{hang: true}, []string{"zstd", "gzip", "zstd", "gzip"}, false},
		{"zstd answered 401: not sent again", configcompression.TypeZstd, answer{status: 401}, answer{status: 200}, []string{"zstd", "zstd"}, false},
		{"zstd answered 500: not sent again", configcompression.TypeZstd, answer{status: 500}, answer{status: 200}, []string{"zstd", "zstd"}, false},
		{"gzip configured, answered 400: not sent again", configcompression.TypeGzip, answer{status: 400}, answer{status: 400}, []string{"gzip", "gzip"}, false},
		{"none configured", "", answer{status: 400}, answer{status: 400}, []string{"none", "none"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, 1, func(c *Config) {
					c.Client.Compression = tt.configured
					c.Client.Timeout = 2 * time.Second
				}, false)
				f.sentry.respond = func(_ string, n int, _ *envelope.Envelope) answer {
					if f.sentry.got()[n].encoding == "zstd" {
						return tt.toZstd
					}
					return tt.toGzip
				}
				for i := range 2 { // one envelope after the other: the second shows the project's encoding
					o := tx(i)
					f.lanes[0].post.attempt(t.Context(), &o.Env)
				}
				assert.Equal(t, tt.want, f.sentry.encodings())
				fallbacks := f.sums("compression_fallbacks")
				warned := f.logs.FilterMessageSnippet("refused zstd-compressed envelopes").Len()
				if tt.fallback {
					assert.Equal(t, map[string]int64{"project=1": 1}, fallbacks, "counted once")
					assert.Equal(t, 1, warned, "logged once")
				} else {
					assert.Empty(t, fallbacks)
					assert.Zero(t, warned)
				}
				f.shutdown()
			})
		})
	}
}
