package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// Envelope bodies are compressed here, not by confighttp's round tripper, for
// two reasons: envelopes are many small bodies, for which zstd's one-shot
// EncodeAll into a reused buffer is far cheaper than a streaming writer into
// a fresh buffer per request; and a Relay that predates zstd must still get
// our data, so the encoding is chosen per project and can fall back to gzip.
//
// A Relay without zstd does not answer 415: its HttpEncoding::parse maps an
// unknown Content-Encoding to identity, so it parses the zstd bytes as an
// envelope and answers 400. So a 400 or 415 to a zstd body is re-sent once with
// gzip; if that is not refused too, the project stays on gzip from then on
// (logged once, counted in otelcol_exporter_sentry_compression_fallbacks). If
// the gzip body is refused the same way, the refusal was not about the
// encoding and the project keeps zstd.

// bodyEncoding is how envelope bodies go on the wire.
type bodyEncoding uint8

const (
	// encodingByClient: confighttp compresses (or not), as configured.
	encodingByClient bodyEncoding = iota
	encodingGzip
	encodingZstd
)

func (e bodyEncoding) contentEncoding() string {
	switch e {
	case encodingGzip:
		return "gzip"
	case encodingZstd:
		return "zstd"
	default:
		return ""
	}
}

// ownEncoding is the encoding this exporter applies itself for a configured
// `compression`; encodingByClient for the others (deflate, br, none...), which
// stay with confighttp.
func ownEncoding(t configcompression.Type) bodyEncoding {
	switch t {
	case configcompression.TypeZstd:
		return encodingZstd
	case configcompression.TypeGzip:
		return encodingGzip
	default:
		return encodingByClient
	}
}

// compressors are the exporter's encoders, shared by all its projects: one
// zstd encoder (EncodeAll is safe for concurrent use and keeps its own pool of
// states) and a pool of gzip writers.
type compressors struct {
	zstd      *zstd.Encoder
	gzipLevel int
	gzip      sync.Pool // *gzip.Writer
}

// newCompressors builds the encoders for a configured level (0 or the
// collector's default -1: the fastest).
func newCompressors(level configcompression.Level) *compressors {
	zl := zstd.SpeedFastest
	gl := gzip.BestSpeed
	if level > 0 {
		zl = zstd.EncoderLevelFromZstd(int(level))
		gl = min(int(level), gzip.BestCompression)
	}
	// Errors only come from invalid options, and these are valid.
	enc, _ := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zl),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithWindowSize(1<<20), // bodies are small; a smaller window needs less memory per state
	)
	return &compressors{zstd: enc, gzipLevel: gl}
}

// compress appends the encoding of body to dst (the caller's reused buffer).
func (c *compressors) compress(enc bodyEncoding, body, dst []byte) []byte {
	switch enc {
	case encodingZstd:
		return c.zstd.EncodeAll(body, dst)
	case encodingGzip:
		zw, _ := c.gzip.Get().(*gzip.Writer)
		w := &appendWriter{b: dst}
		if zw == nil {
			zw, _ = gzip.NewWriterLevel(w, c.gzipLevel)
		} else {
			zw.Reset(w)
		}
		_, _ = zw.Write(body) // an appendWriter never fails
		_ = zw.Close()
		c.gzip.Put(zw)
		return w.b
	}
	return append(dst, body...)
}

// appendWriter appends to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// bodyEncoder is one project's choice of encoding: the configured one, or
// gzip once its Sentry refused zstd.
type bodyEncoder struct {
	comp       *compressors
	configured bodyEncoding
	fellBack   atomic.Bool
	onFallback func() // counts and logs the fallback; called once per project
}

func (b *bodyEncoder) current() bodyEncoding {
	if b.configured == encodingZstd && b.fellBack.Load() {
		return encodingGzip
	}
	return b.configured
}

// refusedEncoding: Sentry's answer to a zstd body may mean it cannot decode it.
func refusedEncoding(enc bodyEncoding, res sendResult) bool {
	return enc == encodingZstd && (res.status == http.StatusBadRequest || res.status == http.StatusUnsupportedMediaType)
}

// attempt makes one POST of env, in the project's encoding; a zstd body that
// Sentry refused as if it could not decode it is sent once more with gzip (see
// the top of this file).
func (s *sender) attempt(ctx context.Context, env *envelope.Envelope) (sendResult, time.Duration) {
	enc := encodingByClient
	if s.body != nil {
		enc = s.body.current()
	}
	res, retryAfter := s.attemptEncoded(ctx, env, enc)
	if !refusedEncoding(enc, res) {
		return res, retryAfter
	}
	res, retryAfter = s.attemptEncoded(ctx, env, encodingGzip)
	// Only an answer that took the gzip body (not a network error, not a 5xx)
	// shows that zstd was the problem.
	tookGzip := res.delivered || res.status == http.StatusTooManyRequests || res.status == http.StatusRequestEntityTooLarge
	if tookGzip && s.body.fellBack.CompareAndSwap(false, true) && s.body.onFallback != nil {
		s.body.onFallback()
	}
	return res, retryAfter
}

// encodeBody is the hook in attemptEncoded: body as it goes on the wire
// (appended to dst, or body itself when uncompressed or left to confighttp)
// and its Content-Encoding ("" for none or confighttp's own).
func (s *sender) encodeBody(enc bodyEncoding, body, dst []byte) (wire []byte, contentEncoding bodyEncoding) {
	if enc == encodingByClient || s.body == nil {
		return body, encodingByClient
	}
	return s.body.comp.compress(enc, body, dst), enc
}

// newBodyEncoder is a project's encoder for the configured compression.
func newBodyEncoder(comp *compressors, t configcompression.Type, logger *zap.Logger, count func()) *bodyEncoder {
	return &bodyEncoder{comp: comp, configured: ownEncoding(t), onFallback: func() {
		logger.Warn("Sentry refused zstd-compressed envelopes (a Relay older than zstd support?); this project's envelopes are gzip-compressed from now on")
		count()
	}}
}
