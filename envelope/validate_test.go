package envelope

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testEventID = "fc6d8c0c43fc4630ad850ee518f1b9d0"
	testTraceID = "5b8efff798038103d269b633813fc60c"
	testSpanID  = "b0e6f15b45c36b12"
)

// Baseline payloads, one per item type, each valid; every row of TestValidateRules breaks
// exactly one rule in one of them.
const (
	eventJSON = `{"event_id":"` + testEventID + `","timestamp":1746456149.019,"platform":"go","level":"error",` +
		`"exception":{"values":[{"type":"*errors.errorString","value":"connection refused","mechanism":{"type":"generic","handled":true}}]},` +
		`"contexts":{"trace":{"trace_id":"` + testTraceID + `","span_id":"` + testSpanID + `"}}}`
	transactionJSON = `{"type":"transaction","event_id":"` + testEventID + `","transaction":"GET /",` +
		`"start_timestamp":1742921669.158209,"timestamp":1742921669.180536,` +
		`"contexts":{"trace":{"trace_id":"` + testTraceID + `","span_id":"` + testSpanID + `","op":"http.server"}},` +
		`"spans":[{"trace_id":"` + testTraceID + `","span_id":"f1196292f76e45c0","parent_span_id":"` + testSpanID + `",` +
		`"start_timestamp":1742921669.178306,"timestamp":1742921669.180484,"tags":{"k":"v"}}]}`
	logJSON = `{"timestamp":"2025-05-05T14:42:29.019Z","trace_id":"` + testTraceID + `","span_id":"` + testSpanID + `",` +
		`"level":"info","severity_number":9,"body":"hi","attributes":{"s":{"type":"string","value":"x"},` +
		`"b":{"type":"boolean","value":true},"i":{"type":"integer","value":9223372036854775807},` +
		`"d":{"type":"double","value":1.5,"unit":"millisecond"},"a":{"type":"array","value":[1,2.5]},"e":{"type":"array","value":[]}}}`
	spanJSON = `{"trace_id":"` + testTraceID + `","span_id":"` + testSpanID + `","name":"GET /","status":"ok","is_segment":true,` +
		`"start_timestamp":1742921669.158209,"end_timestamp":1742921669.180536,` +
		`"attributes":{"sentry.op":{"type":"string","value":"http.server"}},` +
		`"links":[{"trace_id":"` + testTraceID + `","span_id":"f1196292f76e45c0","sampled":true}]}`
	metricJSON = `{"timestamp":"2026-12-03T11:42:29.019Z","trace_id":"` + testTraceID + `","span_id":"` + testSpanID + `",` +
		`"type":"distribution","name":"http.server.duration","value":12.5,"unit":"millisecond",` +
		`"attributes":{"http.route":{"type":"string","value":"/cart"},"sentry.sdk.name":{"type":"string","value":"sentry.go"}}}`
	reportJSON = `{"timestamp":"2020-02-07T14:16:00Z","discarded_events":[{"reason":"queue_overflow","category":"error","quantity":23}]}`
)

func testDSC() *TraceContext {
	return &TraceContext{TraceID: testTraceID, PublicKey: "public", SampleRate: "1", Sampled: "true"}
}

func eventItem(payload string) Item {
	return Item{Type: ItemTypeEvent, ContentType: ContentTypeJSON, Payload: []byte(payload)}
}

func transactionItem(payload string) Item {
	return Item{Type: ItemTypeTransaction, ContentType: ContentTypeJSON, Payload: []byte(payload)}
}

func logItem(logs ...string) Item {
	return Item{
		Type: ItemTypeLog, ContentType: ContentTypeLogContainer, ItemCount: len(logs),
		Payload: []byte(`{"items":[` + strings.Join(logs, ",") + `]}`),
	}
}

func spanItem(spans ...string) Item {
	return Item{
		Type: ItemTypeSpan, ContentType: ContentTypeSpanContainer, ItemCount: len(spans),
		Payload: []byte(`{"items":[` + strings.Join(spans, ",") + `]}`),
	}
}

