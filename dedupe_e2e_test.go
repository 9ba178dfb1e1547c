package sentryexporter

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/metadata"
)

// exceptionLogs is the log record of the exception makeTraces(0, 1, true)
// records on its db span: same trace, span, type and message.
func exceptionLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(testStart.Add(9 * time.Millisecond)))
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.Body().SetStr("checkout failed")
	lr.SetTraceID(traceID(0))
	lr.SetSpanID(spanID(0, 1))
	lr.Attributes().PutStr("exception.type", "*pq.Error")
	lr.Attributes().PutStr("exception.message", "connection refused")
	return ld
}

// errorEvents returns the error event payloads the fake Sentry received, decoded,
// with their envelopes' DSC.
func errorEvents(t *testing.T, f *fakeSentry) ([]map[string]any, []*envelope.TraceContext) {
	var docs []map[string]any
	var dscs []*envelope.TraceContext
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == envelope.ItemTypeEvent {
				var doc map[string]any
				require.NoError(t, json.Unmarshal(it.Payload, &doc))
				docs = append(docs, doc)
				dscs = append(dscs, r.env.Header.Trace)
			}
		}
	}
	return docs, dscs
}

// The same exception as a span event and as a log record, in either order and
// a few seconds apart, is one error event: the span's, with the log's message.
// The other is counted as deduplicated; the log record is still a log.
func TestOneExceptionOneEvent(t *testing.T) {
	for _, order := range []string{"span first", "log first"} {
		t.Run(order, inBubble(func(t *testing.T) {
			h := newHarness(t, nil) // default window: 5 s
			first, second := func() { h.consumeTraces(0, 1, true) }, func() { h.consumeLogsData(exceptionLogs()) }
			if order == "log first" {
				first, second = second, first
			}
			first()
			assert.Zero(t, h.sentry.countType(envelope.ItemTypeEvent), "held for its counterpart")
			time.Sleep(3 * time.Second)
			second()
			docs, dscs := errorEvents(t, h.sentry)
			require.Len(t, docs, 1, "merged and sent as soon as the counterpart arrived")
			doc := docs[0]
			assert.Equal(t, "GET /cart/{id}", doc["transaction"])
			assert.Equal(t, map[string]any{"formatted": "checkout failed"}, doc["message"])
			assert.Equal(t, "auto.otel.span_event", doc["exception"].(map[string]any)["values"].([]any)[0].(map[string]any)["mechanism"].(map[string]any)["type"])
			assert.Equal(t, "GET /cart/{id}", dscs[0].Transaction, "the DSC names the trace's head")
			assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeLog), "the record is still sent as a log")

			time.Sleep(time.Minute)
			h.shutdown()
			h.sentry.requireNoInvalid()
			assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeEvent), "nothing else was held")
			assert.EqualValues(t, 1, h.sent("error"))
			assert.EqualValues(t, 1, h.dropped("error", "deduplicated"))
			assert.EqualValues(t, 2, h.sent("error")+h.droppedAll("error"), "items in = sent + dropped")
			assert.EqualValues(t, 1, h.sent("log_item"))
			assert.Empty(t, h.sentry.discards(), "nothing was lost: no client report")
		}))
	}
}

// Outside the window both are sent; the log-derived one still carries its
// segment's transaction and the trace's DSC, found in the trace index.
func TestExceptionOutsideWindow(t *testing.T) { synctest.Test(t, testExceptionOutsideWindow) }

func testExceptionOutsideWindow(t *testing.T) {
	h := newHarness(t, nil)
	h.consumeTraces(0, 1, true)
	time.Sleep(6 * time.Second)
	h.consumeLogsData(exceptionLogs()) // the span event is released first, then this one is held
	require.Equal(t, 1, h.sentry.countType(envelope.ItemTypeEvent))
	h.shutdown() // releases the held log-derived event
	h.sentry.requireNoInvalid()
	docs, dscs := errorEvents(t, h.sentry)
	require.Len(t, docs, 2)
	for i, doc := range docs {
		assert.Equal(t, "GET /cart/{id}", doc["transaction"], "event %d", i)
		assert.Equal(t, "GET /cart/{id}", dscs[i].Transaction, "event %d", i)
		assert.Equal(t, "true", dscs[i].Sampled)
	}
	assert.Equal(t, map[string]any{"formatted": "checkout failed"}, docs[1]["message"])
	assert.EqualValues(t, 2, h.sent("error"))
	assert.Zero(t, h.droppedAll("error"))
}

