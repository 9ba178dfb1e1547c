package envelope

import (
	"errors"
	"fmt"
	"slices"
)

// Validate reports what Relay or Sentry would reject in e, or drop for being malformed, and
// the size limits of l ([Limits.Check]). It returns the errors.Join of every problem found,
// or nil. Tests and the fake Sentry use it, so it is also strict about our writer's own
// contract: IDs are lowercase hex, payloads have no duplicate keys, span items are span v2
// containers, and unknown item types are errors.
//
// Envelope rules: an event or transaction needs the envelope `event_id` and a payload
// `event_id`, if any, equal to it; at most one event or transaction, at most one log, one
// span and one trace_metric container; a container needs `item_count` equal to len(items) and its own content type;
// a DSC needs a valid `trace_id`, a `public_key`, a string `sample_rate` and a bool `sampled`.
// The payload rules of each item type live in validate_<type>.go.
func Validate(e *Envelope, l Limits) error {
	v := &validator{env: e, limits: l}
	v.header()
	v.mixing()
	for i := range e.Items {
		v.item(i)
	}
	if err := l.Check(e); err != nil {
		v.errs = append(v.errs, err)
	}
	return errors.Join(v.errs...)
}

// validator collects the problems of one envelope.
type validator struct {
	env    *Envelope
	limits Limits
	errs   []error
}

// failf records one problem. where names the part of the envelope, such as
// "item 1 (log) items[3].trace_id".
func (v *validator) failf(where, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
}

// header checks the envelope header and its DSC.
func (v *validator) header() {
	h := &v.env.Header
	if h.EventID != "" && !isLowerHex(h.EventID, 32) {
		v.failf("envelope header", "event_id %q is not 32 lowercase hex characters", h.EventID)
	}
	if h.traceErr != nil {
		v.failf("envelope header trace", "%v (Relay treats the DSC as absent)", h.traceErr)
	}
	t := h.Trace
	if t == nil {
		return
	}
	if msg := checkID(t.TraceID, 32); msg != "" {
		v.failf("envelope header trace.trace_id", "%s", msg)
	}
	if t.PublicKey == "" {
		v.failf("envelope header trace", "public_key is missing")
	}
	if t.SampleRate != "" && h.traceErr == nil {
		if _, ok := parseFinite(t.SampleRate); !ok {
			v.failf("envelope header trace", "sample_rate %q is not a number", t.SampleRate)
		}
	}
	if t.SampleRand != "" && h.traceErr == nil {
		if r, ok := parseFinite(t.SampleRand); !ok || r < 0 || r >= 1 {
			v.failf("envelope header trace", "sample_rand %q is not a number in [0, 1)", t.SampleRand)
		}
	}
	if t.Sampled != "" && t.Sampled != "true" && t.Sampled != "false" && h.traceErr == nil {
		v.failf("envelope header trace", "sampled %q is not a bool", t.Sampled)
	}
}

// mixing checks which item types may appear together and how often.
func (v *validator) mixing() {
	var events, transactions, logs, spans, metrics int
	for _, it := range v.env.Items {
		switch it.Type {
		case ItemTypeEvent:
			events++
		case ItemTypeTransaction:
			transactions++
		case ItemTypeLog:
			logs++
		case ItemTypeSpan:
			spans++
		case ItemTypeTraceMetric:
			metrics++
		}
	}
	if events > 0 && transactions > 0 {
		v.failf("envelope", "has both an event and a transaction")
	} else if events+transactions > 1 {
		v.failf("envelope", "has %d events or transactions, at most one is allowed", events+transactions)
	}
	if logs > 1 {
		v.failf("envelope", "has %d log containers, at most one is allowed", logs)
	}
	if spans > 1 {
		v.failf("envelope", "has %d span containers, at most one is allowed", spans)
	}
	if metrics > 1 {
		v.failf("envelope", "has %d trace_metric containers, at most one is allowed", metrics)
	}
}

// item checks one item's header and payload according to its type.
func (v *validator) item(i int) {
	it := &v.env.Items[i]
	where := fmt.Sprintf("item %d (%s)", i, it.Type)
	switch it.Type {
	case ItemTypeEvent, ItemTypeTransaction:
		v.contentType(where, it, "", ContentTypeJSON)
		if obj, ok := v.object(where, it.Payload); ok {
			v.event(where, it.Type, obj)
		}
	case ItemTypeClientReport:
		v.contentType(where, it, "", ContentTypeJSON)
		if obj, ok := v.object(where, it.Payload); ok {
			v.clientReport(where, obj)
		}
	case ItemTypeLog:
		v.contentType(where, it, ContentTypeLogContainer)
		if items, ok := v.container(where, it); ok {
			v.logs(where, items)
		}
	case ItemTypeSpan:
		v.contentType(where, it, ContentTypeSpanContainer)
		if items, ok := v.container(where, it); ok {
			v.spans(where, items)
		}
	case ItemTypeTraceMetric:
		v.contentType(where, it, ContentTypeTraceMetricContainer)
		if items, ok := v.container(where, it); ok {
			v.traceMetrics(where, it.Payload, items)
		}
	case ItemTypeProfileChunk:
		v.contentType(where, it, "", ContentTypeJSON)
		if obj, ok := v.object(where, it.Payload); ok {
			v.profileChunk(where, it.Platform, obj)
		}
	default:
		v.failf(where, "unknown item type %q", it.Type)
	}
}

// contentType checks the item's content type against the allowed ones.
func (v *validator) contentType(where string, it *Item, allowed ...string) {
	if slices.Contains(allowed, it.ContentType) {
		return
	}
	v.failf(where, "content_type %q, want %q", it.ContentType, allowed[len(allowed)-1])
}

// object decodes a payload that must be one JSON object.
func (v *validator) object(where string, payload []byte) (map[string]any, bool) {
	val, err := decodeStrict(payload)
	if err != nil {
		v.failf(where, "payload: %v", err)
		return nil, false
	}
	obj, ok := val.(map[string]any)
	if !ok {
		v.failf(where, "payload is not a JSON object")
	}
	return obj, ok
}

// container decodes a container payload {"items":[...]} and checks its item_count.
func (v *validator) container(where string, it *Item) ([]any, bool) {
	obj, ok := v.object(where, it.Payload)
	if !ok {
		return nil, false
	}
	items, ok := obj["items"].([]any)
	if !ok {
		v.failf(where, "container payload has no items array")
		return nil, false
	}
	switch {
	case it.ItemCount <= 0:
		v.failf(where, "container without item_count")
	case it.ItemCount != len(items):
		v.failf(where, "item_count %d but %d items", it.ItemCount, len(items))
	}
	return items, true
}