func metricItem(metrics ...string) Item {
	return Item{
		Type: ItemTypeTraceMetric, ContentType: ContentTypeTraceMetricContainer, ItemCount: len(metrics),
		Payload: []byte(`{"items":[` + strings.Join(metrics, ",") + `]}`),
	}
}

func reportItem(payload string) Item {
	return Item{Type: ItemTypeClientReport, Payload: []byte(payload)}
}

func withEventID(items ...Item) *Envelope {
	return &Envelope{Header: Header{EventID: testEventID, SentAt: sentAt, Trace: testDSC()}, Items: items}
}

func withDSC(items ...Item) *Envelope {
	return &Envelope{Header: Header{SentAt: sentAt, Trace: testDSC()}, Items: items}
}

// edit replaces old by repl in s, and fails when old is absent so a row cannot silently test
// the baseline.
func edit(t *testing.T, s, old, repl string) string {
	t.Helper()
	require.Contains(t, s, old)
	return strings.Replace(s, old, repl, 1)
}

func TestValidateBaselines(t *testing.T) {
	tests := map[string]*Envelope{
		"event":                          withEventID(eventItem(eventJSON), reportItem(reportJSON)),
		"event without payload event_id": withEventID(eventItem(strings.Replace(eventJSON, `"event_id":"`+testEventID+`",`, "", 1))),
		"event without trace header":     {Header: Header{EventID: testEventID}, Items: []Item{eventItem(eventJSON)}},
		"transaction":                    withEventID(transactionItem(transactionJSON)),
		"log":                            withDSC(logItem(logJSON, logJSON)),
		"logs of two traces, no DSC": {Items: []Item{logItem(logJSON,
			strings.Replace(logJSON, testTraceID, "0123456789abcdef0123456789abcdef", 1))}},
		"span": withDSC(spanItem(spanJSON, spanJSON)),
		"metrics": withDSC(metricItem(metricJSON,
			edit(t, edit(t, metricJSON, `"type":"distribution"`, `"type":"counter"`), `"value":12.5`, `"value":3`),
			edit(t, edit(t, metricJSON, `"type":"distribution"`, `"type":"gauge"`), `,"unit":"millisecond"`, ``),
			edit(t, metricJSON, `"millisecond"`, `"Request_1"`),
			edit(t, metricJSON, `"2026-12-03T11:42:29.019Z"`, `1764762149.019`))),
		"metrics of two traces, no DSC, no span_id": {Items: []Item{metricItem(metricJSON,
			edit(t, edit(t, metricJSON, testTraceID, "0123456789abcdef0123456789abcdef"), `,"span_id":"`+testSpanID+`"`, ``))}},
		"metrics, logs and spans": withDSC(spanItem(spanJSON), logItem(logJSON), metricItem(metricJSON)),
		"client report only":      {Items: []Item{reportItem(reportJSON), reportItem(`{"discarded_events":[]}`)}},
		"empty":                   {},
		"writer output": {Header: Header{Trace: testDSC()}, Items: []Item{
			{Type: ItemTypeLog, ContentType: ContentTypeLogContainer, ItemCount: 100, Payload: AppendContainer(nil, benchLogs(100))},
		}},
	}
	for name, e := range tests {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, Validate(e, RelayDefaults()))
			// The same envelope survives the wire.
			parsed, err := Parse(e.AppendTo(nil))
			require.NoError(t, err)
			require.NoError(t, Validate(parsed, RelayDefaults()))
		})
	}
}

// editedEvent and its siblings are an envelope of one valid item of their
// kind with one edit: the first old in its JSON replaced by repl.
func editedEvent(t *testing.T, old, repl string) *Envelope {
	return withEventID(eventItem(edit(t, eventJSON, old, repl)))
}

func editedTransaction(t *testing.T, old, repl string) *Envelope {
	return withEventID(transactionItem(edit(t, transactionJSON, old, repl)))
}

func editedLog(t *testing.T, old, repl string) *Envelope {
	return withDSC(logItem(edit(t, logJSON, old, repl)))
}

func editedSpan(t *testing.T, old, repl string) *Envelope {
	return withDSC(spanItem(edit(t, spanJSON, old, repl)))
}

func editedMetric(t *testing.T, old, repl string) *Envelope {
	return withDSC(metricItem(edit(t, metricJSON, old, repl)))
}

