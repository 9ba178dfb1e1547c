package conformance

import "testing"

// sentryGoFallsShort lists the checks in which sentry-go v0.50 itself does
// not do what issue 7 asks (the JS SDK, @sentry/core 11.12, does):
// contexts.response on transactions, `transaction` on error events, the trace
// head's name in every envelope's DSC. The strict model also rejects its bare
// `exception` list, which Relay accepts (see the closing notes).
var sentryGoFallsShort = map[string]bool{
	"exporter envelopes pass the strict Relay model (envelope.Validate)": true,
	"transaction contexts.response.status_code":                          true,
	"error transaction = its segment's name":                             true,
	"error contexts.response.status_code = its segment's":                true,
	"envelope trace header = the trace head's DSC":                       true,
}

// TestChecksSentryGoAgainstItself proves the harness: two sentry-go runs
// differ in IDs, ports and timestamps only, so every check passes except
// those where issue 7 asks more than sentry-go sends, and those do fail.
func TestChecksSentryGoAgainstItself(t *testing.T) {
	a, b := newView(runSentryGo(t)), newView(runSentryGo(t))
	for _, c := range checks {
		diffs := c.run(a, b)
		switch {
		case sentryGoFallsShort[c.name] && len(diffs) == 0:
			t.Errorf("%s: sentry-go now passes it; update sentryGoFallsShort", c.name)
		case !sentryGoFallsShort[c.name]:
			for _, d := range diffs {
				t.Errorf("%s: two sentry-go runs differ at %s: %s vs %s", c.name, d.where, d.want, d.got)
			}
		}
	}
}
