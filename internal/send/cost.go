package send

import (
	"context"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/admit"
)

// envelopeOverhead is what an envelope costs beyond its item payloads (the
// headers, the encode.Outgoing that carries it), counted against the pending
// bounds.
const envelopeOverhead = 512

// EnvelopeSize is env's encoded size, within envelopeOverhead.
func EnvelopeSize(env *envelope.Envelope) int64 {
	n := int64(envelopeOverhead)
	for i := range env.Items {
		n += int64(len(env.Items[i].Payload))
	}
	return n
}

// requestCost is what one request for env holds while in flight, counted
// against pending::max_bytes_in_flight: the encoded envelope, its compressed
// copy (at most as large, counted as large), and admit.RequestOverhead.
func requestCost(env *envelope.Envelope) int64 {
	return 2*EnvelopeSize(env) + admit.RequestOverhead
}

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
