package conformance

import "testing"

// TestConformance runs the program under sentry-go and under the OTel SDK
// through this exporter, then runs every check; a failing check prints the
// field, sentry-go's value and the exporter's.
func TestConformance(t *testing.T) {
	sdk := newView(runSentryGo(t))
	ours := newView(runExporter(t))
	if len(sdk.transactions) == 0 || len(sdk.errors) == 0 || len(sdk.logs) == 0 {
		t.Fatalf("the sentry-go run sent %d transactions, %d error events, %d logs: the reference is incomplete",
			len(sdk.transactions), len(sdk.errors), len(sdk.logs))
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range c.run(sdk, ours) {
				t.Errorf("%s:\n\tsentry-go: %s\n\texporter:  %s", d.where, d.want, d.got)
			}
		})
	}
}
