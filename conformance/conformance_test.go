package conformance

import "testing"

// TestConformance runs the program under sentry-go, then under the OTel SDK
// through this exporter in each variant, and runs every check on each; a
// failing check prints the field, sentry-go's value and the exporter's.
func TestConformance(t *testing.T) {
	sdk := newView(runSentryGo(t))
	if len(sdk.transactions) == 0 || len(sdk.errors) == 0 || len(sdk.logs) == 0 {
		t.Fatalf("the sentry-go run sent %d transactions, %d error types, %d logs: the reference is incomplete",
			len(sdk.transactions), len(sdk.errors), len(sdk.logs))
	}
	for _, v := range otelVariants {
		t.Run(v.name, func(t *testing.T) {
			runChecks(t, sdk, newView(runExporter(t, v)))
		})
	}
}

// runChecks runs every check as a subtest, comparing the exporter's view
// with sentry-go's, and reports each difference it finds.
func runChecks(t *testing.T, sdk, ours *view) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range c.run(sdk, ours) {
				t.Errorf("%s:\n\tsentry-go: %s\n\texporter:  %s", d.where, d.want, d.got)
			}
		})
	}
}
