package conformance

import (
	"fmt"
	"strings"
	"testing"
)

// TestNodeMetricsMatchSentryNode holds the exporter's trace metrics against
// @sentry/node 11.12's Sentry.metrics for the node:http program
// (conformance/node): one counter, one gauge and one distribution recorded
// inside the /users request, under @sentry/node and under the OpenTelemetry JS
// SDK at its defaults (OTLP/HTTP metrics exporter, periodic reader, cumulative)
// through this exporter. The same runs as the span-streaming check; it needs
// node and `npm ci` in conformance/node, as that check does.
func TestNodeMetricsMatchSentryNode(t *testing.T) {
	needNode(t)
	sdkRun, ourRun := runSentryNode(t), runOTelNode(t)
	sdk, ours := newMetricsView(t, sdkRun.envelopes), newMetricsView(t, ourRun.envelopes)
	if len(sdk.byName) != 3 {
		t.Fatalf("@sentry/node sent %d metric names (%v), want 3: the reference is incomplete", len(sdk.byName), keys(sdk.byName))
	}
	sdkSpans, ourSpans := spansSent(sdkRun.envelopes), spansSent(ourRun.envelopes)
	for _, c := range nodeMetricChecks {
		t.Run(c.name, func(t *testing.T) {
			var diffs []diff
			if c.name == nodeLinkCheck {
				for _, name := range keys(sdk.byName) {
					diffs = append(diffs, same(name, linkOf(sdk, name, sdkSpans), linkOf(ours, ourName(ours, name), ourSpans))...)
				}
			} else {
				diffs = c.run(sdk, ours, metricsRun{}, metricsRun{})
			}
			reason, known := nodeMetricsDifferences[c.name]
			switch {
			case known && len(diffs) == 0:
				t.Errorf("no longer differs; remove it from nodeMetricsDifferences (%s)", reason)
			case known:
				for _, d := range diffs {
					t.Logf("%s: @sentry/node %s, exporter %s (%s)", d.where, d.want, d.got, reason)
				}
			default:
				for _, d := range diffs {
					t.Errorf("%s:\n\t@sentry/node: %s\n\texporter:     %s", d.where, d.want, d.got)
				}
			}
		})
	}
}

const nodeLinkCheck = "linked to the request's span"

// nodeMetricChecks are the checks of the Go program that apply to one request's metrics,
// and the link to the span they were recorded in.
var nodeMetricChecks = func() []metricCheck {
	keep := map[string]bool{
		"envelopes pass the strict Relay model and carry one container each": true,
		"the same metric names": true, "type": true, "type of the counter and the gauge": true,
		"unit (of the distribution's sum)": true, "counter: the values that changed it": true,
		"gauge: the values that changed it": true, "the program's attributes, typed": true,
		"sentry.environment, sentry.release, sentry.server.address": true,
		"sentry.sdk.name and sentry.sdk.version":                    true,
		"attributes only one side writes":                           true, "timestamp form": true,
	}
	var out []metricCheck
	for _, c := range metricChecks {
		if keep[c.name] {
			out = append(out, c)
		}
	}
	out = append(out, metricCheck{"distribution: count and sum", func(s, o *metricsView, _, _ metricsRun) []diff {
		return same(durationName, fmt.Sprintf("count [%d] sum %s", len(s.byName[durationName]), fmtList(s.values(durationName))),
			fmt.Sprintf("count %s sum %s", fmtList(o.changes(durationName+".count")), fmtList(o.changes(durationName+".sum"))))
	}})
	return append(out, metricCheck{name: nodeLinkCheck})
}()

// nodeMetricsDifferences are the checks where the exporter differs from @sentry/node on
// purpose, with the reason (docs/conformance.md, Metrics).
var nodeMetricsDifferences = map[string]string{
	"the same metric names":                  metricsDifferences["the same metric names"],
	"type":                                   metricsDifferences["type"],
	"sentry.sdk.name and sentry.sdk.version": metricsDifferences["sentry.sdk.name and sentry.sdk.version"],
	"attributes only one side writes": "sentry.timestamp.sequence orders an SDK's metrics within one " +
		"millisecond, and the exporter writes microseconds; service.name: as for sentry-go",
	nodeLinkCheck: "the OTel JS SDK (sdk-metrics 3.1) records no exemplars, so a point carries its resource's " +
		"trace id, as an SDK outside any span does; the Go SDK's exemplars do link (TestMetricsConformance)",
}

// spansSent is "trace_id span_id" of every span of the run's span envelopes.
func spansSent(envs []captured) map[string]bool {
	out := map[string]bool{}
	for _, e := range envs {
		for _, it := range e.items {
			if it.typ() != "span" {
				continue
			}
			items, _ := it.payload["items"].([]any)
			for _, x := range items {
				m, _ := x.(map[string]any)
				out[fmt.Sprint(m["trace_id"])+" "+fmt.Sprint(m["span_id"])] = true
				out[fmt.Sprint(m["trace_id"])] = true
			}
		}
	}
	return out
}

// linkOf says what the metric's ids point at among the run's spans.
func linkOf(v *metricsView, name string, spans map[string]bool) string {
	var out []string
	for _, m := range v.byName[name] {
		switch {
		case spans[m.TraceID+" "+m.SpanID]:
			out = append(out, "a span it sent")
		case spans[m.TraceID]:
			out = append(out, "a trace it sent, no span")
		default:
			out = append(out, "no trace it sent")
		}
	}
	return strings.Join(out, ", ")
}
