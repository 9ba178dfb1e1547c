package envelope

import "encoding/json"

// metricTypes are the trace metric types Relay stores; any other is dropped as
// invalid_trace_metric (relay-server/src/processing/trace_metrics/validate.rs).
var metricTypes = map[string]bool{"counter": true, "gauge": true, "distribution": true}

// metricUnits are the unit names Relay's MetricUnit parses to a known unit
// (relay-base-schema/src/metrics/units.rs); "" and "none" mean no unit.
var metricUnits = map[string]bool{
	"": true, "none": true,
	"nanosecond": true, "ns": true, "microsecond": true, "millisecond": true, "ms": true,
	"second": true, "s": true, "minute": true, "hour": true, "day": true, "week": true,
	"bit": true, "byte": true, "kilobyte": true, "kibibyte": true, "megabyte": true, "mebibyte": true,
	"gigabyte": true, "gibibyte": true, "terabyte": true, "tebibyte": true, "petabyte": true,
	"pebibyte": true, "exabyte": true, "exbibyte": true,
	"ratio": true, "percent": true,
}

// maxCustomUnit is the longest custom unit Relay keeps (CUSTOM_UNIT_MAX_SIZE).
const maxCustomUnit = 15

// traceMetrics checks the metrics of a trace_metric container (Relay
// relay-event-schema/src/protocol/trace_metric, processing/trace_metrics): timestamp,
// trace_id, name, type and a numeric value are required, span_id and unit are optional,
// attributes are typed, and each metric fits max_trace_metric_size, and sentry.io's 2 KiB
// of it ([SentryTraceMetricSize]), in Relay's size and in the container's bytes per
// metric: this sink is as strict as sentry.io. Relay drops a metric
// with an unknown type or a non-numeric value, and keeps one whose unit it cannot parse but
// without the unit: both are problems here. As for logs, metrics of several traces may
// share a container only when the envelope has no `trace` header.
func (v *validator) traceMetrics(where string, payload []byte, items []any) {
	traces := traceSet{}
	v.eachObject(where, "items", items, func(at string, metric map[string]any) {
		v.timestamp(at, metric, "timestamp")
		traces.add(v.id(at, metric, "trace_id", 32, true))
		v.id(at, metric, "span_id", 16, false)
		v.requiredString(at, metric, "name")
		if ty, ok := v.requiredString(at, metric, "type"); ok && !metricTypes[ty] {
			v.failf(at, "type %q is not one of counter, gauge, distribution", ty)
		}
		v.metricValue(at, metric)
		v.metricUnit(at, metric)
		v.attributes(at, metric)
		if len(payload) > v.limits.MaxTraceMetricSize { // else no metric in it can be over
			v.metricSize(at, metric)
		}
		if n := relayMetricSize(metric); n > SentryTraceMetricSize {
			v.failf(at, "Relay's size %d bytes, over sentry.io's max_trace_metric_size %d (dropped)", n, SentryTraceMetricSize)
		}
	})
	if n := len(payload) / max(len(items), 1); n > SentryTraceMetricSize {
		v.failf(where, "%d bytes per metric, over sentry.io's max_trace_metric_size %d (413)", n, SentryTraceMetricSize)
	}
	traces.check(v, where, "metrics")
}

// metricValue checks that the metric's value is a finite number.
func (v *validator) metricValue(where string, metric map[string]any) {
	switch n := metric["value"].(type) {
	case nil:
		v.failf(where, "value is missing")
	case json.Number:
		if _, ok := parseFinite(n.String()); !ok {
			v.failf(where, "value %s is not a finite number", n)
		}
	default:
		v.failf(where, "value is not a number")
	}
}

// metricUnit checks the optional unit: a unit Relay knows, or a custom unit of at most 15
// ASCII letters, digits and underscores.
func (v *validator) metricUnit(where string, metric map[string]any) {
	raw, ok := metric["unit"]
	if !ok || raw == nil {
		return
	}
	unit, ok := raw.(string)
	if !ok {
		v.failf(where, "unit is not a string")
		return
	}
	if !metricUnits[unit] && !isCustomUnit(unit) {
		v.failf(where, "unit %q is neither a Sentry unit nor 1 to %d ASCII letters, digits or underscores (Relay drops it)", unit, maxCustomUnit)
	}
}

// isCustomUnit reports whether Relay's CustomUnit::parse accepts s.
func isCustomUnit(s string) bool {
	if s == "" || len(s) > maxCustomUnit {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordChar(s[i]) {
			return false
		}
	}
	return true
}

// isWordChar reports whether c is an ASCII letter, digit or underscore.
func isWordChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// metricSize checks one metric, re-encoded, against MaxTraceMetricSize: Relay checks the
// container's average before parsing and each metric after.
func (v *validator) metricSize(where string, metric map[string]any) {
	b, err := json.Marshal(metric)
	if err != nil {
		return // decodeStrict accepted it, so it re-encodes
	}
	if len(b) > v.limits.MaxTraceMetricSize {
		v.failf(where, "%d bytes, max_trace_metric_size is %d", len(b), v.limits.MaxTraceMetricSize)
	}
}

// relayMetricSize is Relay's canonical size of a trace metric (relay-server
// processing/trace_metrics/utils.rs calculate_size, relay-event-normalization
// eap/size.rs): the name's bytes, the value's, and per attribute its key's bytes and its
// value's; a string counts its bytes, a number 8, a boolean 1, an array or object the sum
// of its parts (and an object's keys). It is at least 1.
func relayMetricSize(metric map[string]any) int {
	n := relayValueSize(metric["value"])
	if name, ok := metric["name"].(string); ok {
		n += len(name)
	}
	attrs, _ := metric["attributes"].(map[string]any)
	for k, a := range attrs {
		n += len(k)
		if a, ok := a.(map[string]any); ok {
			n += relayValueSize(a["value"])
		}
	}
	return max(n, 1)
}

func relayValueSize(v any) int {
	switch v := v.(type) {
	case bool:
		return 1
	case json.Number, float64:
		return 8
	case string:
		return len(v)
	case []any:
		n := 0
		for _, e := range v {
			n += relayValueSize(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += len(k) + relayValueSize(e)
		}
		return n
	}
	return 0
}
