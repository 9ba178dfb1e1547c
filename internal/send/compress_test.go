package send

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
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
		wg.Go(func() { roundTrips(t, c, dec, g) })
	}
	wg.Wait()
}

// roundTrips compresses 50 bodies of goroutine g's with each encoding, in
// one reused buffer as the sender reuses its buffers, and decompresses them.
func roundTrips(t *testing.T, c *Compressors, dec *zstd.Decoder, g int) {
	var buf []byte
	for i := range 50 {
		body := bytes.Repeat([]byte{byte('a' + (g+i)%26), '{', '"', '}'}, 100+i*37)
		for _, enc := range []BodyEncoding{EncodingZstd, EncodingGzip} {
			buf = c.Compress(enc, body, buf[:0])
			got, err := decompress(dec, enc, buf)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("%s round trip: %v (%d bytes, want %d)", enc.ContentEncoding(), err, len(got), len(body))
				return
			}
		}
	}
}

// compressingFixture is one project whose client is configured with
// compression and timeout.
func compressingFixture(t *testing.T, compression configcompression.Type, timeout time.Duration) *fixture {
	return newFixture(t, 1, func(c *Config) {
		c.Client.Compression = compression
		c.Client.Timeout = timeout
	}, false)
}

// decompress is body, compressed with enc, decompressed (zstd by dec).
func decompress(dec *zstd.Decoder, enc BodyEncoding, body []byte) ([]byte, error) {
	if enc == EncodingZstd {
		return dec.DecodeAll(body, nil)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
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
		{EncodingLeftToConfighttp, 400, false},
	} {
		assert.Equal(t, tt.want, refusedEncoding(tt.enc, Result{Status: tt.status}), "%s answered %d", tt.enc.ContentEncoding(), tt.status)
	}
}

// TestCompressionFallback: a zstd body Sentry refuses with a 400 or a 415 is
// sent again once with gzip; if the gzip body is taken (stored, 429 or 413:
// Sentry read it), the project stays on gzip from then on, counted and
// logged once. If it is not (refused the same way, a 5xx, no answer), the
// refusal was not about the encoding and the project keeps zstd. A zstd body
// refused otherwise (a 500) is not sent again, but the next envelope is a
// gzip probe (TestCompressionProbe follows the probes); one answered 401
// says nothing about the encoding.
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
		{"400, no answer to gzip: the next envelope probes", configcompression.TypeZstd, answer{status: 400}, answer{hang: true}, []string{"zstd", "gzip", "gzip"}, false},
		{"zstd answered 401: not sent again", configcompression.TypeZstd, answer{status: 401}, answer{status: 200}, []string{"zstd", "zstd"}, false},
		{"zstd answered 500: not sent again, the next is a probe", configcompression.TypeZstd, answer{status: 500}, answer{status: 200}, []string{"zstd", "gzip"}, false},
		{"gzip configured, answered 400: not sent again", configcompression.TypeGzip, answer{status: 400}, answer{status: 400}, []string{"gzip", "gzip"}, false},
		{"none configured", "", answer{status: 400}, answer{status: 400}, []string{"none", "none"}, false},
	}
	for _, tt := range tests {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := compressingFixture(t, tt.configured, 2*time.Second)
			f.sentry.respond = func(_ string, n int, _ *envelope.Envelope) answer {
				if f.sentry.got()[n].encoding == "zstd" {
					return tt.toZstd
				}
				return tt.toGzip
			}
			for i := range 2 { // one envelope after the other: the second shows the project's encoding
				o := tx(i)
				f.lanes[0].http.attempt(t.Context(), o.Gate, &o.Env)
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
	}
}

// encodingReceiver answers each request as its case says, by the body's
// Content-Encoding, the time since the test began and the encodings of the
// bodies that came before.
type encodingReceiver struct {
	mu     sync.Mutex
	start  time.Time
	answer func(enc string, at time.Duration, before []string) reply
	got    []string
}

// reply is one answer of an encodingReceiver: a status, or none at all.
type reply struct {
	status int
	hang   bool // until the request's timeout
	reset  bool // the connection is reset: black-holed
}

