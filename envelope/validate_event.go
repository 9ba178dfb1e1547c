package envelope

// event checks an event or transaction payload (develop docs event-payloads, Relay
// relay-event-schema): the envelope event_id is present and the payload's equals it; a
// timestamp; contexts.trace IDs; exceptions with a type or a value and mechanisms with a
// type. A transaction also needs type "transaction", contexts.trace, a start_timestamp not
// after its timestamp, and valid spans with string-only tags.
func (v *validator) event(where, itemType string, obj map[string]any) {
	headerID := v.env.Header.EventID
	if headerID == "" {
		v.failf(where, "the envelope header has no event_id")
	}
	if raw, ok := obj["event_id"]; ok && raw != nil {
		if id, _ := raw.(string); id != headerID {
			v.failf(where, "payload event_id %v differs from the envelope event_id %q", raw, headerID)
		}
	}
	if itemType == ItemTypeTransaction {
		if ty, _ := obj["type"].(string); ty != "transaction" {
			v.failf(where, "type must be \"transaction\"")
		}
		v.timeRange(where, obj, "start_timestamp", "timestamp")
	} else {
		v.timestamp(where, obj, "timestamp")
	}
	v.traceContext(where, obj, itemType == ItemTypeTransaction)
	v.exceptions(where, obj)
	if itemType == ItemTypeTransaction {
		v.transactionSpans(where, obj)
	}
}

// traceContext checks contexts.trace, which a transaction must have.
func (v *validator) traceContext(where string, obj map[string]any, required bool) {
	contexts, _ := v.objectAt(where, obj, "contexts")
	trace, ok := v.objectAt(where+" contexts", contexts, "trace")
	if !ok {
		if required {
			v.failf(where, "contexts.trace is missing")
		}
		return
	}
	at := where + " contexts.trace"
	v.id(at, trace, "trace_id", 32, true)
	v.id(at, trace, "span_id", 16, true)
	v.id(at, trace, "parent_span_id", 16, false)
}

// exceptions checks exception.values: each needs a type or a value, and a mechanism a type.
func (v *validator) exceptions(where string, obj map[string]any) {
	exc, ok := v.objectAt(where, obj, "exception")
	if !ok {
		return
	}
	values := v.arrayAt(where+" exception", exc, "values")
	v.eachObject(where, "exception.values", values, func(at string, ex map[string]any) {
		ty, _ := ex["type"].(string)
		val, _ := ex["value"].(string)
		if ty == "" && val == "" {
			v.failf(at, "has neither type nor value")
		}
		if mech, ok := v.objectAt(at, ex, "mechanism"); ok {
			if ty, _ := mech["type"].(string); ty == "" {
				v.failf(at, "mechanism without type")
			}
		}
	})
}

// transactionSpans checks a transaction's child spans.
func (v *validator) transactionSpans(where string, obj map[string]any) {
	v.eachObject(where, "spans", v.arrayAt(where, obj, "spans"), func(at string, span map[string]any) {
		v.id(at, span, "trace_id", 32, true)
		v.id(at, span, "span_id", 16, true)
		v.id(at, span, "parent_span_id", 16, false)
		v.timeRange(at, span, "start_timestamp", "timestamp")
		tags, _ := v.objectAt(at, span, "tags")
		for k, t := range tags {
			if _, ok := t.(string); !ok {
				v.failf(at, "tag %q is not a string", k)
			}
		}
	})
}
