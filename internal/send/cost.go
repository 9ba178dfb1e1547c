package send

import (
	"context"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/concurrency"
)

const (
	// envelopeOverhead is what an envelope costs beyond its item payloads
	// (the headers, the job and the encode.Outgoing that carry it).
	envelopeOverhead = 512
	// requestOverhead is what one request in flight holds beyond its body
	// and the body's copies: the connection's bufio reader and writer (4 KiB
	// each), the request, response and header structures, the answer's
	// snippet buffer and a client report riding along (a few hundred bytes).
	requestOverhead = 32 << 10
	// maxTransportCopy is the most of a body the transport holds itself:
	// HTTP/2 writes it through a scratch buffer of one frame, at most
	// 512 KiB (net/http's frameScratchBufferLen); HTTP/1.1 through the
	// connection's bufio writer (in requestOverhead).
	maxTransportCopy = 512 << 10
)

// envelopeSize is what env counts against the memory budget while it waits:
// its payloads and envelopeOverhead.
func envelopeSize(env *envelope.Envelope) int64 {
	n := int64(envelopeOverhead)
	for i := range env.Items {
		n += int64(len(env.Items[i].Payload))
	}
	return n
}

// inFlightExtra is what a request for an envelope of size bytes holds
// beyond the envelope while in flight, reserved before the attempt starts
// (docs/memory.md):
//   - the envelope written out whole (the raw body), size;
//   - each compressed copy, counted as large as the envelope and 1/128 more
//     (incompressible data): the compressor's output and the request's own
//     copy of it when the stage compresses (both live while the copy is
//     made; the pooled buffers wait in their pools for the next attempt),
//     confighttp's compressed body when it compresses;
//   - the transport's own copy, at most maxTransportCopy, and its buffers
//     beyond net/http's 4 KiB when write_buffer_size or read_buffer_size
//     set them;
//   - requestOverhead.
func (s *Stage) inFlightExtra(size int64) int64 {
	copies := int64(0)
	switch {
	case s.comp != nil:
		copies = 2
	case s.cfg.Client.Compression.IsCompressed():
		copies = 1
	}
	buffers := int64(max(s.cfg.Client.WriteBufferSize, 0) + max(s.cfg.Client.ReadBufferSize, 0))
	return size + copies*(size+size/128) + min(size, maxTransportCopy) + buffers + requestOverhead
}

// verdictOf is what res tells the project's concurrency limit.
func verdictOf(ctx context.Context, res Result) concurrency.Verdict {
	switch {
	case res.Status >= 500:
		return concurrency.VerdictOverload
	case res.Status > 0:
		return concurrency.VerdictOK
	case ctx.Err() != nil: // shutdown's drain time is over: cancelled by us
		return concurrency.VerdictIgnore
	default:
		return concurrency.VerdictNone
	}
}
