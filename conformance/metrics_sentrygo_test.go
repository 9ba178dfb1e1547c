package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/getsentry/sentry-go"
	"github.com/getsentry/sentry-go/attribute"
)

// sentryGoMeter records through sentry-go v0.50.0's metrics API (sentry.NewMeter), as
// its documentation shows, with the client settings of the traces and logs program.
type sentryGoMeter struct {
	hub *sentry.Hub
}

// sentryGoUnits are the units sentry-go's constants spell.
var sentryGoUnits = map[string]string{"ms": sentry.UnitMillisecond}

func newSentryGoMeter(t *testing.T, dsn string) *sentryGoMeter {
	t.Helper()
	return &sentryGoMeter{hub: newSentryGo(t, dsn).hub}
}

func (s *sentryGoMeter) meter(ctx context.Context) sentry.Meter {
	return sentry.NewMeter(sentry.SetHubOnContext(ctx, s.hub))
}

func sentryAttrs(unit string, attrs []metricAttr) []sentry.MeterOption {
	bs := make([]attribute.Builder, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.value.(type) {
		case string:
			bs = append(bs, attribute.String(a.key, v))
		case int64:
			bs = append(bs, attribute.Int64(a.key, v))
		case float64:
			bs = append(bs, attribute.Float64(a.key, v))
		case bool:
			bs = append(bs, attribute.Bool(a.key, v))
		}
	}
	opts := []sentry.MeterOption{sentry.WithAttributes(bs...)}
	if unit != "" {
		opts = append(opts, sentry.WithUnit(unit))
	}
	return opts
}

func (s *sentryGoMeter) count(ctx context.Context, name, unit string, n int64, attrs ...metricAttr) {
	s.meter(ctx).Count(name, n, sentryAttrs(unit, attrs)...)
}

func (s *sentryGoMeter) gauge(ctx context.Context, name, unit string, v float64, attrs ...metricAttr) {
	s.meter(ctx).Gauge(name, v, sentryAttrs(unit, attrs)...)
}

func (s *sentryGoMeter) distribution(ctx context.Context, name, unit string, v float64, attrs ...metricAttr) {
	s.meter(ctx).Distribution(name, v, sentryAttrs(unit, attrs)...)
}

func (s *sentryGoMeter) inSpan(ctx context.Context, f func(context.Context)) (traceID, spanID string) {
	tx := sentry.StartTransaction(sentry.SetHubOnContext(ctx, s.hub), "checkout")
	defer tx.Finish()
	f(tx.Context())
	return tx.TraceID.String(), tx.SpanID.String()
}

func (*sentryGoMeter) collect(*testing.T) {}

func (s *sentryGoMeter) flush(t *testing.T) {
	t.Helper()
	if !s.hub.Flush(30 * time.Second) {
		t.Fatal("sentry-go did not flush")
	}
}

// runSentryGoMetrics runs the metrics program under sentry-go and returns what Sentry got.
func runSentryGoMetrics(t *testing.T) ([]captured, metricsRun) {
	sink := newCaptureSink(t)
	sg := newSentryGoMeter(t, sink.dsn())
	run := runMetricsProgram(t, sg, sentryGoUnits)
	sg.flush(t)
	return sinkEnvelopes(t, sink), run
}
