package send

import (
	"context"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/admit"
)

const (
	// envelopeOverhead is what an envelope costs beyond its item payloads
	// (the headers, the job and the encode.Outgoing that carry it).
	envelopeOverhead = 512
	// requestOverhead is what one request in flight holds beyond the
	// envelope itself: the connection's bufio reader and writer (4 KiB each),
	// the transport's read and write goroutines and the worker's own stack
	// (8 KiB or more each), the request, response and header structures.
	requestOverhead = 32 << 10
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

// inFlightExtra is what a request for an envelope of size bytes holds beyond
// the envelope while in flight: its body on the wire (compressed, so at most
// about as large; counted as large) and requestOverhead. The encoded body it
// was compressed from goes back to the pool before the request starts.
func inFlightExtra(size int64) int64 { return size + requestOverhead }

// verdictOf is what res tells the project's concurrency limit.
func verdictOf(ctx context.Context, res Result) admit.Verdict {
	switch {
	case res.Status >= 500:
		return admit.VerdictOverload
	case res.Status > 0:
		return admit.VerdictOK
	case ctx.Err() != nil: // shutdown's drain time is over: cancelled by us
		return admit.VerdictIgnore
	default:
		return admit.VerdictNone
	}
}