// Without the window, each pipeline's event is sent in its own push.
func TestDedupeWindowOff(t *testing.T) { synctest.Test(t, testDedupeWindowOff) }

func testDedupeWindowOff(t *testing.T) {
	h := newHarness(t, noDedupe)
	h.consumeTraces(0, 1, true)
	assert.Equal(t, 1, h.sentry.countType(envelope.ItemTypeEvent))
	h.consumeLogsData(exceptionLogs())
	assert.Equal(t, 2, h.sentry.countType(envelope.ItemTypeEvent))
	docs, _ := errorEvents(t, h.sentry)
	assert.Equal(t, "GET /cart/{id}", docs[1]["transaction"], "the log-derived event gets its segment's transaction")
	h.shutdown()
	assert.Zero(t, h.droppedAll("error"))
}

// Past the cap on held events, an event is sent at once (not held), and
// every held one goes out at shutdown: nothing is lost either way.
func TestDedupeBoundEndToEnd(t *testing.T) { synctest.Test(t, testDedupeBoundEndToEnd) }

func testDedupeBoundEndToEnd(t *testing.T) {
	sentry := newMemSentry(t)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.WithoutCancel(t.Context()))) }) // t.Context is done once cleanup runs
	cfg := createDefaultConfig().(*Config)
	cfg.DSN = configopaque.String(sentry.dsn())
	cfg.ClientReports.Enabled = false
	useMemNet(&cfg.ClientConfig)
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	e, err := newExporter(cfg, set)
	require.NoError(t, err)
	e.dedupe.MaxEvents = 2
	require.NoError(t, e.start(t.Context(), sentry.host()))

	require.NoError(t, e.pushTraces(t.Context(), makeTraces(0, 3, true)))
	e.settleInBubble()
	assert.Equal(t, 1, sentry.countType(envelope.ItemTypeEvent), "two held, the third sent at once")
	require.NoError(t, e.shutdown(t.Context()))
	assert.Equal(t, 3, sentry.countType(envelope.ItemTypeEvent), "the held ones go out at shutdown")
	sentry.requireNoInvalid()
}

func (h *harness) consumeLogsData(ld plog.Logs) {
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), ld))
}

// An exception only logged (no span event) inside a server segment is sent
// when its window ends with the segment's transaction, request and
// contexts.response.status_code, whichever pipeline delivered first.
func TestLogErrorTakesSegmentRequest(t *testing.T) {
	for _, order := range []string{"spans first", "log first"} {
		t.Run(order, inBubble(func(t *testing.T) {
			h := newHarness(t, nil)
			first, second := func() { h.consumeTraces(0, 1, false) }, func() { h.consumeLogsData(exceptionLogs()) }
			if order == "log first" {
				first, second = second, first
			}
			first()
			second()
			time.Sleep(time.Minute)
			h.shutdown()
			h.sentry.requireNoInvalid()
			docs, _ := errorEvents(t, h.sentry)
			require.Len(t, docs, 1)
			doc := docs[0]
			assert.Equal(t, "GET /cart/{id}", doc["transaction"])
			req, _ := doc["request"].(map[string]any)
			assert.Equal(t, "GET", req["method"], "the segment's request")
			contexts, _ := doc["contexts"].(map[string]any)
			assert.Equal(t, map[string]any{"status_code": float64(200)}, contexts["response"])
			assert.Contains(t, contexts, "trace")
			assert.EqualValues(t, 1, h.sent("error"))
			assert.Zero(t, h.droppedAll("error"))
		}))
	}
}
