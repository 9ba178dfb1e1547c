package encode

import (
	"bytes"
	"context"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/errorshape"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/internal/traceindex"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

const (
	// MaxLogsPerEnvelope is what Relay "is optimized for" (develop docs, logs).
	MaxLogsPerEnvelope = 100
	// maxLogContainerBytes keeps a log container under Relay's per-log average
	// (2 MiB) whatever its count, and far under max_container_size (12 MiB).
	maxLogContainerBytes = 2 << 20
	// maxSpansPerEnvelope is the span v2 protocol's container maximum.
	maxSpansPerEnvelope = 1000
	// maxSpanContainerBytes follows sentry-python's ~5 MB flush size, far under
	// max_container_size (12 MiB).
	maxSpanContainerBytes = 5 << 20
)

// Outgoing is one envelope and what it carries, for the limit check and the
// accounting.
type Outgoing struct {
	Env    envelope.Envelope
	Gate   gate.Gate
	Counts account.Counts
	items  [][]byte    // container items, kept so a 413 can split the container once
	halve  ChunkHalver // a profile chunk's cut in two by time (profiles.go); nil: not cut
}

// Splittable reports whether o is a container, or a profile chunk, that
// Halves can split.
func (o *Outgoing) Splittable() bool { return len(o.items) > 1 || o.halve != nil }

// Encoder wraps one project's translated payloads into envelopes. Each
// envelope of a trace carries its dynamic sampling context, from the trace
// index and the project's public key; what cannot go in any envelope (an
// item over Relay's size limits) is counted invalid by the project's
// accountant.
type Encoder struct {
	index     *traceindex.Index
	publicKey string
	acct      *account.Accountant
}

// New is the encoder of one project.
func New(index *traceindex.Index, publicKey string, acct *account.Accountant) *Encoder {
	return &Encoder{index: index, publicKey: publicKey, acct: acct}
}

// dsc is the `trace` envelope header (dynamic sampling context). Every
// envelope of a trace carries the same one once the trace's head has been
// seen: its transaction, sampled flag and sample rate are the head's
// (traceindex.Index.Facts); own is the envelope's own segment name, used until then.
func (e *Encoder) dsc(traceID, environment, release, own string) *envelope.TraceContext {
	return e.dscOf(e.index.Facts(traceindex.TraceIDOf(traceID), own), traceID, environment, release)
}

// dscOf is dsc with the trace's facts already looked up.
func (e *Encoder) dscOf(f traceindex.Facts, traceID, environment, release string) *envelope.TraceContext {
	return &envelope.TraceContext{
		TraceID: traceID, PublicKey: e.publicKey,
		Environment: environment, Release: release, Transaction: f.Transaction,
		Sampled: f.Sampled, SampleRate: f.SampleRate, SampleRand: f.SampleRand,
	}
}

// Transaction wraps one transaction; facts are the DSC facts of the
// push's segments (traceindex.Index.Add), nil to look them up.
func (e *Encoder) Transaction(tx *translate.Transaction, facts []traceindex.Facts) Outgoing {
	var trace *envelope.TraceContext
	if tx.Segment < len(facts) {
		trace = e.dscOf(facts[tx.Segment].Or(tx.Name), tx.TraceID, tx.Environment, tx.Release)
	} else {
		trace = e.dsc(tx.TraceID, tx.Environment, tx.Release, tx.Name)
	}
	return Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{EventID: tx.EventID, SDK: sdkinfo.Envelope(), Trace: trace},
			Items:  []envelope.Item{{Type: envelope.ItemTypeTransaction, Payload: tx.Payload}},
		},
		Gate:   gate.GateTransaction,
		Counts: account.Counts{account.CatTransaction: 1, account.CatSpan: int64(tx.Spans)},
	}
}

// Error wraps one error event. When the trace index knows the
// event's span, an event without a transaction (one derived from a log
// record) gets its segment's name, and an event derived from a log record
// gets the segment's request and response status code (errorshape.WithSegmentRequest).
func (e *Encoder) Error(ev *translate.ErrorEvent) Outgoing {
	payload, tx := ev.Payload, ev.Transaction
	if ev.Linked && (tx == "" || ev.FromLog) {
		if seg, ok := e.index.SegmentOf(ev.TraceIDBytes, ev.SpanID); ok {
			if tx == "" && seg.Name != "" {
				payload, tx = errorshape.WithTransaction(payload, seg.Name), seg.Name
			}
			if ev.FromLog {
				payload = errorshape.WithSegmentRequest(payload, seg.Request, seg.StatusCode)
			}
		}
	}
	return Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{EventID: ev.EventID, SDK: sdkinfo.Envelope(), Trace: e.dsc(ev.TraceID, ev.Environment, ev.Release, tx)},
			Items:  []envelope.Item{{Type: envelope.ItemTypeEvent, Payload: payload}},
		},
		Gate:   gate.GateError,
		Counts: account.Counts{account.CatError: 1},
	}
}

