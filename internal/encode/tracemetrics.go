package encode

import (
	"context"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/gate"
)

const (
	// MaxTraceMetricsPerEnvelope bounds a trace_metric container by count;
	// sentry-go and @sentry/core flush at 100, but a collector's batch is
	// larger, and one envelope per 1,000 metrics costs less per metric.
	MaxTraceMetricsPerEnvelope = 1000
	// maxTraceMetricContainerBytes keeps a container far under Relay's
	// max_container_size (12 MiB), as logs' bound does.
	maxTraceMetricContainerBytes = 2 << 20
	// maxTraceMetricBytes is max_trace_metric_size as sentry.io runs Relay
	// (2 KiB, not the self-hosted 1 MiB): a metric over it is dropped by
	// Relay, so it is counted invalid here. internal/tracemetric already
	// holds each metric to a little less (tracemetric.MaxItemBytes, which
	// also counts Relay's 8 bytes per array element), so this is a guard.
	maxTraceMetricBytes = envelope.SentryTraceMetricSize
)

// AppendTraceMetrics packs trace metric items into one trace_metric
// container per envelope, at most MaxTraceMetricsPerEnvelope each. Metrics
// of many traces share a container, so the envelope has no `trace` header
// (the develop docs forbid a DSC then). Their payloads are written into a.
func (e *Encoder) AppendTraceMetrics(ctx context.Context, out []Outgoing, metrics [][]byte, a *Arena) []Outgoing {
	var kept [][]byte
	var invalid account.Counts
	for i, m := range metrics {
		if len(m) > maxTraceMetricBytes {
			invalid[account.CatTraceMetric]++
			invalid[account.CatTraceMetricByte] += int64(len(m))
			if kept == nil {
				kept = append(make([][]byte, 0, len(metrics)), metrics[:i]...)
			}
			continue
		}
		if kept != nil {
			kept = append(kept, m)
		}
	}
	if kept != nil {
		metrics = kept
	}
	chunks, oversized := envelope.Chunk(metrics, MaxTraceMetricsPerEnvelope, maxTraceMetricContainerBytes)
	for _, i := range oversized {
		invalid[account.CatTraceMetric]++
		invalid[account.CatTraceMetricByte] += int64(len(metrics[i]))
	}
	e.acct.Dropped(ctx, account.ReasonInvalid, invalid)
	for i, payload := range a.containers(chunks, false) {
		out = append(out, traceMetricOutgoing(chunks[i], payload))
	}
	return out
}

// traceMetricOutgoing counts its items in trace_metric and their bytes (each
// metric's JSON, as log_byte counts a log's) in trace_metric_byte.
func traceMetricOutgoing(items [][]byte, payload []byte) Outgoing {
	o := containerOutgoing(nil, envelope.ItemTypeTraceMetric, envelope.ContentTypeTraceMetricContainer, gate.GateTraceMetric, items, payload)
	o.Counts[account.CatTraceMetric] = int64(len(items))
	for _, it := range items {
		o.Counts[account.CatTraceMetricByte] += int64(len(it))
	}
	return o
}
