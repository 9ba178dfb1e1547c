package send

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// dropSevenSpans counts 7 spans dropped as queue_overflow: a client report pending.
func dropSevenSpans(l *Lane) {
	l.acct.Dropped(context.Background(), account.ReasonQueueOverflow, account.Counts{account.CatSpan: 7})
}

// reportOf is the client report an arrival carries: "" when none, else its
// discarded events' JSON.
func reportOf(a arrival) string {
	for _, it := range a.env.Items {
		if it.Type == envelope.ItemTypeClientReport {
			_, events, _ := strings.Cut(string(it.Payload), `"discarded_events"`)
			return `"discarded_events"` + events
		}
	}
	return ""
}

const sevenSpans = `"discarded_events":[{"reason":"queue_overflow","category":"span","quantity":7}]}`

// TestSettleReport: a report that rode along is kept unless its envelope's
// answer shows Sentry has it (stored, or a 429: Relay never rate limits
// client reports). When Sentry refused the envelope with a 4xx, reports stop
// riding along until a standalone one gets through: a report Sentry refuses
// must never take data down with it.
func TestSettleReport(t *testing.T) {
	for _, tt := range []struct {
		name       string
		res        Result
		kept       bool
		standalone bool
	}{
		{"stored", Result{Delivered: true, Status: 200}, false, false},
		{"429", Result{Reason: account.ReasonRateLimited, Status: 429}, false, false},
		{"400", Result{Reason: account.ReasonSendError, Status: 400}, true, true},
		{"413", Result{Reason: account.ReasonSendError, Status: 413, TooLarge: true}, true, true},
		{"499", Result{Reason: account.ReasonSendError, Status: 499}, true, true},
		{"500", Result{Reason: account.ReasonSendError, Status: 500}, true, false},
		{"no answer", Result{Reason: account.ReasonNetworkError}, true, false},
	} {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t, 1, nil, true)
			l := f.lanes[0]
			dropSevenSpans(l)
			o := tx(1)
			report := l.attachReport(&o.Env)
			require.Len(t, o.Env.Items, 2, "the report rides along")
			l.settleReport(report, tt.res)
			assert.Equal(t, tt.standalone, l.standaloneReports.Load(), "standalone from now on")
			o = tx(2)
			again := l.attachReport(&o.Env)
			switch {
			case tt.standalone:
				assert.Nil(t, again, "no report rides along")
				assert.Len(t, o.Env.Items, 1)
				assert.Equal(t, []envelope.Discard{{Reason: "queue_overflow", Category: "span", Quantity: 7}}, l.reports.Take(), "kept for the standalone report")
			case tt.kept:
				assert.Equal(t, []envelope.Discard{{Reason: "queue_overflow", Category: "span", Quantity: 7}}, again, "kept: it rides along again")
			default:
				assert.Nil(t, again, "Sentry has it")
			}
			f.shutdown()
		})
	}
}

// TestStandaloneReports: every ReportInterval a project's pending report goes
// out on its own, once; one Sentry did not take is kept for the next (a 429
// counts as taken); only an all-category limit holds it, and when that limit
// ends the first report is its probe; its answer tells the project's health.
func TestStandaloneReports(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		answers []answer // to the reports, in turn (200 after)
		limits  string   // X-Sentry-Rate-Limits in force from the start
		dropAt  []time.Duration
		want    []time.Duration // when a report arrived
		refused bool            // the project's key refused afterwards
	}{
		{name: "once per pending report", dropAt: []time.Duration{0, 25 * s}, want: []time.Duration{10 * s, 30 * s}},
		{name: "nothing pending: nothing sent", want: nil},
		{name: "a 500: sent again", answers: []answer{{status: 500}}, dropAt: []time.Duration{0}, want: []time.Duration{10 * s, 20 * s}},
		{name: "no answer: sent again", answers: []answer{{hang: true}}, dropAt: []time.Duration{0}, want: []time.Duration{10 * s, 20 * s}},
		{
			name: "a 429 for another category: Sentry has it", answers: []answer{{status: 429, headers: map[string]string{"X-Sentry-Rate-Limits": "60:transaction:key"}}},
			dropAt: []time.Duration{0}, want: []time.Duration{10 * s},
		},
		{name: "a category's limit does not hold it", limits: "60:transaction;error;span:key", dropAt: []time.Duration{0}, want: []time.Duration{10 * s}},
		{
			name: "an all-category limit holds it; then a probe, then as usual", limits: "25::organization",
			dropAt: []time.Duration{0, 35 * s}, want: []time.Duration{30 * s, 40 * s},
		},
		{
			name: "a refused key: kept, sent again", answers: slices.Repeat([]answer{{status: 401}}, 10),
			dropAt: []time.Duration{0}, want: []time.Duration{10 * s, 20 * s, 30 * s, 40 * s, 50 * s}, refused: true,
		},
	}
	for _, tt := range tests {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t, 1, func(c *Config) {
				c.ReportInterval = 10 * time.Second
				c.Client.Timeout = 2 * time.Second
			}, true)
			l := f.lanes[0]
			start := time.Now()
			if tt.limits != "" {
				limits, _ := ratelimit.Parse(tt.limits, start)
				require.False(t, limits.Empty())
				f.limits[0].Merge(limits)
			}
			f.sentry.respond = inTurn(tt.answers)
			for _, at := range tt.dropAt {
				time.Sleep(time.Until(start.Add(at)))
				dropSevenSpans(l)
			}
			time.Sleep(time.Until(start.Add(55 * time.Second))) // between two ticks
			synctest.Wait()
			assert.Equal(t, tt.want, standaloneReportTimes(t, f, start))
			assert.Equal(t, tt.refused, l.Health(time.Now(), time.Hour).State == HealthRefused, "the key refused")
			f.shutdown()
		})
	}
}

