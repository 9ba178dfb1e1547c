package conformance

import (
	"fmt"
	"strings"
)

// metricCheck compares one thing a Sentry user sees of the program's metrics.
type metricCheck struct {
	name string
	run  func(sdk, ours *metricsView, sdkRun, ourRun metricsRun) []diff
}

// Compared by structure, never by value, because they differ by nature: timestamps
// (clock values) and trace ids outside a span (each process's own random id).
var metricChecks = []metricCheck{
	{"envelopes pass the strict Relay model and carry one container each", func(_, o *metricsView, _, _ metricsRun) []diff {
		var problems []string
		problems = append(problems, o.problems...)
		for _, raw := range o.raw {
			if err := validate(raw); err != nil {
				problems = append(problems, err.Error())
			}
		}
		return same("problems", "", strings.Join(problems, "; "))
	}},
	{"the same metric names", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same("names", strings.Join(keys(s.byName), ", "), strings.Join(keys(o.byName), ", "))
	}},
	{"type", perName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return m.Type })
	})},
	{"unit", perName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return m.Unit })
	})},
	{"counter: the total counted", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(ordersName, fmt.Sprint(s.total(ordersName)), fmt.Sprint(o.total(ordersName)))
	}},
	{"counter: the values sent", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(ordersName, fmtList(s.values(ordersName)), fmtList(o.values(ordersName)))
	}},
	{"gauge: the values sent", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(queueName, fmtList(s.values(queueName)), fmtList(o.values(queueName)))
	}},
	{"distribution: the values sent", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(durationName, fmtList(s.values(durationName)), fmtList(o.values(durationName)))
	}},
	{"the program's attributes, typed", perName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return attrsOf(m, isProgramAttr) })
	})},
	{"the SDK's default attributes", perName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return attrsOf(m, isDefaultAttr) })
	})},
	{"attributes only one side writes", perName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return attrKeys(m, isOtherAttr) })
	})},
	{"a trace_id on every metric, a span_id only inside a span", perName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string {
			return fmt.Sprintf("trace_id %d hex, span_id %d hex", len(m.TraceID), len(m.SpanID))
		})
	})},
	{"the distribution recorded in a span links to it", func(s, o *metricsView, sr, or metricsRun) []diff {
		return same(durationName, linked(s, sr), linked(o, or))
	}},
	{"a timestamp on every metric", perName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return fmt.Sprintf("%T", m.Timestamp) })
	})},
}

// perName compares f of every metric name sentry-go sent.
func perName(f func(v *metricsView, name string) string) func(s, o *metricsView, _, _ metricsRun) []diff {
	return func(s, o *metricsView, _, _ metricsRun) []diff {
		var out []diff
		for _, name := range keys(s.byName) {
			out = append(out, same(name, f(s, name), f(o, name))...)
		}
		return out
	}
}

func isProgramAttr(k string) bool { return strings.HasPrefix(k, "shop.") }

// defaultAttrs are the attributes sentry-go's NewMeter puts on every metric.
var defaultAttrs = map[string]bool{
	"sentry.environment": true, "sentry.release": true, "sentry.sdk.name": true,
	"sentry.sdk.version": true, "sentry.server.address": true,
}

func isDefaultAttr(k string) bool { return defaultAttrs[k] }

func isOtherAttr(k string) bool { return !isProgramAttr(k) && !isDefaultAttr(k) }

// attrsOf renders the metric's attributes that keep, sorted: "k=type value; …".
func attrsOf(m metricItem, keep func(string) bool) string {
	var out []string
	for _, k := range keys(m.Attributes) {
		if keep(k) {
			out = append(out, k+"="+m.Attributes[k].String())
		}
	}
	return strings.Join(out, "; ")
}

// attrKeys is the sorted keys of the metric's attributes that keep.
func attrKeys(m metricItem, keep func(string) bool) string {
	var out []string
	for _, k := range keys(m.Attributes) {
		if keep(k) {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

// linked says whether a distribution carries the trace and span ids of the span the
// program recorded it in.
func linked(v *metricsView, run metricsRun) string {
	for _, m := range v.byName[durationName] {
		if m.TraceID == run.traceID && m.SpanID == run.spanID {
			return "linked to its span"
		}
	}
	return "not linked"
}
