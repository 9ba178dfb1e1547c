package sentryexporter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// twoTenants routes checkout to project 1 and fraud to project 2.
func twoTenants(sentry *fakeSentry, more func(*Config)) func(*Config) {
	return func(c *Config) {
		c.DSN = ""
		c.Routing.DSNs = map[string]configopaque.String{
			"checkout": configopaque.String(sentry.dsnFor("1")),
			"fraud":    configopaque.String(sentry.dsnFor("2")),
		}
		if more != nil {
			more(c)
		}
	}
}

// checkoutSecret is what only checkout's items may carry: its server span's
// card number, route and transaction name.
var checkoutSecret = []string{"4111111111111111", "/checkout/pay", "POST /checkout/pay", "card="}

// checkoutPays is checkout's server span of trace n, whose URL carries a
// card number in its query.
func checkoutPays(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(traceID(n))
	sp.SetSpanID(spanID(n, 0))
	sp.SetName("POST /checkout/pay")
	sp.SetKind(ptrace.SpanKindServer)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(30 * time.Millisecond)))
	sp.Attributes().PutStr("http.request.method", "POST")
	sp.Attributes().PutStr("http.route", "/checkout/pay")
	sp.Attributes().PutStr("url.full", "https://shop.example/checkout/pay?card=4111111111111111")
	sp.Attributes().PutInt("http.response.status_code", 200)
	return td
}

// fraudLogsException is fraud's log record of an exception, with the trace
// and span ids of checkout's server span (it got them in checkout's
// traceparent).
func fraudLogsException(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "fraud")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(testStart.Add(9 * time.Millisecond)))
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.Body().SetStr("score failed")
	lr.SetTraceID(traceID(n))
	lr.SetSpanID(spanID(n, 0))
	lr.Attributes().PutStr("exception.type", "ScoreError")
	lr.Attributes().PutStr("exception.message", "model unavailable")
	return ld
}

// projectText is everything project stored: each item's payload and its
// envelope's header, as text.
func projectText(t *testing.T, f *fakeSentry, project string) string {
	var b strings.Builder
	for _, r := range f.envelopes() {
		if r.project != project {
			continue
		}
		if tc := r.env.Header.Trace; tc != nil {
			b.WriteString(tc.Transaction + " " + tc.TraceID + "\n")
		}
		for _, it := range r.env.Items {
			b.Write(it.Payload)
			b.WriteByte('\n')
		}
	}
	require.NotZero(t, b.Len(), "project %s stored something", project)
	return b.String()
}

// TestNoRequestDataCrossesProjects is issue 38's scenario: checkout
// (project 1) serves a URL with a card number in its query; fraud (project
// 2) logs an exception with checkout's trace and span ids. fraud's error
// event carries none of checkout's URL, query, route or transaction name,
// whichever pipeline delivers first.
func TestNoRequestDataCrossesProjects(t *testing.T) {
	for _, order := range []string{"spans first", "log first"} {
		t.Run(order, inBubble(func(t *testing.T) {
			sentry := newMemSentry(t)
			h := newHarnessWith(t, sentry, twoTenants(sentry, nil))
			spans := func() { require.NoError(t, h.traces.ConsumeTraces(context.Background(), checkoutPays(0))) }
			logs := func() { h.consumeLogsData(fraudLogsException(0)) }
			if order == "log first" {
				spans, logs = logs, spans
			}
			spans()
			logs()
			time.Sleep(time.Minute)
			h.shutdown()
			sentry.requireNoInvalid()

			fraud := projectText(t, sentry, "2")
			assert.Contains(t, fraud, "model unavailable", "fraud's own error event")
			for _, s := range checkoutSecret {
				assert.NotContains(t, fraud, s, "project 2 carries checkout's data")
			}
			assert.Contains(t, projectText(t, sentry, "1"), "4111111111111111", "checkout keeps its own")
		}))
	}
}