func (r *encodingReceiver) RoundTrip(req *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, req.Body)
	_ = req.Body.Close()
	enc := req.Header.Get("Content-Encoding")
	r.mu.Lock()
	rep := r.answer(enc, time.Since(r.start), r.got)
	r.got = append(r.got, enc)
	r.mu.Unlock()
	switch {
	case rep.reset:
		return nil, syscall.ECONNRESET
	case rep.hang:
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: rep.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func (r *encodingReceiver) encodings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// outageOfAMinute: fault for the first minute, then 200 to everything.
func outageOfAMinute(fault reply) func(string, time.Duration, []string) reply {
	return func(_ string, at time.Duration, _ []string) reply {
		if at < time.Minute {
			return fault
		}
		return reply{status: http.StatusOK}
	}
}

// byEncoding: zstd bodies get toZstd, the others 200.
func byEncoding(toZstd int) func(string, time.Duration, []string) reply {
	return func(enc string, _ time.Duration, _ []string) reply {
		if enc == "zstd" {
			return reply{status: toZstd}
		}
		return reply{status: http.StatusOK}
	}
}

// zstdOnceThen500 delivers the first body, then refuses zstd with a 500.
func zstdOnceThen500(enc string, _ time.Duration, before []string) reply {
	if len(before) == 0 || enc != "zstd" {
		return reply{status: http.StatusOK}
	}
	return reply{status: http.StatusInternalServerError}
}

// brownoutStart answers 503 to the first two zstd bodies.
func brownoutStart(enc string, _ time.Duration, before []string) reply {
	if enc == "zstd" && len(before) < 3 {
		return reply{status: http.StatusServiceUnavailable}
	}
	return reply{status: http.StatusOK}
}

// outageEnding answers 503 to zstd until a gzip body came.
func outageEnding(enc string, _ time.Duration, before []string) reply {
	if enc == "zstd" && !slices.Contains(before, "gzip") {
		return reply{status: http.StatusServiceUnavailable}
	}
	return reply{status: http.StatusOK}
}

// assertFallback: the fallback to gzip counted and logged (with its reason)
// once when fallback, else neither.
func assertFallback(t *testing.T, f *fixture, fallback bool) {
	fallbacks := f.sums("compression_fallbacks")
	warned := f.logs.FilterMessageSnippet("refused zstd-compressed envelopes")
	if !fallback {
		assert.Empty(t, fallbacks)
		assert.Zero(t, warned.Len())
		return
	}
	assert.Equal(t, map[string]int64{"project=1": 1}, fallbacks, "counted once")
	require.Equal(t, 1, warned.Len(), "logged once")
	assert.NotEmpty(t, warned.All()[0].ContextMap()["reason"], "with its reason")
}

// TestCompressionProbe: a zstd project whose zstd bodies were all refused
// (any answer but 429, 401 or 403), none ever delivered, probes with gzip and
// falls back when the receiver takes gzip and still refuses zstd; a real
// outage never flips it. Two minutes of one envelope a second, each retried
// per retry_on_failure, then the retries' time.
func TestCompressionProbe(t *testing.T) {
	tests := []struct {
		name      string
		answer    func(enc string, at time.Duration, before []string) reply
		fallback  bool
		probes    bool   // any gzip body went out
		last      string // the encoding of the last body
		delivered int64  // transactions stored, of 120
	}{
		{"hung for a minute", outageOfAMinute(reply{hang: true}), false, false, "zstd", 120},
		{"black-holed for a minute", outageOfAMinute(reply{reset: true}), false, false, "zstd", 120},
		{"503 to every encoding for a minute", outageOfAMinute(reply{status: 503}), false, true, "zstd", 120},
		{"429 to every encoding for a minute: nothing learnt", outageOfAMinute(reply{status: 429}), false, false, "zstd", 60},
		{"500 to zstd only (Spotlight)", byEncoding(500), true, true, "gzip", 120},
		{"400 to zstd only (a Relay without zstd)", byEncoding(400), true, true, "gzip", 120},
		{"503 to zstd only", byEncoding(503), true, true, "gzip", 120},
		{"zstd delivered once, then 500 to zstd only", zstdOnceThen500, false, false, "zstd", 1},
		{"503 to the first two zstd bodies, a gzip probe between them delivered (a brownout's start)", brownoutStart, false, true, "zstd", 120},
		{"503 until a gzip probe is delivered, then 200 (an outage ending)", outageEnding, false, true, "zstd", 120},
	}
	for _, tt := range tests {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := compressingFixture(t, configcompression.TypeZstd, 5*time.Second)
			rx := &encodingReceiver{start: time.Now(), answer: tt.answer}
			f.lanes[0].http.client.Store(&http.Client{Transport: rx})
			for i := range 120 {
				f.lanes[0].Offer(t.Context(), txs(i+1, 1), nil)
				time.Sleep(time.Second)
			}
			time.Sleep(10 * time.Minute) // every retry is over
			synctest.Wait()

			got := rx.encodings()
			require.NotEmpty(t, got)
			assert.Equal(t, tt.last, got[len(got)-1], "the last body's encoding")
			assert.Equal(t, tt.probes, slices.Contains(got, "gzip"), "gzip bodies went out")
			assert.Equal(t, tt.delivered, f.sums("sent_items")["category=transaction,project=1"], "stored")
			assertFallback(t, f, tt.fallback)
			f.shutdown()
		})
	}
}

// TestZstdFrameWithoutChecksum: zstd bodies carry no content checksum (the
// frame header descriptor's bit 2 is clear) and still decode.
func TestZstdFrameWithoutChecksum(t *testing.T) {
	c := NewCompressors(configcompression.DefaultCompressionLevel)
	body := []byte(strings.Repeat(`{"type":"transaction","spans":[]}`+"\n", 40))
	z := c.Compress(EncodingZstd, body, nil)
	require.Greater(t, len(z), 4)
	require.Equal(t, []byte{0x28, 0xb5, 0x2f, 0xfd}, z[:4], "zstd magic number")
	assert.Zero(t, z[4]&0x04, "Content_Checksum_flag set")
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	got, err := dec.DecodeAll(z, nil)
	require.NoError(t, err)
	assert.Equal(t, body, got)
}
