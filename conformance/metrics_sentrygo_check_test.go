package conformance

import (
	"testing"
)

// TestSentryGoMetricsPassTheStrictModel proves the harness and the validator: what
// sentry-go v0.50.0 sends for the metrics program is read whole, passes
// envelope.Validate (the sink's Relay model), and is the program's measurements.
func TestSentryGoMetricsPassTheStrictModel(t *testing.T) {
	envs, run := runSentryGoMetrics(t)
	v := newMetricsView(t, envs)
	for _, p := range v.problems {
		t.Error(p)
	}
	for _, raw := range v.raw {
		if err := validate(raw); err != nil {
			t.Errorf("sentry-go's envelope fails the strict Relay model: %v\n%s", err, raw)
		}
	}
	want := map[string]string{ordersName: "[3 2]", queueName: "[12.5 7]", durationName: "[120 80 200]"}
	for name, values := range want {
		if got := fmtList(v.values(name)); got != values {
			t.Errorf("%s: values %s, want %s", name, got, values)
		}
	}
	last := v.byName[durationName][len(v.byName[durationName])-1]
	if last.TraceID != run.traceID || last.SpanID != run.spanID {
		t.Errorf("the distribution recorded in a span has trace %s span %s, want %s %s", last.TraceID, last.SpanID, run.traceID, run.spanID)
	}
}

func fmtList(xs []string) string {
	s := "["
	for i, x := range xs {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s + "]"
}

// TestMetricChecksSentryGoAgainstItself proves the checks: two sentry-go runs differ in
// ids and timestamps only, and no check reports them.
func TestMetricChecksSentryGoAgainstItself(t *testing.T) {
	aEnvs, aRun := runSentryGoMetrics(t)
	bEnvs, bRun := runSentryGoMetrics(t)
	a, b := newMetricsView(t, aEnvs), newMetricsView(t, bEnvs)
	for _, c := range metricChecks {
		if mappedChecks[c.name] {
			continue
		}
		for _, d := range c.run(a, b, aRun, bRun) {
			t.Errorf("%s: two sentry-go runs differ at %s: %s vs %s", c.name, d.where, d.want, d.got)
		}
	}
}
