package sentryexporter

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configcompression"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/internal/send"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

const fallbacksMetric = "otelcol_exporter_sentry_compression_fallbacks"

// By default envelopes go out zstd-compressed, and a current Relay stores them.
func TestZstdByDefault(t *testing.T) { synctest.Test(t, testZstdByDefault) }

func testZstdByDefault(t *testing.T) {
	h := newHarness(t, nil)
	h.consumeTraces(0, 3, true)
	h.consumeLogs(10)
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.Positive(t, h.sentry.bodies("zstd"))
	assert.Zero(t, h.sentry.bodies("gzip")+h.sentry.bodies(""), "every body is zstd")
	assert.EqualValues(t, 9, h.sent("span"))
	assert.EqualValues(t, 3, h.sent("error"))
	assert.EqualValues(t, 10, h.sent("log_item"))
	assert.Zero(t, h.sum(fallbacksMetric, nil))
}

// A Relay that predates zstd takes the body for identity and answers 400: each
// such envelope is re-sent with gzip and stored once; the project switches to
// gzip for good, counted once; nothing is lost or dropped.
func TestOldRelayFallsBackToGzip(t *testing.T) { synctest.Test(t, testOldRelayFallsBackToGzip) }

func testOldRelayFallsBackToGzip(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false })
	h.sentry.oldRelay = true
	h.consumeTraces(0, 3, true)
	refused := h.sentry.bodies("zstd")
	require.Positive(t, refused)
	h.consumeTraces(3, 2, false)
	h.consumeLogs(10)
	h.shutdown()

	assert.Equal(t, refused, h.sentry.bodies("zstd"), "after the fallback no zstd body goes out")
	assert.Equal(t, 5+3+1, h.sentry.bodies("gzip"), "5 transactions, 3 error events and 1 log container, each stored once")
	assert.Len(t, h.sentry.envelopes(), 9)
	assert.EqualValues(t, 15, h.sent("span"))
	assert.EqualValues(t, 3, h.sent("error"))
	assert.EqualValues(t, 10, h.sent("log_item"))
	for _, cat := range []string{"span", "transaction", "error", "log_item"} {
		assert.Zero(t, h.droppedAll(cat), cat)
	}
	assert.EqualValues(t, 1, h.sum(fallbacksMetric, map[string]string{"project": "1"}))
	assert.EqualValues(t, refused, h.sum("otelcol_exporter_sentry_requests", map[string]string{"status": "400"}))
}

// A 400 that gzip gets too was not about the encoding: the envelope is counted
// once as send_error, and the project keeps zstd.
func TestInvalidEnvelopeKeepsZstd(t *testing.T) { synctest.Test(t, testInvalidEnvelopeKeepsZstd) }

func testInvalidEnvelopeKeepsZstd(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false })
	h.sentry.setRespond(func(*envelope.Envelope) answer { return answer{status: http.StatusBadRequest} })
	h.consumeTraces(0, 1, false)
	h.consumeTraces(1, 1, false)
	h.shutdown()
	assert.Equal(t, 2, h.sentry.bodies("zstd"))
	assert.Equal(t, 2, h.sentry.bodies("gzip"))
	assert.EqualValues(t, 6, h.dropped("span", "send_error"))
	assert.EqualValues(t, 2, h.dropped("transaction", "send_error"))
	assert.Zero(t, h.sum(fallbacksMetric, nil))
}

// A gzip resend that Sentry did not take (a 5xx, no answer) says nothing
// about zstd: the project keeps it and no fallback is counted.
func TestFailedResendKeepsZstd(t *testing.T) { synctest.Test(t, testFailedResendKeepsZstd) }

func testFailedResendKeepsZstd(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false; c.RetryConfig.Enabled = false })
	var mu sync.Mutex
	answers := []int{http.StatusBadRequest, http.StatusServiceUnavailable}
	h.sentry.setRespond(func(*envelope.Envelope) answer {
		mu.Lock()
		defer mu.Unlock()
		if len(answers) == 0 {
			return answer{status: http.StatusOK}
		}
		code := answers[0]
		answers = answers[1:]
		return answer{status: code}
	})
	h.consumeTraces(0, 1, false)
	h.consumeTraces(1, 1, false)
	h.shutdown()
	assert.Equal(t, 2, h.sentry.bodies("zstd"), "the second envelope still goes as zstd")
	assert.Zero(t, h.sum(fallbacksMetric, nil))
	assert.EqualValues(t, 3, h.dropped("span", "send_error"), "the first envelope, once")
	assert.EqualValues(t, 3, h.sent("span"))
}

