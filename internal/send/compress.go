package send

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"

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

// BodyEncoding is how envelope bodies go on the wire.
type BodyEncoding uint8

const (
	// EncodingByClient: confighttp compresses (or not), as configured.
	EncodingByClient BodyEncoding = iota
	EncodingGzip
	EncodingZstd
)

// ContentEncoding is the Content-Encoding header of e ("" for EncodingByClient).
func (e BodyEncoding) ContentEncoding() string {
	switch e {
	case EncodingGzip:
		return "gzip"
	case EncodingZstd:
		return "zstd"
	default:
		return ""
	}
}

// OwnEncoding is the encoding this exporter applies itself for a configured
// `compression`; EncodingByClient for the others (deflate, br, none...), which
// stay with confighttp.
func OwnEncoding(t configcompression.Type) BodyEncoding {
	switch t {
	case configcompression.TypeZstd:
		return EncodingZstd
	case configcompression.TypeGzip:
		return EncodingGzip
	default:
		return EncodingByClient
	}
}

// Compressors are the exporter's encoders, shared by all its projects: one
// zstd encoder (EncodeAll is safe for concurrent use and keeps its own pool of
// states) and a pool of gzip writers.
type Compressors struct {
	zstd      *zstd.Encoder
	gzipLevel int
	gzip      sync.Pool // *gzip.Writer
}

// NewCompressors builds the encoders for a configured level (0 or the
// collector's default -1: the fastest).
func NewCompressors(level configcompression.Level) *Compressors {
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
	return &Compressors{zstd: enc, gzipLevel: gl}
}

// Compress appends the encoding of body to dst (the caller's reused buffer).
func (c *Compressors) Compress(enc BodyEncoding, body, dst []byte) []byte {
	switch enc {
	case EncodingZstd:
		return c.zstd.EncodeAll(body, dst)
	case EncodingGzip:
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

// BodyEncoder is one project's choice of encoding: the configured one, or
// gzip once its Sentry refused zstd.
type BodyEncoder struct {
	comp       *Compressors
	configured BodyEncoding
	fellBack   atomic.Bool
	onFallback func() // counts and logs the fallback; called once per project
}

func (b *BodyEncoder) current() BodyEncoding {
	if b.configured == EncodingZstd && b.fellBack.Load() {
		return EncodingGzip
	}
	return b.configured
}

// refusedEncoding: Sentry's answer to a zstd body may mean it cannot decode it.
func refusedEncoding(enc BodyEncoding, res Result) bool {
	return enc == EncodingZstd && (res.Status == http.StatusBadRequest || res.Status == http.StatusUnsupportedMediaType)
}

// attempt makes one POST of env, in the project's encoding; a zstd body that
// Sentry refused as if it could not decode it is sent once more with gzip (see
// the top of this file).
func (p *poster) attempt(ctx context.Context, env *envelope.Envelope) Result {
	enc := EncodingByClient
	if p.body != nil {
		enc = p.body.current()
	}
	res := p.attemptEncoded(ctx, env, enc)
	if !refusedEncoding(enc, res) {
		return res
	}
	res = p.attemptEncoded(ctx, env, EncodingGzip)
	// Only an answer that took the gzip body (not a network error, not a 5xx)
	// shows that zstd was the problem.
	tookGzip := res.Delivered || res.Status == http.StatusTooManyRequests || res.Status == http.StatusRequestEntityTooLarge
	if tookGzip && p.body.fellBack.CompareAndSwap(false, true) && p.body.onFallback != nil {
		p.body.onFallback()
	}
	return res
}

// NewBodyEncoder is a project's encoder for the configured compression.
func NewBodyEncoder(comp *Compressors, t configcompression.Type, logger *zap.Logger, count func()) *BodyEncoder {
	return &BodyEncoder{comp: comp, configured: OwnEncoding(t), onFallback: func() {
		logger.Warn("Sentry refused zstd-compressed envelopes (a Relay older than zstd support?); this project's envelopes are gzip-compressed from now on")
		count()
	}}
}
