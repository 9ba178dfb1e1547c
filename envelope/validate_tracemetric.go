package envelope

import (
	"encoding/json"
	"fmt"
)

// traceMetricTypes are the metric types Relay keeps; any other is dropped as
// invalid (relay-server/src/processing/trace_metrics/validate.rs).
var traceMetricTypes = map[string]bool{"counter": true, "gauge": true, "distribution": true}

// traceMetrics checks the metrics of a trace_metric container as Relay's
// TraceMetric schema does (relay-event-schema/src/protocol/trace_metric):
// timestamp, trace_id, name, type and a numeric value are required, span_id
// is optional, unit a string, attributes typed. Metrics of several traces may
// share a container only when the envelope has no `trace` header.
func (v *validator) traceMetrics(where string, items []any) {
	traces := map[string]bool{}
	for i, raw := range items {
		at := fmt.Sprintf("%s items[%d]", where, i)
		m, ok := raw.(map[string]any)
		if !ok {
			v.failf(at, "is not an object")
			continue
		}
		v.timestamp(at, m, "timestamp")
		if id := v.id(at, m, "trace_id", 32, true); id != "" {
			traces[id] = true
		}
		v.id(at, m, "span_id", 16, false)
		if name, ok := v.requiredString(at, m, "name"); ok && name == "" {
			v.failf(at, "name is empty")
		}
		if ty, ok := v.requiredString(at, m, "type"); ok && !traceMetricTypes[ty] {
			v.failf(at, "type %q is not one of counter, gauge, distribution", ty)
		}
		if n, ok := m["value"].(json.Number); !ok {
			v.failf(at, "value is missing or not a number")
		} else if _, ok := parseFinite(n.String()); !ok {
			v.failf(at, "value %s is not a finite number", n)
		}
		if u, present := m["unit"]; present {
			if _, ok := u.(string); !ok {
				v.failf(at, "unit is not a string")
			}
		}
		v.attributes(at, m)
	}
	if len(traces) > 1 && v.env.Header.Trace != nil {
		v.failf(where, "metrics from %d traces in one container, but the envelope has a trace header", len(traces))
	}
}