// A 415 (an unknown encoding refused outright) falls back like a 400.
func TestUnsupportedMediaTypeFallsBack(t *testing.T) {
	synctest.Test(t, testUnsupportedMediaTypeFallsBack)
}

func testUnsupportedMediaTypeFallsBack(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ClientReports.Enabled = false })
	h.sentry.setRespond(func(*envelope.Envelope) answer { return answer{status: http.StatusOK} })
	var mu sync.Mutex
	first := true
	h.sentry.setRespond(func(*envelope.Envelope) answer {
		mu.Lock()
		defer mu.Unlock()
		if first {
			first = false
			return answer{status: http.StatusUnsupportedMediaType}
		}
		return answer{status: http.StatusOK}
	})
	h.consumeTraces(0, 1, false)
	h.consumeTraces(1, 1, false)
	h.shutdown()
	assert.Equal(t, 1, h.sentry.bodies("zstd"))
	assert.Equal(t, 2, h.sentry.bodies("gzip"))
	assert.EqualValues(t, 6, h.sent("span"))
	assert.EqualValues(t, 1, h.sum(fallbacksMetric, nil))
}

// compression: gzip and none are honored; gzip never tries zstd.
func TestConfiguredCompression(t *testing.T) {
	for _, tc := range []struct {
		compression configcompression.Type
		encoding    string
	}{{configcompression.TypeGzip, "gzip"}, {"", ""}} {
		t.Run(string(tc.compression), inBubble(func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.ClientConfig.Compression = tc.compression })
			h.consumeTraces(0, 2, true)
			h.consumeLogs(5)
			h.shutdown()
			h.sentry.requireNoInvalid()
			assert.Len(t, h.sentry.envelopes(), h.sentry.bodies(tc.encoding), "every body %q", tc.encoding)
			assert.EqualValues(t, 6, h.sent("span"))
			assert.EqualValues(t, 5, h.sent("log_item"))
		}))
	}
}

// BenchmarkCompressEnvelopes compresses each envelope of smallTraces (334
// transactions and an error event) one by one, as the sender does: zstd and
// gzip through internal/send, and the stdlib gzip writer at the default level
// that confighttp used before (a pooled writer, a fresh buffer per body).
func BenchmarkCompressEnvelopes(b *testing.B) {
	bodies, raw := transactionBodies(b)
	c := send.NewCompressors(configcompression.DefaultCompressionLevel)
	for _, enc := range []send.BodyEncoding{send.EncodingZstd, send.EncodingGzip} {
		b.Run(enc.ContentEncoding(), func(b *testing.B) {
			var buf []byte
			compressEach(b, bodies, raw, func(body []byte) int {
				buf = c.Compress(enc, body, buf[:0])
				return len(buf)
			})
		})
	}
	// compression_params.level 3 and 7: zstd's default and better levels
	for _, level := range []configcompression.Level{3, 7} {
		cl := send.NewCompressors(level)
		b.Run(fmt.Sprintf("zstd-level-%d", level), func(b *testing.B) {
			var buf []byte
			compressEach(b, bodies, raw, func(body []byte) int {
				buf = cl.Compress(send.EncodingZstd, body, buf[:0])
				return len(buf)
			})
		})
	}
	b.Run("stdlib-gzip-default", func(b *testing.B) {
		var pool sync.Pool
		compressEach(b, bodies, raw, func(body []byte) int { return stdlibGzip(&pool, body) })
	})
}

