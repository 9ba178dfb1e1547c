package envelope

import (
	"errors"
	"fmt"
)

// ErrTooLarge is wrapped by every error of [Limits.Check]: Relay answers such an envelope
// with 413 and drops all of it.
var ErrTooLarge = errors.New("envelope too large")

const (
	kib = 1 << 10
	mib = 1 << 20
)

// Limits are Relay's size and count limits for one envelope, in bytes and items. The zero
// value limits everything to nothing; start from [RelayDefaults].
type Limits struct {
	// MaxEnvelopeSize bounds the whole envelope (decompressed).
	MaxEnvelopeSize int
	// MaxEventSize bounds the one event or transaction an envelope may hold.
	MaxEventSize int
	// MaxLogSize bounds the average size of one log in a log container.
	MaxLogSize int
	// MaxSpanSize bounds the average size of one span in a span container, and each legacy
	// standalone span item.
	MaxSpanSize int
	// MaxTraceMetricSize bounds the average size of one metric in a trace_metric container;
	// Relay checks each metric against it again once parsed.
	MaxTraceMetricSize int
	// MaxContainerSize bounds a whole log, span or trace_metric container item.
	MaxContainerSize int
	// MaxStandaloneSpanCount bounds the legacy (non-container) span items per envelope.
	MaxStandaloneSpanCount int
	// MaxClientReportsSize bounds each client report item and their sum.
	MaxClientReportsSize int
	// MaxClientReportsCount bounds the client report items per envelope.
	MaxClientReportsCount int
	// MaxProfileSize bounds the one profile or profile_chunk item an envelope may hold.
	MaxProfileSize int
}

// SentryTraceMetricSize is max_trace_metric_size as sentry.io runs Relay: 2 KiB ("Each
// metric has a 2KB size limit. If you exceed this, the metric will be dropped":
// docs.sentry.io, JavaScript "Set Up Metrics"; sentry-cocoa's tests call it Relay's
// max_trace_metric_size), not the self-hosted default in [RelayDefaults]. Relay holds a
// container's bytes per metric to it (413) and each parsed metric's canonical size
// (dropped, invalid).
const SentryTraceMetricSize = 2 * kib

// RelayDefaults returns Relay's defaults (relay-config/src/config.rs, Limits::default, with
// max_span_size raised to 10 MiB by relay PR #5780). sentry.io may configure other values.
func RelayDefaults() Limits {
	return Limits{
		MaxEnvelopeSize:        200 * mib,
		MaxEventSize:           1 * mib,
		MaxLogSize:             2 * mib,
		MaxSpanSize:            10 * mib,
		MaxTraceMetricSize:     1 * mib,
		MaxContainerSize:       12 * mib,
		MaxStandaloneSpanCount: 25,
		MaxClientReportsSize:   100 * kib,
		MaxClientReportsCount:  100,
		MaxProfileSize:         50 * mib,
	}
}

// sizeLimit is one of Relay's per-type budgets: the largest item, and the count and total
// size still left in this envelope (relay-server/src/utils/sizes.rs, Limit).
type sizeLimit struct {
	itemSize   int
	totalCount int
	totalSize  int
}

// Check reports what Relay would answer 413 for: the envelope over MaxEnvelopeSize, an item
// over its size limit (for containers, the average per contained item), more than one event
// or transaction, more than one log, span or trace_metric container, more than one profile chunk or
// one over MaxProfileSize, or too many or too large client reports or standalone spans. Like Relay it stops at the first failing item. It returns nil
// if the envelope fits; every error wraps [ErrTooLarge].
func (l Limits) Check(e *Envelope) error {
	if n := e.EncodedLen(); n > l.MaxEnvelopeSize {
		return fmt.Errorf("%w: %d bytes, max_envelope_size is %d", ErrTooLarge, n, l.MaxEnvelopeSize)
	}
	event := sizeLimit{l.MaxEventSize, 1, l.MaxEventSize}
	logs := sizeLimit{l.MaxLogSize, 1, l.MaxContainerSize}
	spans := sizeLimit{l.MaxSpanSize, 1, l.MaxContainerSize}
	metrics := sizeLimit{l.MaxTraceMetricSize, 1, l.MaxContainerSize}
	legacySpans := sizeLimit{l.MaxSpanSize, l.MaxStandaloneSpanCount, l.MaxContainerSize}
	reports := sizeLimit{l.MaxClientReportsSize, l.MaxClientReportsCount, l.MaxClientReportsSize}
	profiles := sizeLimit{l.MaxProfileSize, 1, l.MaxProfileSize}
	for i := range e.Items {
		it := &e.Items[i]
		var lim *sizeLimit
		switch it.Type {
		case ItemTypeEvent, ItemTypeTransaction:
			lim = &event
		case ItemTypeLog:
			lim = &logs
		case ItemTypeSpan:
			lim = &legacySpans
			if it.isContainer() {
				lim = &spans
			}
		case ItemTypeTraceMetric:
			lim = &metrics
		case ItemTypeClientReport:
			lim = &reports
		case ItemTypeProfileChunk:
			lim = &profiles
		default:
			continue // Relay forwards or drops unknown items, it does not size them
		}
		if why := lim.apply(it); why != "" {
			return fmt.Errorf("%w: item %d (%s): %s", ErrTooLarge, i, it.Type, why)
		}
	}
	return nil
}

// apply charges one item against the budget, as Relay's Limit::apply does, and says why it
// does not fit, or "" if it does.
func (s *sizeLimit) apply(it *Item) string {
	size := len(it.Payload)
	if it.isContainer() {
		size /= max(it.ItemCount, 1)
	}
	if size > s.itemSize {
		if it.isContainer() {
			return fmt.Sprintf("%d bytes per contained item on average, limit %d", size, s.itemSize)
		}
		return fmt.Sprintf("%d bytes, limit %d", size, s.itemSize)
	}
	s.totalCount--
	if s.totalCount < 0 {
		return "too many items of this type in one envelope"
	}
	s.totalSize -= len(it.Payload)
	if s.totalSize < 0 {
		return "items of this type exceed their total size limit"
	}
	return ""
}

// isContainer reports whether the item's content type marks it as an item container.
func (it *Item) isContainer() bool {
	switch it.ContentType {
	case ContentTypeLogContainer, ContentTypeSpanContainer, ContentTypeTraceMetricContainer:
		return true
	}
	return false
}