// inTurn answers the requests with answers, in turn, then 200.
func inTurn(answers []answer) func(string, int, *envelope.Envelope) answer {
	return func(_ string, n int, _ *envelope.Envelope) answer {
		if n < len(answers) {
			return answers[n]
		}
		return answer{status: 200}
	}
}

// standaloneReportTimes is when each request f's Sentry got arrived, after
// start; each must be a report of sevenSpans alone.
func standaloneReportTimes(t *testing.T, f *fixture, start time.Time) []time.Duration {
	var got []time.Duration
	for _, a := range f.sentry.got() {
		assert.Equal(t, sevenSpans, reportOf(a))
		assert.Len(t, a.env.Items, 1, "a report alone")
		got = append(got, a.at.Sub(start))
	}
	return got
}

// TestRefusedReportGoesStandalone: an envelope carrying a report that Sentry
// refuses with a 4xx is counted, and its report kept; the envelopes after it
// go without reports until a standalone report got through, then reports
// ride along again.
func TestRefusedReportGoesStandalone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1, func(c *Config) {
			c.ReportInterval = 10 * time.Second
			c.MaxConcurrentRequests = 1
		}, true)
		l := f.lanes[0]
		f.sentry.respond = inTurn([]answer{{status: http.StatusBadRequest}})
		start := time.Now()
		dropSevenSpans(l)
		l.Offer(t.Context(), txs(1, 1), nil) // carries the report: refused
		synctest.Wait()
		l.Offer(t.Context(), txs(2, 1), nil) // goes without
		synctest.Wait()
		time.Sleep(15 * time.Second) // the standalone report at 10 s
		dropSevenSpans(l)
		l.Offer(t.Context(), txs(3, 1), nil) // rides along again
		synctest.Wait()
		got := f.sentry.got()
		require.Len(t, got, 4)
		assert.Equal(t, sevenSpans, reportOf(got[0]), "the first envelope carried it")
		assert.Empty(t, reportOf(got[1]), "none rides along once one was refused")
		assert.Equal(t, 10*time.Second, got[2].at.Sub(start))
		assert.Len(t, got[2].env.Items, 1, "standalone")
		assert.Contains(t, reportOf(got[2]), `{"reason":"queue_overflow","category":"span","quantity":7}`, "the refused report's counts")
		assert.Contains(t, reportOf(got[2]), `{"reason":"send_error","category":"transaction","quantity":1}`, "and the refused envelope's")
		assert.Equal(t, sevenSpans, reportOf(got[3]), "riding along again")
		assert.Equal(t, int64(1), f.sums("dropped_items")["category=transaction,project=1,reason=send_error"])
		f.shutdown()
	})
}

// TestFinalReport: at shutdown each project's pending report gets one
// attempt of at most final_report_timeout (2 s by default); when it fails,
// or an all-category limit holds it, its counts are logged with the project.
func TestFinalReport(t *testing.T) {
	tests := []struct {
		name   string
		answer answer
		limits string
		took   time.Duration // the shutdown
		sent   bool
		why    string // logged with this reason; "" not logged
	}{
		{name: "sent", answer: answer{status: 200}, sent: true},
		{name: "a 429 for another category: Sentry has it", answer: answer{status: 429, headers: map[string]string{"X-Sentry-Rate-Limits": "60:error:key"}}, sent: true},
		{name: "a slow answer within the default", answer: answer{status: 200}, took: 1500 * time.Millisecond, sent: true},
		{name: "no answer: 2 s", answer: answer{hang: true}, took: 2 * time.Second, why: "network_error"},
		{name: "refused", answer: answer{status: 500}, why: "send_error"},
		{name: "an all-category limit", answer: answer{status: 200}, limits: "60::organization", why: "ratelimit_backoff"},
	}
	for _, tt := range tests {
		runInBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t, 1, func(c *Config) {
				c.Client.Timeout = time.Minute
			}, true)
			f.sentry.respond = func(string, int, *envelope.Envelope) answer {
				if tt.answer.status != 0 {
					time.Sleep(tt.took) // a slow answer
				}
				return tt.answer
			}
			if tt.limits != "" {
				limits, _ := ratelimit.Parse(tt.limits, time.Now())
				f.limits[0].Merge(limits)
			}
			dropSevenSpans(f.lanes[0])
			start := time.Now()
			f.stage.Shutdown(t.Context())
			assert.Equal(t, tt.took, time.Since(start), "shutdown took")
			got := f.sentry.got()
			if tt.limits == "" {
				require.Len(t, got, 1, "one attempt")
				assert.Equal(t, sevenSpans, reportOf(got[0]))
			} else {
				assert.Empty(t, got, "held by the limit")
			}
			logged := f.logs.FilterMessageSnippet("Final Sentry client report could not be sent").All()
			if tt.why == "" {
				assert.Empty(t, logged)
				return
			}
			require.Len(t, logged, 1)
			assert.Equal(t, map[string]any{"project": "1", "why": tt.why, "queue_overflow.span": uint64(7)}, logged[0].ContextMap())
		})
	}
}
