package conformance

import "testing"

// metricsDifferences are the checks where the exporter's trace metrics differ from
// sentry-go's on purpose, each with its reason (docs/conformance.md, Metrics). A check
// listed here must still differ: when it stops, the entry goes.
var metricsDifferences = map[string]string{}

// TestMetricsConformance runs the metrics program under sentry-go, and under the OTel
// SDK at its defaults through the built collector and this exporter, and compares what
// Sentry got, field by field. It needs bin/otelcol-sentry (skipped without it, unless
// COLLECTOR_REQUIRED is set).
func TestMetricsConformance(t *testing.T) {
	needCollector(t)
	sdkEnvs, sdkRun := runSentryGoMetrics(t)
	ourEnvs, ourRun := runOTelMetrics(t)
	sdk, ours := newMetricsView(t, sdkEnvs), newMetricsView(t, ourEnvs)
	if len(sdk.byName) != 3 {
		t.Fatalf("sentry-go sent %d metric names, want 3: the reference is incomplete", len(sdk.byName))
	}
	for _, c := range metricChecks {
		t.Run(c.name, func(t *testing.T) {
			diffs := c.run(sdk, ours, sdkRun, ourRun)
			reason, known := metricsDifferences[c.name]
			switch {
			case known && len(diffs) == 0:
				t.Errorf("no longer differs; remove it from metricsDifferences (%s)", reason)
			case known:
				for _, d := range diffs {
					t.Logf("%s: sentry-go %s, exporter %s (%s)", d.where, d.want, d.got, reason)
				}
			default:
				for _, d := range diffs {
					t.Errorf("%s:\n\tsentry-go: %s\n\texporter:  %s", d.where, d.want, d.got)
				}
			}
		})
	}
}