func editedReport(t *testing.T, old, repl string) *Envelope {
	return &Envelope{Items: []Item{reportItem(edit(t, reportJSON, old, repl))}}
}

// All-zero ids, which Relay rejects.
var zeroTraceID = strings.Repeat("0", 32)

var zeroSpanID = strings.Repeat("0", 16)

// validateRuleCases are TestValidateRules' envelopes, each breaking one rule,
// and what the error says.
var validateRuleCases = []struct {
	name  string
	env   func(t *testing.T) *Envelope
	want  string
	count int // number of joined errors; 0 means 1
}{
	// Envelope header and event_id.
	{"event without envelope event_id", func(_ *testing.T) *Envelope {
		e := withEventID(eventItem(eventJSON))
		e.Header.EventID = ""
		return e
	}, "the envelope header has no event_id", 2}, // the payload's event_id then differs too
	{"transaction without envelope event_id", func(_ *testing.T) *Envelope {
		e := withEventID(transactionItem(strings.Replace(transactionJSON, `"event_id":"`+testEventID+`",`, "", 1)))
		e.Header.EventID = ""
		return e
	}, "the envelope header has no event_id", 0},
	{"payload event_id differs", func(t *testing.T) *Envelope {
		return editedEvent(t, testEventID, "00000000000000000000000000000001")
	}, "differs from the envelope event_id", 0},
	{"envelope event_id not lowercase hex", func(_ *testing.T) *Envelope {
		e := &Envelope{Header: Header{EventID: strings.ToUpper(testEventID)}}
		return e
	}, "event_id", 0},

	// Mixing.
	{"two events", func(_ *testing.T) *Envelope {
		return withEventID(eventItem(eventJSON), eventItem(eventJSON))
	}, "at most one is allowed", 2}, // and Relay's 413
	{"two transactions", func(_ *testing.T) *Envelope {
		return withEventID(transactionItem(transactionJSON), transactionItem(transactionJSON))
	}, "at most one is allowed", 2},
	{"event and transaction", func(_ *testing.T) *Envelope {
		return withEventID(eventItem(eventJSON), transactionItem(transactionJSON))
	}, "both an event and a transaction", 2},
	{"two log containers", func(_ *testing.T) *Envelope {
		return withDSC(logItem(logJSON), logItem(logJSON))
	}, "2 log containers", 2},
	{"two span containers", func(_ *testing.T) *Envelope {
		return withDSC(spanItem(spanJSON), spanItem(spanJSON))
	}, "2 span containers", 2},
	{"unknown item type", func(_ *testing.T) *Envelope {
		return &Envelope{Items: []Item{{Type: "attachment", Payload: []byte("x")}}}
	}, `unknown item type "attachment"`, 0},

	// Containers and content types.
	{"log container without item_count", func(_ *testing.T) *Envelope {
		e := withDSC(logItem(logJSON))
		e.Items[0].ItemCount = 0
		return e
	}, "container without item_count", 0},
	{"log item_count mismatch", func(_ *testing.T) *Envelope {
		e := withDSC(logItem(logJSON))
		e.Items[0].ItemCount = 2
		return e
	}, "item_count 2 but 1 items", 0},
	{"span item_count mismatch", func(_ *testing.T) *Envelope {
		e := withDSC(spanItem(spanJSON, spanJSON))
		e.Items[0].ItemCount = 1
		return e
	}, "item_count 1 but 2 items", 0},
	{"log content type mismatch", func(_ *testing.T) *Envelope {
		e := withDSC(logItem(logJSON))
		e.Items[0].ContentType = ContentTypeJSON
		return e
	}, "content_type", 0},
	{"span content type mismatch", func(_ *testing.T) *Envelope {
		e := withDSC(spanItem(spanJSON))
		e.Items[0].ContentType = ContentTypeLogContainer
		return e
	}, "content_type", 0},
	{"event content type mismatch", func(_ *testing.T) *Envelope {
		e := withEventID(eventItem(eventJSON))
		e.Items[0].ContentType = "text/plain"
		return e
	}, "content_type", 0},
	{"container without items array", func(_ *testing.T) *Envelope {
		e := withDSC(logItem(logJSON))
		e.Items[0].Payload = []byte(`{"logs":[]}`)
		return e
	}, "no items array", 0},

	// Payload JSON.
	{"payload not JSON", func(t *testing.T) *Envelope { return editedEvent(t, `"platform":"go"`, `"platform":go`) }, "invalid JSON", 0},
	{"payload invalid UTF-8", func(t *testing.T) *Envelope { return editedEvent(t, `"platform":"go"`, "\"platform\":\"g\xffo\"") }, "invalid UTF-8", 0},
	{"payload NaN literal", func(t *testing.T) *Envelope { return editedEvent(t, `1746456149.019`, `NaN`) }, "invalid JSON", 0},
	{"payload trailing data", func(_ *testing.T) *Envelope {
		return withEventID(eventItem(eventJSON + " {}"))
	}, "invalid JSON", 0},
	{"payload duplicate key", func(t *testing.T) *Envelope {
		return editedEvent(t, `"platform":"go"`, `"platform":"go","platform":"go"`)
	}, "duplicate key", 0},
	{"payload not an object", func(_ *testing.T) *Envelope { return withEventID(eventItem(`[]`)) }, "not a JSON object", 0},

	// IDs.
	{"contexts.trace trace_id too short", func(t *testing.T) *Envelope { return editedEvent(t, testTraceID, testTraceID[:31]) }, "trace_id", 0},
	{"contexts.trace trace_id uppercase", func(t *testing.T) *Envelope {
		return editedEvent(t, testTraceID, strings.ToUpper(testTraceID))
	}, "lowercase hex", 0},
	{"contexts.trace trace_id all zero", func(t *testing.T) *Envelope { return editedEvent(t, testTraceID, zeroTraceID) }, "all zeros", 0},
	{"contexts.trace span_id not hex", func(t *testing.T) *Envelope { return editedEvent(t, testSpanID, "b0e6f15b45c36b1g") }, "span_id", 0},
	{"contexts.trace span_id all zero", func(t *testing.T) *Envelope { return editedEvent(t, testSpanID, zeroSpanID) }, "all zeros", 0},
	{"contexts.trace span_id missing", func(t *testing.T) *Envelope {
		return editedEvent(t, `,"span_id":"`+testSpanID+`"`, "")
	}, "span_id is missing", 0},
	{"transaction span trace_id all zero", func(t *testing.T) *Envelope {
		return editedTransaction(t, `"spans":[{"trace_id":"`+testTraceID, `"spans":[{"trace_id":"`+zeroTraceID)
	}, "spans[0]: trace_id is all zeros", 0},
	{"transaction span span_id too long", func(t *testing.T) *Envelope {
		return editedTransaction(t, "f1196292f76e45c0", "f1196292f76e45c00")
	}, "spans[0]: span_id", 0},
	{"transaction span parent_span_id all zero", func(t *testing.T) *Envelope {
		return editedTransaction(t, `"parent_span_id":"`+testSpanID, `"parent_span_id":"`+zeroSpanID)
	}, "parent_span_id is all zeros", 0},
	{"span v2 span_id all zero", func(t *testing.T) *Envelope {
		return editedSpan(t, `"span_id":"`+testSpanID, `"span_id":"`+zeroSpanID)
	}, "span_id is all zeros", 0},
	{"span v2 link trace_id bad", func(t *testing.T) *Envelope {
		return editedSpan(t, `"links":[{"trace_id":"`+testTraceID, `"links":[{"trace_id":"x`)
	}, "links[0]: trace_id", 0},
	{"log trace_id all zero", func(t *testing.T) *Envelope {
		return editedLog(t, `"trace_id":"`+testTraceID, `"trace_id":"`+zeroTraceID)
	}, "trace_id is all zeros", 0},
	{"log span_id bad", func(t *testing.T) *Envelope { return editedLog(t, testSpanID, "xyz") }, "span_id", 0},
	{"DSC trace_id all zero", func(_ *testing.T) *Envelope {
		e := withEventID(eventItem(eventJSON))
		e.Header.Trace.TraceID = zeroTraceID
		return e
	}, "trace.trace_id: is all zeros", 0},
	{"DSC trace_id too short", func(_ *testing.T) *Envelope {
		e := withEventID(eventItem(eventJSON))
		e.Header.Trace.TraceID = "abc"
		return e
	}, "trace.trace_id", 0},

	// Timestamps.
	{"event timestamp missing", func(t *testing.T) *Envelope { return editedEvent(t, `"timestamp":1746456149.019,`, "") }, "timestamp is missing", 0},
	{"event timestamp huge", func(t *testing.T) *Envelope { return editedEvent(t, `1746456149.019`, `1e400`) }, "not a finite number", 0},
	{"event timestamp not RFC 3339", func(t *testing.T) *Envelope { return editedEvent(t, `1746456149.019`, `"2025-05-05 14:42"`) }, "not an RFC 3339", 0},
	{"event timestamp a bool", func(t *testing.T) *Envelope { return editedEvent(t, `1746456149.019`, `true`) }, "neither a number nor a string", 0},
	{"transaction start after end", func(t *testing.T) *Envelope {
		return editedTransaction(t, `"start_timestamp":1742921669.158209`, `"start_timestamp":1742921670`)
	}, "start_timestamp is after timestamp", 0},
	{"transaction start_timestamp missing", func(t *testing.T) *Envelope {
		return editedTransaction(t, `"start_timestamp":1742921669.158209,`, ``)
	}, "start_timestamp is missing", 0},
	{"transaction span start after end", func(t *testing.T) *Envelope {
		return editedTransaction(t, `"start_timestamp":1742921669.178306`, `"start_timestamp":"2026-01-01T00:00:00Z"`)
	}, "spans[0]: start_timestamp is after timestamp", 0},
	{"transaction span timestamp missing", func(t *testing.T) *Envelope {
		return editedTransaction(t, `,"timestamp":1742921669.180484`, ``)
	}, "spans[0]: timestamp is missing", 0},
	{"span v2 start after end", func(t *testing.T) *Envelope {
		return editedSpan(t, `"end_timestamp":1742921669.180536`, `"end_timestamp":1742921669`)
	}, "start_timestamp is after end_timestamp", 0},
	{"span v2 end_timestamp missing", func(t *testing.T) *Envelope {
		return editedSpan(t, `,"end_timestamp":1742921669.180536`, ``)
	}, "end_timestamp is missing", 0},
	{"log timestamp missing", func(t *testing.T) *Envelope {
		return editedLog(t, `"timestamp":"2025-05-05T14:42:29.019Z",`, ``)
	}, "timestamp is missing", 0},

	// Transactions.
	{"transaction without type", func(t *testing.T) *Envelope { return editedTransaction(t, `"type":"transaction",`, ``) }, `type must be "transaction"`, 0},
	{"transaction with type event", func(t *testing.T) *Envelope { return editedTransaction(t, `"type":"transaction"`, `"type":"event"`) }, `type must be "transaction"`, 0},
	{"transaction without contexts.trace", func(t *testing.T) *Envelope {
		return editedTransaction(t, `"trace":{"trace_id"`, `"other":{"trace_id"`)
	}, "contexts.trace is missing", 0},
	{"span tags with a number", func(t *testing.T) *Envelope { return editedTransaction(t, `"tags":{"k":"v"}`, `"tags":{"k":1}`) }, `tag "k" is not a string`, 0},

	// Events.
	{"exception without type and value", func(t *testing.T) *Envelope {
		return editedEvent(t, `"type":"*errors.errorString","value":"connection refused",`, ``)
	}, "neither type nor value", 0},
	{"mechanism without type", func(t *testing.T) *Envelope {
		return editedEvent(t, `"mechanism":{"type":"generic",`, `"mechanism":{`)
	}, "mechanism without type", 0},

	// Span v2 and the DSC.
	{"span v2 without DSC", func(_ *testing.T) *Envelope {
		e := withDSC(spanItem(spanJSON))
		e.Header.Trace = nil
		return e
	}, "span v2 needs a valid trace (DSC) envelope header", 0},
	{"DSC trace_id differs from span", func(_ *testing.T) *Envelope {
		e := withDSC(spanItem(spanJSON))
		e.Header.Trace.TraceID = "0123456789abcdef0123456789abcdef"
		return e
	}, "differs from the DSC trace_id", 0},
	{"DSC without public_key", func(_ *testing.T) *Envelope {
		e := withDSC(spanItem(spanJSON))
		e.Header.Trace.PublicKey = ""
		return e
	}, "public_key is missing", 0},
	{"DSC sample_rate a JSON number", func(t *testing.T) *Envelope {
		data := `{"trace":{"trace_id":"` + testTraceID + `","public_key":"pk","sample_rate":1}}`
		e, err := Parse([]byte(data))
		require.NoError(t, err)
		return e
	}, "sample_rate is a JSON number", 0},
	{"DSC sample_rate not numeric", func(_ *testing.T) *Envelope {
		e := withDSC(logItem(logJSON))
		e.Header.Trace.SampleRate = "half"
		return e
	}, `sample_rate "half"`, 0},
	{"DSC sampled not a bool", func(_ *testing.T) *Envelope {
		e := withDSC(logItem(logJSON))
		e.Header.Trace.Sampled = "yes"
		return e
	}, `sampled "yes"`, 0},
	{"span v2 missing name", func(t *testing.T) *Envelope { return editedSpan(t, `"name":"GET /",`, ``) }, "name is missing", 0},
	{"span v2 missing status", func(t *testing.T) *Envelope { return editedSpan(t, `"status":"ok",`, ``) }, "status is missing", 0},
	{"span v2 missing is_segment", func(t *testing.T) *Envelope { return editedSpan(t, `"is_segment":true,`, ``) }, "is_segment", 0},

	// Logs.
	{"log without trace_id", func(t *testing.T) *Envelope { return editedLog(t, `"trace_id":"`+testTraceID+`",`, ``) }, "trace_id is missing", 0},
	{"log without level", func(t *testing.T) *Envelope { return editedLog(t, `"level":"info",`, ``) }, "level is missing", 0},
	{"log with level verbose", func(t *testing.T) *Envelope { return editedLog(t, `"level":"info"`, `"level":"verbose"`) }, `level "verbose"`, 0},
	{"log with level warning", func(t *testing.T) *Envelope { return editedLog(t, `"level":"info"`, `"level":"warning"`) }, `level "warning"`, 0},
	{"log without body", func(t *testing.T) *Envelope { return editedLog(t, `"body":"hi",`, ``) }, "body is missing", 0},
	{"logs of two traces with DSC", func(_ *testing.T) *Envelope {
		return withDSC(logItem(logJSON, strings.Replace(logJSON, testTraceID, "0123456789abcdef0123456789abcdef", 1)))
	}, "logs from 2 traces", 0},

	// Trace metrics.
	{"two trace_metric containers", func(_ *testing.T) *Envelope {
		return withDSC(metricItem(metricJSON), metricItem(metricJSON))
	}, "2 trace_metric containers", 2}, // and Relay's 413
	{"trace_metric content type mismatch", func(_ *testing.T) *Envelope {
		e := withDSC(metricItem(metricJSON))
		e.Items[0].ContentType = ContentTypeLogContainer
		return e
	}, "content_type", 0},
	{"trace_metric item_count mismatch", func(_ *testing.T) *Envelope {
		e := withDSC(metricItem(metricJSON, metricJSON))
		e.Items[0].ItemCount = 3
		return e
	}, "item_count 3 but 2 items", 0},
	{"metric not an object", func(_ *testing.T) *Envelope { return withDSC(metricItem(`[]`)) }, "is not an object", 0},
	{"metric without timestamp", func(t *testing.T) *Envelope {
		return editedMetric(t, `"timestamp":"2026-12-03T11:42:29.019Z",`, ``)
	}, "timestamp is missing", 0},
	{"metric without trace_id", func(t *testing.T) *Envelope { return editedMetric(t, `"trace_id":"`+testTraceID+`",`, ``) }, "trace_id is missing", 0},
	{"metric trace_id all zero", func(t *testing.T) *Envelope { return editedMetric(t, testTraceID, zeroTraceID) }, "trace_id is all zeros", 0},
	{"metric span_id bad", func(t *testing.T) *Envelope { return editedMetric(t, testSpanID, "b0e6f15b45c36b1") }, "span_id", 0},
	{"metric without name", func(t *testing.T) *Envelope { return editedMetric(t, `"name":"http.server.duration",`, ``) }, "name is missing", 0},
	{"metric with empty name", func(t *testing.T) *Envelope { return editedMetric(t, `"http.server.duration"`, `""`) }, "name is empty", 0},
	{"metric without type", func(t *testing.T) *Envelope { return editedMetric(t, `"type":"distribution",`, ``) }, "type is missing", 0},
	{"metric of type histogram", func(t *testing.T) *Envelope {
		return editedMetric(t, `"distribution"`, `"histogram"`)
	}, `type "histogram" is not one of`, 0},
	{"metric of type set", func(t *testing.T) *Envelope { return editedMetric(t, `"distribution"`, `"set"`) }, `type "set"`, 0},
	{"metric without value", func(t *testing.T) *Envelope { return editedMetric(t, `"value":12.5,`, ``) }, "value is missing", 0},
	{"metric value a string", func(t *testing.T) *Envelope { return editedMetric(t, `12.5`, `"12.5"`) }, "value is not a number", 0},
	{"metric value an array", func(t *testing.T) *Envelope { return editedMetric(t, `12.5`, `[1,2]`) }, "value is not a number", 0},
	{"metric value huge", func(t *testing.T) *Envelope { return editedMetric(t, `12.5`, `1e400`) }, "not a finite number", 0},
	{"metric unit with braces", func(t *testing.T) *Envelope { return editedMetric(t, `"millisecond"`, `"{request}"`) }, `unit "{request}"`, 0},
	{"metric unit too long", func(t *testing.T) *Envelope {
		return editedMetric(t, `"millisecond"`, `"requests_per_sec"`)
	}, `unit "requests_per_sec"`, 0},
	{"metric unit with a slash", func(t *testing.T) *Envelope { return editedMetric(t, `"millisecond"`, `"By/s"`) }, `unit "By/s"`, 0},
	{"metric unit a number", func(t *testing.T) *Envelope { return editedMetric(t, `"millisecond"`, `1`) }, "unit is not a string", 0},
	{"metric attribute mistyped", func(t *testing.T) *Envelope {
		return editedMetric(t, `{"type":"string","value":"/cart"}`, `{"type":"integer","value":"/cart"}`)
	}, "type integer but", 0},
	{"metric over max_trace_metric_size", func(t *testing.T) *Envelope {
		return editedMetric(t, `"/cart"`, `"`+strings.Repeat("x", 1<<20)+`"`)
	}, "max_trace_metric_size", 4}, // Relay's size over sentry.io's 2 KiB, its average, and Relay's 413 on the average
	{"metric over sentry.io's 2 KiB", func(t *testing.T) *Envelope {
		return editedMetric(t, `"/cart"`, `"`+strings.Repeat("x", 2<<10)+`"`)
	}, "over sentry.io's max_trace_metric_size 2048 (dropped)", 2}, // and the container's bytes per metric
	{"metric array over sentry.io's 2 KiB in Relay's size only", func(t *testing.T) *Envelope {
		return editedMetric(t, `"/cart"}`, `"/cart"},"shards":{"type":"array","value":[`+strings.TrimSuffix(strings.Repeat("1,", 300), ",")+`]}`)
	}, "Relay's size 2", 0}, // 300 × 8 bytes; 600 in JSON
	{"metrics of two traces with DSC", func(t *testing.T) *Envelope {
		return withDSC(metricItem(metricJSON, edit(t, metricJSON, testTraceID, "0123456789abcdef0123456789abcdef")))
	}, "metrics from 2 traces", 0},

	// Attributes.
	{"attribute not an object", func(t *testing.T) *Envelope {
		return editedLog(t, `"s":{"type":"string","value":"x"}`, `"s":"x"`)
	}, `attributes["s"]: is not`, 0},
	{"attribute without value", func(t *testing.T) *Envelope {
		return editedLog(t, `"s":{"type":"string","value":"x"}`, `"s":{"type":"string"}`)
	}, "value is missing", 0},
	{"attribute with unknown type", func(t *testing.T) *Envelope {
		return editedLog(t, `"s":{"type":"string","value":"x"}`, `"s":{"type":"object","value":{}}`)
	}, `type "object"`, 0},
	{"attribute without type", func(t *testing.T) *Envelope {
		return editedLog(t, `"s":{"type":"string","value":"x"}`, `"s":{"value":"x"}`)
	}, `type ""`, 0},
	{"string attribute with a number", func(t *testing.T) *Envelope {
		return editedLog(t, `"s":{"type":"string","value":"x"}`, `"s":{"type":"string","value":1}`)
	}, "not a string", 0},
	{"boolean attribute with a string", func(t *testing.T) *Envelope {
		return editedLog(t, `"value":true`, `"value":"true"`)
	}, "not a bool", 0},
	{"integer attribute with a fraction", func(t *testing.T) *Envelope {
		return editedLog(t, `9223372036854775807`, `1.5`)
	}, "not an integer within int64", 0},
	{"integer attribute over int64", func(t *testing.T) *Envelope {
		return editedLog(t, `9223372036854775807`, `9223372036854775808`)
	}, "not an integer within int64", 0},
	{"double attribute huge", func(t *testing.T) *Envelope { return editedLog(t, `"value":1.5`, `"value":1e400`) }, "not finite", 0},
	{"double attribute a string", func(t *testing.T) *Envelope { return editedLog(t, `"value":1.5`, `"value":"1.5"`) }, "not a number", 0},
	{"array attribute mixed", func(t *testing.T) *Envelope { return editedLog(t, `[1,2.5]`, `[1,"x"]`) }, "array mixes", 0},
	{"array attribute nested", func(t *testing.T) *Envelope { return editedLog(t, `[1,2.5]`, `[[1]]`) }, "not a primitive", 0},
	{"array attribute with null", func(t *testing.T) *Envelope { return editedLog(t, `[1,2.5]`, `[1,null]`) }, "not a primitive", 0},
	{"array attribute not an array", func(t *testing.T) *Envelope { return editedLog(t, `[1,2.5]`, `{}`) }, "not an array", 0},
	{"attribute unit not a string", func(t *testing.T) *Envelope {
		return editedLog(t, `"unit":"millisecond"`, `"unit":1`)
	}, "unit is not a string", 0},
	{"span v2 attribute bad", func(t *testing.T) *Envelope {
		return editedSpan(t, `"value":"http.server"`, `"value":["a",true]`)
	}, "type string but", 0},

	// Client reports.
	{"client report without discarded_events", func(t *testing.T) *Envelope {
		return editedReport(t, `,"discarded_events":[{"reason":"queue_overflow","category":"error","quantity":23}]`, ``)
	}, "discarded_events is missing", 0},
	{"client report with a long reason", func(t *testing.T) *Envelope {
		return editedReport(t, `"queue_overflow"`, `"`+strings.Repeat("é", 201)+`"`)
	}, "longer than 200", 0},
	{"client report with a negative quantity", func(t *testing.T) *Envelope { return editedReport(t, `23`, `-1`) }, "quantity", 0},
	{"client report with rate_limited_events", func(t *testing.T) *Envelope {
		return editedReport(t, `"discarded_events"`, `"rate_limited_events":[],"discarded_events"`)
	}, "reserved for Relays", 0},
	{"client report with a bad timestamp", func(t *testing.T) *Envelope {
		return editedReport(t, `"2020-02-07T14:16:00Z"`, `"yesterday"`)
	}, "timestamp", 0},

	// Sizes.
	{"event over max_event_size", func(t *testing.T) *Envelope {
		return editedEvent(t, `"platform":"go"`, `"platform":"`+strings.Repeat("x", 1<<20)+`"`)
	}, "envelope too large", 0},
}

func TestValidateRules(t *testing.T) {
	for _, tt := range validateRuleCases {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.env(t), RelayDefaults())
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.want)
			want := max(tt.count, 1)
			var joined interface{ Unwrap() []error }
			require.ErrorAs(t, err, &joined)
			assert.Len(t, joined.Unwrap(), want, "problems found:\n%v", err)
		})
	}
}
