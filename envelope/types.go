package envelope

import "time"

// Item types, as written in the item header `type`.
const (
	ItemTypeEvent        = "event"
	ItemTypeTransaction  = "transaction"
	ItemTypeSpan         = "span"
	ItemTypeLog          = "log"
	ItemTypeTraceMetric  = "trace_metric"
	ItemTypeClientReport = "client_report"
	// ItemTypeProfileChunk is one chunk of a continuous profile (its item
	// header names its `platform`; see Item.Platform).
	ItemTypeProfileChunk = "profile_chunk"
)

// Content types, as written in the item header `content_type` and the HTTP request.
const (
	// ContentTypeJSON is the content type of event, transaction and client report items.
	ContentTypeJSON = "application/json"
	// ContentTypeLogContainer marks a log item as a container of logs.
	ContentTypeLogContainer = "application/vnd.sentry.items.log+json"
	// ContentTypeSpanContainer marks a span item as a container of span v2 spans.
	ContentTypeSpanContainer = "application/vnd.sentry.items.span.v2+json"
	// ContentTypeTraceMetricContainer marks a trace_metric item as a container of
	// metrics, as sentry-go 0.50 and @sentry/core write it (the develop docs spell
	// it trace_metric+json; Relay reads the item type, not the content type).
	ContentTypeTraceMetricContainer = "application/vnd.sentry.items.trace-metric+json"
	// ContentType is the HTTP Content-Type of an envelope request body.
	ContentType = "application/x-sentry-envelope"
)

// SDKInfo is the `sdk` envelope header.
type SDKInfo struct {
	Name    string
	Version string
}

// TraceContext is the Dynamic Sampling Context sent as the `trace` envelope header.
// Empty fields are omitted. SampleRate and SampleRand are strings on the wire, as
// the SDKs write them (Relay rejects a number for sample_rate);
// Sampled "true" or "false" is written as a JSON bool, any other non-empty value as a string.
type TraceContext struct {
	TraceID     string
	PublicKey   string
	Release     string
	Environment string
	Transaction string
	SampleRate  string
	Sampled     string
	// SampleRand is the trace's random value in [0, 1) that sampling decisions
	// compare with the sample rate (@sentry/core 11 writes it on every DSC).
	SampleRand string
}

// Header is the envelope header line.
type Header struct {
	// EventID is 32 lowercase hex characters; omitted when "".
	EventID string
	// SentAt is written as RFC 3339 UTC with a fraction; omitted when zero. It is written
	// exactly once, since a duplicate key makes Sentry reject the envelope.
	SentAt time.Time
	// SDK is omitted when nil.
	SDK *SDKInfo
	// Trace is omitted when nil.
	Trace *TraceContext

	// traceErr records why Parse found the `trace` header malformed. Relay parses the DSC
	// inside an error boundary and treats a malformed one as absent; Validate reports it.
	traceErr error
}

// Item is one envelope item: its header fields and its payload.
type Item struct {
	Type string
	// ContentType is omitted when "".
	ContentType string
	// ItemCount is written as `item_count` when > 0; containers need it.
	ItemCount int
	// Platform is written as `platform` when not "". A profile_chunk needs
	// it: Relay reads the profile type (backend or UI) from it, counts the
	// item in profile_chunk or profile_chunk_ui by it, and drops a chunk
	// whose payload's platform differs (relay-server envelope/item.rs
	// Item::profile_type, processing/profile_chunks/process.rs).
	Platform string
	// Payload is the complete payload; for a container, the whole {"items":[...]} object.
	Payload []byte
}

// Envelope is a Sentry envelope: one header and its items, in order.
type Envelope struct {
	Header Header
	Items  []Item
}
