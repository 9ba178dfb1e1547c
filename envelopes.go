package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"context"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/errorshape"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/internal/traceindex"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

const (
	// maxLogsPerEnvelope is what Relay "is optimized for" (develop docs, logs).
	maxLogsPerEnvelope = 100
	// maxLogContainerBytes keeps a log container under Relay's per-log average
	// (2 MiB) whatever its count, and far under max_container_size (12 MiB).
	maxLogContainerBytes = 2 << 20
	// maxSpansPerEnvelope is the span v2 protocol's container maximum.
	maxSpansPerEnvelope = 1000
	// maxSpanContainerBytes follows sentry-python's ~5 MB flush size, far under
	// max_container_size (12 MiB).
	maxSpanContainerBytes = 5 << 20
)

// outgoing is one envelope and what it carries, for the limit check and the
// accounting.
type outgoing struct {
	env    envelope.Envelope
	gate   account.Gate
	counts account.Counts
	items  [][]byte // container items, kept so a 413 can split the container once
}

// sdk is the envelope `sdk` header; one value shared by every envelope.
var sdk = sdkinfo.Envelope()

// dsc is the `trace` envelope header (dynamic sampling context). Every
// envelope of a trace carries the same one once the trace's head has been
// seen: its transaction, sampled flag and sample rate are the head's
// (traceindex.Index.Facts); own is the envelope's own segment name, used until then.
func (p *project) dsc(traceID, environment, release, own string) *envelope.TraceContext {
	return p.dscOf(p.exp.index.Facts(traceindex.TraceIDOf(traceID), own), traceID, environment, release)
}

// dscOf is dsc with the trace's facts already looked up.
func (p *project) dscOf(f traceindex.Facts, traceID, environment, release string) *envelope.TraceContext {
	return &envelope.TraceContext{
		TraceID: traceID, PublicKey: p.dsn.PublicKey,
		Environment: environment, Release: release, Transaction: f.Transaction,
		Sampled: f.Sampled, SampleRate: f.SampleRate, SampleRand: f.SampleRand,
	}
}

// transactionEnvelope wraps one transaction; facts are the DSC facts of the
// push's segments (traceindex.Index.Add), nil to look them up.
func (p *project) transactionEnvelope(tx *translate.Transaction, facts []traceindex.Facts) outgoing {
	var trace *envelope.TraceContext
	if tx.Segment < len(facts) {
		trace = p.dscOf(facts[tx.Segment].Or(tx.Name), tx.TraceID, tx.Environment, tx.Release)
	} else {
		trace = p.dsc(tx.TraceID, tx.Environment, tx.Release, tx.Name)
	}
	return outgoing{
		env: envelope.Envelope{
			Header: envelope.Header{EventID: tx.EventID, SDK: sdk, Trace: trace},
			Items:  []envelope.Item{{Type: envelope.ItemTypeTransaction, Payload: tx.Payload}},
		},
		gate:   account.GateTransaction,
		counts: account.Counts{account.CatTransaction: 1, account.CatSpan: int64(tx.Spans)},
	}
}

// errorEnvelope wraps one error event. When the trace index knows the
// event's span, an event without a transaction (one derived from a log
// record) gets its segment's name, and an event derived from a log record
// gets the segment's request and response status code (errorshape.WithSegmentRequest).
func (p *project) errorEnvelope(ev *translate.ErrorEvent) outgoing {
	payload, tx := ev.Payload, ev.Transaction
	if ev.Linked && (tx == "" || ev.FromLog) {
		if seg, ok := p.exp.index.SegmentOf(ev.TraceIDBytes, ev.SpanID); ok {
			if tx == "" && seg.Name != "" {
				payload, tx = errorshape.WithTransaction(payload, seg.Name), seg.Name
			}
			if ev.FromLog {
				payload = errorshape.WithSegmentRequest(payload, seg.Request, seg.StatusCode)
			}
		}
	}
	return outgoing{
		env: envelope.Envelope{
			Header: envelope.Header{EventID: ev.EventID, SDK: sdk, Trace: p.dsc(ev.TraceID, ev.Environment, ev.Release, tx)},
			Items:  []envelope.Item{{Type: envelope.ItemTypeEvent, Payload: payload}},
		},
		gate:   account.GateError,
		counts: account.Counts{account.CatError: 1},
	}
}