// AppendSpans splits one trace's span v2 items into containers of at
// most maxSpansPerEnvelope; each envelope carries the DSC Relay requires.
// A trace that fits one container (the usual case) is sent as the
// translator framed it (SpanGroup.Container), without a copy; the payloads of
// a trace split in several are written into a.
func (e *Encoder) AppendSpans(ctx context.Context, out []Outgoing, g *translate.SpanGroup, a *Arena) []Outgoing {
	if g.Container != nil && len(g.Items) > 0 && len(g.Items) <= maxSpansPerEnvelope && len(g.Container) <= maxSpanContainerBytes {
		// the whole container fits, so no item is over the bound either
		return append(out, spanOutgoing(e.dsc(g.TraceID, g.Environment, g.Release, g.Segment), g.Items, g.Container))
	}
	// Chunk measures each container as AppendContainer writes it; a span v2
	// container's head is longer by spanHeadExtra bytes.
	spanHeadExtra := envelope.SpanContainerLen(nil) - envelope.ContainerLen(nil)
	chunks, oversized := envelope.Chunk(g.Items, maxSpansPerEnvelope, maxSpanContainerBytes-spanHeadExtra)
	e.acct.Dropped(ctx, account.ReasonInvalid, account.Counts{account.CatSpan: int64(len(oversized))})
	trace := e.dsc(g.TraceID, g.Environment, g.Release, g.Segment)
	for i, payload := range a.containers(chunks, true) {
		out = append(out, spanOutgoing(trace, chunks[i], payload))
	}
	return out
}

// containerOutgoing is the envelope of one container item of items, written
// as payload; the caller adds its counts.
func containerOutgoing(trace *envelope.TraceContext, itemType, contentType string, g gate.Gate, items [][]byte, payload []byte) Outgoing {
	return Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{SDK: sdkinfo.Envelope(), Trace: trace},
			Items: []envelope.Item{{
				Type: itemType, ContentType: contentType,
				ItemCount: len(items), Payload: payload,
			}},
		},
		Gate:  g,
		items: items,
	}
}

func spanOutgoing(trace *envelope.TraceContext, items [][]byte, payload []byte) Outgoing {
	o := containerOutgoing(trace, envelope.ItemTypeSpan, envelope.ContentTypeSpanContainer, gate.GateSpan, items, payload)
	o.Counts[account.CatSpan] = int64(len(items))
	return o
}

// AppendLogs packs log items into containers of at most
// MaxLogsPerEnvelope. Logs of many traces share a container, so the envelope
// has no `trace` header (Relay would reject a mismatching one). Their
// payloads are written into a.
func (e *Encoder) AppendLogs(ctx context.Context, out []Outgoing, logs [][]byte, a *Arena) []Outgoing {
	chunks, oversized := envelope.Chunk(logs, MaxLogsPerEnvelope, maxLogContainerBytes)
	var invalid account.Counts
	for _, i := range oversized {
		invalid[account.CatLogItem]++
		invalid[account.CatLogByte] += int64(len(logs[i]))
	}
	e.acct.Dropped(ctx, account.ReasonInvalid, invalid)
	for i, payload := range a.containers(chunks, false) {
		out = append(out, logOutgoing(chunks[i], payload))
	}
	return out
}

func logOutgoing(items [][]byte, payload []byte) Outgoing {
	o := containerOutgoing(nil, envelope.ItemTypeLog, envelope.ContentTypeLogContainer, gate.GateLogs, items, payload)
	o.Counts[account.CatLogItem] = int64(len(items))
	for _, it := range items {
		o.Counts[account.CatLogByte] += int64(len(it))
	}
	return o
}

// Detach copies what o refers to in its push's buffers (the payloads and a
// container's items) into memory of its own, so that o can outlive the push
// and the push's buffers go back to their pools at once: what o holds is
// then exactly its payloads. A container's items are slices of its copied
// payload (AppendContainer writes them end to end), so they cost no copy;
// items not found there leave o unsplittable, never copied.
func (o *Outgoing) Detach() {
	for i := range o.Env.Items {
		o.Env.Items[i].Payload = bytes.Clone(o.Env.Items[i].Payload)
	}
	if len(o.items) < 2 {
		o.items = nil // nothing to split
		return
	}
	// Items not found in the copy (a container not written by
	// AppendContainer) are not copied again, outside what the memory budget
	// counts: such an envelope is not split.
	o.items = itemsOf(o.Env.Items[0].Payload, o.items)
}

// itemsOf finds items, as AppendContainer wrote them, in the container
// payload: a head, the items separated by commas, and "]}"; nil when they
// are not there.
func itemsOf(payload []byte, items [][]byte) [][]byte {
	body := len(items) - 1 + len("]}")
	for _, it := range items {
		body += len(it)
	}
	at := len(payload) - body
	if at <= 0 {
		return nil
	}
	out := make([][]byte, len(items))
	for i, it := range items {
		if at+len(it) > len(payload) || !bytes.Equal(payload[at:at+len(it)], it) {
			return nil
		}
		out[i] = payload[at : at+len(it) : at+len(it)]
		at += len(it) + 1
	}
	return out
}

// Halves splits a container envelope, or a profile chunk, in two, for one
// more try after a 413.
func (o *Outgoing) Halves() [2]Outgoing {
	if o.halve != nil {
		return o.chunkHalves()
	}
	mid := len(o.items) / 2
	build := func(items [][]byte) Outgoing {
		switch o.Gate {
		case gate.GateLogs:
			return logOutgoing(items, envelope.Container(items))
		case gate.GateTraceMetric:
			return traceMetricOutgoing(items, envelope.Container(items))
		}
		return spanOutgoing(o.Env.Header.Trace, items, envelope.SpanContainer(items))
	}
	a, b := build(o.items[:mid]), build(o.items[mid:])
	a.items, b.items = nil, nil // sent once: no further split
	return [2]Outgoing{a, b}
}
