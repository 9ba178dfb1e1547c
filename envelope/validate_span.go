package envelope

// spans checks the spans of a span v2 container (develop docs span-protocol.mdx, Relay
// processing/spans): trace_id, span_id, name, status, is_segment, start_timestamp not after
// end_timestamp, typed attributes, link IDs. The envelope needs a valid DSC `trace` header
// whose trace_id equals every span's.
func (v *validator) spans(where string, items []any) {
	dsc := v.env.Header.Trace
	if dsc == nil || v.env.Header.traceErr != nil {
		v.failf(where, "span v2 needs a valid trace (DSC) envelope header")
	}
	v.eachObject(where, "items", items, func(at string, span map[string]any) {
		traceID := v.id(at, span, "trace_id", 32, true)
		if dsc != nil && traceID != "" && traceID != dsc.TraceID {
			v.failf(at, "trace_id %s differs from the DSC trace_id %q", traceID, dsc.TraceID)
		}
		v.id(at, span, "span_id", 16, true)
		v.id(at, span, "parent_span_id", 16, false)
		v.requiredString(at, span, "name")
		v.requiredString(at, span, "status")
		if _, ok := span["is_segment"].(bool); !ok {
			v.failf(at, "is_segment is missing or not a bool")
		}
		v.timeRange(at, span, "start_timestamp", "end_timestamp")
		v.attributes(at, span)
		v.eachObject(at, "links", v.arrayAt(at, span, "links"), func(lat string, link map[string]any) {
			v.id(lat, link, "trace_id", 32, true)
			v.id(lat, link, "span_id", 16, true)
			v.attributes(lat, link)
		})
	})
}
