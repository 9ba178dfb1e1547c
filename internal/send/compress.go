package send

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/gate"
)

// Envelope bodies are compressed here, not by confighttp's round tripper, for
// two reasons: envelopes are many small bodies, for which zstd's one-shot
// EncodeAll into a reused buffer is far cheaper than a streaming writer into
// a fresh buffer per request; and a receiver that cannot decode zstd must still
// get our data, so the encoding is chosen per project and can fall back to gzip.
//
// No receiver says "unknown encoding" the same way, so the fallback rests on
// what a project's answers show, not on one status code:
//
//   - A Relay without zstd does not answer 415: its HttpEncoding::parse maps an
//     unknown Content-Encoding to identity, so it parses the zstd bytes as an
//     envelope and answers 400. So a 400 or 415 to a zstd body is re-sent at
//     once with gzip; if that is taken (2xx, 429, 413: read), the project falls
//     back. If it is refused too, the refusal was not about the encoding.
//   - Any other receiver (Spotlight answers 500 to a body it cannot decode):
//     while none of the project's zstd bodies has ever been delivered and they
//     were answered with a failure other than 429, 401 or 403, its next
//     envelope goes as a gzip probe. A no-answer is not an answer: a hung or
//     black-holed project never probes. A probe that is refused too (a Sentry
//     that is down answers 503 to every encoding) puts the next probe twice as
//     many zstd failures away. A probe that is delivered is confirmed by the
//     zstd bodies sent after it: one delivered, and zstd works (an outage
//     ended between the two); refused again, with at least minRefusals zstd
//     bodies refused in all, and the project falls back.
//
// A project falls back once: logged with the reason, counted in
// otelcol_exporter_sentry_compression_fallbacks. Once a zstd body was
// delivered, the project never probes again.

// BodyEncoding is how envelope bodies go on the wire.
type BodyEncoding uint8

const (
	// EncodingLeftToConfighttp: confighttp compresses (or not), as configured.
	EncodingLeftToConfighttp BodyEncoding = iota
	EncodingGzip
	EncodingZstd
)