// appendSpanEnvelopes splits one trace's span v2 items into containers of at
// most maxSpansPerEnvelope; each envelope carries the DSC Relay requires.
// A trace that fits one container (the usual case) is sent as the
// translator framed it (SpanGroup.Container), without a copy; the payloads of
// a trace split in several are written into a.
func (p *project) appendSpanEnvelopes(ctx context.Context, out []outgoing, g *translate.SpanGroup, a *payloadArena) []outgoing {
	if g.Container != nil && len(g.Items) > 0 && len(g.Items) <= maxSpansPerEnvelope && len(g.Container) <= maxSpanContainerBytes {
		// the whole container fits, so no item is over the bound either
		return append(out, spanOutgoing(p.dsc(g.TraceID, g.Environment, g.Release, g.Segment), g.Items, g.Container))
	}
	chunks, oversized := envelope.Chunk(g.Items, maxSpansPerEnvelope, maxSpanContainerBytes)
	p.acct.Dropped(ctx, account.ReasonInvalid, account.Counts{account.CatSpan: int64(len(oversized))})
	trace := p.dsc(g.TraceID, g.Environment, g.Release, g.Segment)
	for i, payload := range a.containers(chunks, true) {
		out = append(out, spanOutgoing(trace, chunks[i], payload))
	}
	return out
}

func spanOutgoing(trace *envelope.TraceContext, items [][]byte, payload []byte) outgoing {
	return outgoing{
		env: envelope.Envelope{
			Header: envelope.Header{SDK: sdk, Trace: trace},
			Items: []envelope.Item{{
				Type: envelope.ItemTypeSpan, ContentType: envelope.ContentTypeSpanContainer,
				ItemCount: len(items), Payload: payload,
			}},
		},
		gate:   account.GateSpan,
		counts: account.Counts{account.CatSpan: int64(len(items))},
		items:  items,
	}
}

// appendLogEnvelopes packs log items into containers of at most
// maxLogsPerEnvelope. Logs of many traces share a container, so the envelope
// has no `trace` header (Relay would reject a mismatching one). Their
// payloads are written into a.
func (p *project) appendLogEnvelopes(ctx context.Context, out []outgoing, logs [][]byte, a *payloadArena) []outgoing {
	chunks, oversized := envelope.Chunk(logs, maxLogsPerEnvelope, maxLogContainerBytes)
	var invalid account.Counts
	for _, i := range oversized {
		invalid[account.CatLogItem]++
		invalid[account.CatLogByte] += int64(len(logs[i]))
	}
	p.acct.Dropped(ctx, account.ReasonInvalid, invalid)
	for i, payload := range a.containers(chunks, false) {
		out = append(out, logOutgoing(chunks[i], payload))
	}
	return out
}

func logOutgoing(items [][]byte, payload []byte) outgoing {
	o := outgoing{
		env: envelope.Envelope{
			Header: envelope.Header{SDK: sdk},
			Items: []envelope.Item{{
				Type: envelope.ItemTypeLog, ContentType: envelope.ContentTypeLogContainer,
				ItemCount: len(items), Payload: payload,
			}},
		},
		gate:  account.GateLogs,
		items: items,
	}
	o.counts[account.CatLogItem] = int64(len(items))
	for _, it := range items {
		o.counts[account.CatLogByte] += int64(len(it))
	}
	return o
}

// halves splits a container envelope in two, for one more try after a 413.
func (o *outgoing) halves() [2]outgoing {
	mid := len(o.items) / 2
	build := func(items [][]byte) outgoing {
		if o.gate == account.GateLogs {
			return logOutgoing(items, envelope.Container(items))
		}
		return spanOutgoing(o.env.Header.Trace, items, envelope.SpanContainer(items))
	}
	a, b := build(o.items[:mid]), build(o.items[mid:])
	a.items, b.items = nil, nil // sent once: no further split
	return [2]outgoing{a, b}
}