// transactionBodies is the envelope bodies of smallTraces' transactions, and
// their bytes in all.
func transactionBodies(b *testing.B) (bodies [][]byte, raw int) {
	b.Helper()
	e := benchExporter(b)
	res := e.translator.Traces(smallTraces(), translate.TracesWant{Transactions: true, Errors: true})
	defer res.Release()
	for i := range res.Transactions {
		tx := &res.Transactions[i]
		// the envelope transactionEnvelope builds, spelled out so that this
		// benchmark does not depend on its signature
		env := envelope.Envelope{
			Header: envelope.Header{
				EventID: tx.EventID, SentAt: testStart,
				SDK:   sdkinfo.Envelope(),
				Trace: &envelope.TraceContext{TraceID: tx.TraceID, PublicKey: "public", Environment: tx.Environment, Release: tx.Release, Transaction: tx.Name},
			},
			Items: []envelope.Item{{Type: envelope.ItemTypeTransaction, Payload: tx.Payload}},
		}
		bodies = append(bodies, env.AppendTo(nil))
		raw += len(bodies[len(bodies)-1])
	}
	return bodies, raw
}

// compressEach compresses every body per loop, reporting the bytes per
// envelope before and after.
func compressEach(b *testing.B, bodies [][]byte, raw int, compress func([]byte) int) {
	b.Helper()
	var wire int
	b.ReportAllocs()
	for b.Loop() {
		wire = 0
		for _, body := range bodies {
			wire += compress(body)
		}
	}
	b.ReportMetric(float64(wire)/float64(len(bodies)), "wireB/envelope")
	b.ReportMetric(float64(raw)/float64(len(bodies)), "rawB/envelope")
}

// stdlibGzip is what confighttp did before: the stdlib gzip writer at the
// default level, pooled, with a fresh buffer per body; it returns the size.
func stdlibGzip(pool *sync.Pool, body []byte) int {
	var buf bytes.Buffer
	zw, _ := pool.Get().(*stdgzip.Writer)
	if zw == nil {
		zw = stdgzip.NewWriter(&buf)
	} else {
		zw.Reset(&buf)
	}
	_, _ = zw.Write(body)
	_ = zw.Close()
	pool.Put(zw)
	return buf.Len()
}

// BenchmarkCompressByMode compresses each envelope of smallTraces as the
// sender does (zstd at the default level), built once as transactions and
// once as span v2 containers: span mode's items are about twice the bytes
// (typed attributes, the sentry.* attributes on every span), and this is
// what compressing them costs per span. The no-entropy rows are zstd without
// Huffman/FSE entropy coding: the cheaper effort that would trade wire bytes
// for CPU (not used).
func BenchmarkCompressByMode(b *testing.B) {
	for _, mode := range []TracesAs{TracesAsTransactions, TracesAsSpans} {
		bodies, raw, spans := modeBodies(b, mode)
		comp := send.NewCompressors(configcompression.DefaultCompressionLevel)
		noEntropy, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20),
			zstd.WithNoEntropyCompression(true))
		for _, enc := range []struct {
			name string
			f    func(src, dst []byte) []byte
		}{
			{"zstd", func(src, dst []byte) []byte { return comp.Compress(send.EncodingZstd, src, dst) }},
			{"zstd-no-entropy", func(src, dst []byte) []byte { return noEntropy.EncodeAll(src, dst) }},
		} {
			b.Run(string(mode)+"/"+enc.name, func(b *testing.B) { compressPerSpan(b, bodies, raw, spans, enc.f) })
		}
	}
}

// compressPerSpan compresses every body per loop, reporting the time and
// the bytes before and after per span.
func compressPerSpan(b *testing.B, bodies [][]byte, raw, spans int, compress func(src, dst []byte) []byte) {
	b.Helper()
	var buf []byte
	wire := 0
	for b.Loop() {
		wire = 0
		for _, body := range bodies {
			buf = compress(body, buf[:0])
			wire += len(buf)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(spans), "ns/span")
	b.ReportMetric(float64(raw)/float64(spans), "rawB/span")
	b.ReportMetric(float64(wire)/float64(spans), "wireB/span")
}

// modeBodies is the envelope bodies of smallTraces in one traces_as mode,
// their bytes in all, and the spans they carry.
func modeBodies(b *testing.B, mode TracesAs) (bodies [][]byte, raw, spans int) {
	b.Helper()
	e := benchExporter(b)
	e.cfg.TracesAs = mode
	td := smallTraces()
	out := traceEnvelopes(b, e, td, mode, false)
	for i := range out {
		out[i].Env.Header.SentAt = testStart
		bodies = append(bodies, out[i].Env.AppendTo(nil))
		raw += len(bodies[i])
	}
	return bodies, raw, td.SpanCount()
}