// ContentEncoding is the Content-Encoding header of e ("" for EncodingLeftToConfighttp).
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
// `compression`; EncodingLeftToConfighttp for the others (deflate, br, none...), which
// stay with confighttp.
func OwnEncoding(t configcompression.Type) BodyEncoding {
	switch t {
	case configcompression.TypeZstd:
		return EncodingZstd
	case configcompression.TypeGzip:
		return EncodingGzip
	default:
		return EncodingLeftToConfighttp
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
		// No content checksum: it is optional in a frame (RFC 8878 3.1.1.1.1,
		// Content_Checksum_flag), TCP and TLS already guard the bytes, and it
		// costs an xxhash64 pass over every uncompressed body (about 3 % of
		// the compression of a transaction) and 4 bytes per envelope.
		zstd.WithEncoderCRC(false),
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

// minRefusals is how many zstd bodies, none delivered, are refused before a
// project falls back: a Sentry that answers a share of requests with 503 (a
// brownout) delivers a zstd body long before that many in a row are refused.
const minRefusals = 4

// maxProbeSpacing bounds how many refused zstd bodies wait for the next gzip
// probe once probes were refused too (a Sentry that is down).
const maxProbeSpacing = 64

// BodyEncoder is one project's choice of encoding: the configured one, or
// gzip once its receiver showed it does not decode zstd.
type BodyEncoder struct {
	comp       *Compressors
	configured BodyEncoding
	fellBack   atomic.Bool
	onFallback func(reason string) // counts and logs the fallback; called once per project

	mu sync.Mutex
	ev zstdEvidence
}

// zstdEvidence is what a zstd project's answers showed so far.
type zstdEvidence struct {
	taken    bool   // a zstd body was delivered: the receiver decodes zstd
	refused  int    // zstd bodies refused since the last refused probe
	total    int    // zstd bodies refused
	spacing  int    // refused zstd bodies before the next probe: 1 (NewBodyEncoder), doubled by each refused probe
	probing  bool   // a probe is in flight
	started  uint64 // attempts started
	probeOK  uint64 // started when a probe was delivered (0: none): a later zstd body confirms
	lastCode int    // the last status refusing a zstd body
}

// sendTicket is one attempt's encoding and its place in the project's sequence.
type sendTicket struct {
	enc   BodyEncoding
	probe bool // gzip in place of zstd, to learn whether the receiver decodes zstd
	// resend: the gzip re-send of a zstd body refused with 400 or 415, which
	// teaches what a probe teaches.
	resend bool
	seq    uint64
}

// answerSays: taken (the body was read and delivered), refused (answered
// with a failure that may be about the encoding), or nothing (no answer, or
// an answer about the sender: 429, 401, 403).
type answerSays uint8

const (
	saysNothing answerSays = iota
	saysTaken
	saysRefused
)

func readAnswer(res Result) answerSays {
	switch {
	case res.Delivered:
		return saysTaken
	case res.Status == 0, res.Status == http.StatusTooManyRequests,
		res.Status == http.StatusUnauthorized, res.Status == http.StatusForbidden:
		return saysNothing
	default:
		return saysRefused
	}
}

func (b *BodyEncoder) current() BodyEncoding {
	if b.configured == EncodingZstd && b.fellBack.Load() {
		return EncodingGzip
	}
	return b.configured
}

// choose is the encoding of the next attempt: gzip as a probe when due.
func (b *BodyEncoder) choose() sendTicket {
	enc := b.current()
	if enc != EncodingZstd {
		return sendTicket{enc: enc}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ev := &b.ev
	ev.started++
	t := sendTicket{enc: EncodingZstd, seq: ev.started}
	if !ev.taken && !ev.probing && ev.probeOK == 0 && ev.refused >= ev.spacing {
		ev.probing = true
		t.enc, t.probe = EncodingGzip, true
	}
	return t
}

// learn takes in an attempt's answer; it returns the reason to fall back,
// or "" to keep zstd.
func (b *BodyEncoder) learn(t sendTicket, res Result) string {
	if t.seq == 0 { // not a zstd project's attempt, or it fell back
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ev := &b.ev
	says := readAnswer(res)
	if t.probe || t.resend {
		ev.probing = ev.probing && t.resend
		switch says {
		case saysTaken:
			ev.probeOK = ev.started
		case saysRefused:
			ev.refused = 0
			ev.spacing = min(ev.spacing*2, maxProbeSpacing)
		}
		return ""
	}
	switch says {
	case saysTaken:
		ev.taken = true
	case saysRefused:
		ev.refused++
		ev.total++
		if ev.probeOK != 0 && t.seq > ev.probeOK && ev.total >= minRefusals && !ev.taken {
			return fmt.Sprintf("none of %d zstd bodies was delivered (answered %d, and %d after a gzip body was delivered)",
				ev.total, ev.lastCode, res.Status)
		}
		ev.lastCode = res.Status
	}
	return ""
}

// fallBack switches the project to gzip, once.
func (b *BodyEncoder) fallBack(reason string) {
	if b.fellBack.CompareAndSwap(false, true) {
		b.onFallback(reason)
	}
}

// refusedEncoding: an answer to a zstd body that a Relay without zstd gives.
func refusedEncoding(enc BodyEncoding, res Result) bool {
	return enc == EncodingZstd && (res.Status == http.StatusBadRequest || res.Status == http.StatusUnsupportedMediaType)
}

// attempt makes one POST of env, an envelope behind g, in the project's encoding (or a gzip probe,
// see the top of this file). A zstd body refused as a Relay without zstd
// refuses it is sent once more with gzip; so is one whose refusal made the
// project fall back, unless it will be retried anyway.
func (p *httpSender) attempt(ctx context.Context, g gate.Gate, env *envelope.Envelope) Result {
	if p.body == nil {
		return p.attemptEncoded(ctx, g, env, EncodingLeftToConfighttp)
	}
	t := p.body.choose()
	res := p.attemptEncoded(ctx, g, env, t.enc)
	if reason := p.body.learn(t, res); reason != "" {
		p.body.fallBack(reason)
		if res.retryable() {
			return res
		}
		return p.attemptEncoded(ctx, g, env, EncodingGzip)
	}
	if !refusedEncoding(t.enc, res) {
		return res
	}
	first := res.Status
	res = p.attemptEncoded(ctx, g, env, EncodingGzip)
	p.body.learn(sendTicket{enc: EncodingGzip, resend: true, seq: t.seq}, res)
	// Only an answer that read the gzip body (not a network error, not a 5xx)
	// shows that zstd was the problem.
	if res.Delivered || res.Status == http.StatusTooManyRequests || res.Status == http.StatusRequestEntityTooLarge {
		p.body.fallBack(fmt.Sprintf("a zstd body answered %d, the same envelope gzip-compressed %d (a Relay older than zstd support?)", first, res.Status))
	}
	return res
}

// NewBodyEncoder is a project's encoder for the configured compression.
func NewBodyEncoder(comp *Compressors, t configcompression.Type, logger *zap.Logger, count func()) *BodyEncoder {
	return &BodyEncoder{comp: comp, configured: OwnEncoding(t), ev: zstdEvidence{spacing: 1}, onFallback: func(reason string) {
		logger.Warn("Sentry refused zstd-compressed envelopes; this project's envelopes are gzip-compressed from now on",
			zap.String("reason", reason))
		count()
	}}
}
