package conformance

import (
	"fmt"
	"strconv"
	"strings"
)

// metricCheck compares one thing a Sentry user sees of the program's metrics.
type metricCheck struct {
	name string
	run  func(sdk, ours *metricsView, sdkRun, ourRun metricsRun) []diff
}

// mappedChecks read the exporter's form of a distribution (<name>.count, <name>.sum),
// which a second sentry-go run does not have.
var mappedChecks = map[string]bool{"distribution: count and sum of each collection that recorded values": true}

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
	{"type of the counter and the gauge", func(s, o *metricsView, _, _ metricsRun) []diff {
		var out []diff
		for _, name := range []string{ordersName, queueName} {
			out = append(out, same(name, s.field(name, metricType), o.field(name, metricType))...)
		}
		return out
	}},
	{"unit (of the distribution's sum)", perOurName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return m.Unit })
	})},
	{"counter: every value sent", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(ordersName, fmtList(s.values(ordersName)), fmtList(o.values(ordersName)))
	}},
	{"counter: the values that changed it", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(ordersName, fmtList(s.changes(ordersName)), fmtList(o.changes(ordersName)))
	}},
	{"gauge: every value sent", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(queueName, fmtList(s.values(queueName)), fmtList(o.values(queueName)))
	}},
	{"gauge: the values that changed it", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(queueName, fmtList(s.changes(queueName)), fmtList(o.changes(queueName)))
	}},
	{"distribution: count and sum of each collection that recorded values", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(durationName, collections(s.byName[durationName]), fmt.Sprintf("count %s sum %s",
			fmtList(o.changes(durationName+".count")), fmtList(o.changes(durationName+".sum"))))
	}},
	{"the program's attributes, typed", perOurName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return attrsOf(m, isProgramAttr) })
	})},
	{"sentry.environment, sentry.release, sentry.server.address", perOurName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return attrsOf(m, isDeploymentAttr) })
	})},
	{"sentry.sdk.name and sentry.sdk.version", perOurName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return attrsOf(m, isSDKAttr) })
	})},
	{"attributes only one side writes", perOurName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return attrKeys(m, isOtherAttr) })
	})},
	{"a trace_id on every metric, a span_id only inside a span", perOurName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string {
			return fmt.Sprintf("trace_id %d hex, span_id %d hex", len(m.TraceID), len(m.SpanID))
		})
	})},
	{"the distribution recorded in a span links to it", func(s, o *metricsView, sr, or metricsRun) []diff {
		return same(durationName, linked(s, durationName, sr), linked(o, ourName(o, durationName), or))
	}},
	{"timestamp form", perOurName(func(v *metricsView, name string) string {
		return v.field(name, func(m metricItem) string { return fmt.Sprintf("%T", m.Timestamp) })
	})},
}

// collections renders the count and sum of sentry-go's distribution values of each of
// the program's two collections (two values, then one).
func collections(ms []metricItem) string {
	var counts, sums []string
	for _, part := range [][]metricItem{ms[:min(2, len(ms))], ms[min(2, len(ms)):]} {
		var sum float64
		for _, m := range part {
			f, _ := m.Value.Float64()
			sum += f
		}
		counts = append(counts, strconv.Itoa(len(part)))
		sums = append(sums, strconv.FormatFloat(sum, 'f', -1, 64))
	}
	return fmt.Sprintf("count %s sum %s", fmtList(counts), fmtList(sums))
}

// ourName is the name under which the exporter sends what sentry-go sends as name: a
// distribution's values become the counters <name>.count and <name>.sum
// (docs/mapping.md#metrics--trace-metrics); attributes, unit and links are read from the sum.
func ourName(v *metricsView, name string) string {
	if _, ok := v.byName[name]; !ok && name == durationName {
		return durationName + ".sum"
	}
	return name
}

func metricType(m metricItem) string { return m.Type }

// perOurName compares f of every metric name sentry-go sent with f of the exporter's
// metric of that meaning (ourName).
func perOurName(f func(v *metricsView, name string) string) func(s, o *metricsView, _, _ metricsRun) []diff {
	return func(s, o *metricsView, _, _ metricsRun) []diff {
		var out []diff
		for _, name := range keys(s.byName) {
			out = append(out, same(name, f(s, name), f(o, ourName(o, name)))...)
		}
		return out
	}
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

// The attributes sentry-go's NewMeter puts on every metric: the deployment's, and the
// SDK's name and version. The host is sentry.server.address in sentry-go, server.address
// in @sentry/core and the exporter.
var deploymentAttrs = map[string]bool{"sentry.environment": true, "sentry.release": true, "sentry.server.address": true, "server.address": true}

func isDeploymentAttr(k string) bool { return deploymentAttrs[k] }

func isSDKAttr(k string) bool { return k == "sentry.sdk.name" || k == "sentry.sdk.version" }

func isOtherAttr(k string) bool { return !isProgramAttr(k) && !isDeploymentAttr(k) && !isSDKAttr(k) }

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

// linked says whether a metric of that name carries the trace and span ids of the span
// the program recorded the distribution in.
func linked(v *metricsView, name string, run metricsRun) string {
	for _, m := range v.byName[name] {
		if m.TraceID == run.traceID && m.SpanID == run.spanID {
			return "linked to its span"
		}
	}
	return "not linked"
}
