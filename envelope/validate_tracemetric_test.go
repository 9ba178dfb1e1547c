package envelope

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metricJSON is a trace metric as sentry-go 0.50 writes it (interfaces.go, Metric).
const metricJSON = `{"timestamp":1796292000.5,"trace_id":"` + testTraceID + `","span_id":"eee19b7ec3c1b174",` +
	`"type":"counter","name":"http.requests","value":3,"unit":"second",` +
	`"attributes":{"sentry.sdk.name":{"type":"string","value":"sentry.go"}}}`

func metricItem(metrics ...string) Item {
	return Item{
		Type: ItemTypeTraceMetric, ContentType: ContentTypeTraceMetricContainer, ItemCount: len(metrics),
		Payload: []byte(`{"items":[` + strings.Join(metrics, ",") + `]}`),
	}
}

// TestValidateTraceMetrics: what Relay's TraceMetric schema and
// trace_metrics/validate.rs refuse, a container at a time.
func TestValidateTraceMetrics(t *testing.T) {
	require.NoError(t, Validate(&Envelope{Items: []Item{metricItem(metricJSON, metricJSON)}}, RelayDefaults()))
	m := func(old, repl string) *Envelope {
		return &Envelope{Items: []Item{metricItem(edit(t, metricJSON, old, repl))}}
	}
	tests := []struct {
		name string
		env  *Envelope
		want string
	}{
		{"unknown type", m(`"counter"`, `"set"`), `type "set" is not one of counter, gauge, distribution`},
		{"value not a number", m(`"value":3`, `"value":"3"`), "value is missing or not a number"},
		{"no trace id", m(`"trace_id":"`+testTraceID+`",`, ""), "trace_id"},
		{"no name", m(`"name":"http.requests",`, ""), "name"},
		{"no timestamp", m(`"timestamp":1796292000.5,`, ""), "timestamp"},
		{"unit not a string", m(`"unit":"second"`, `"unit":1`), "unit is not a string"},
		{"untyped attribute", m(`{"type":"string","value":"sentry.go"}`, `"sentry.go"`), "attributes"},
		{"two containers", &Envelope{Items: []Item{metricItem(metricJSON), metricItem(metricJSON)}}, "2 trace_metric containers"},
		{"wrong content type", &Envelope{Items: []Item{{
			Type: ItemTypeTraceMetric, ContentType: ContentTypeLogContainer, ItemCount: 1,
			Payload: []byte(`{"items":[` + metricJSON + `]}`),
		}}}, "content_type"},
		{"item_count off", &Envelope{Items: []Item{{
			Type: ItemTypeTraceMetric, ContentType: ContentTypeTraceMetricContainer, ItemCount: 2,
			Payload: []byte(`{"items":[` + metricJSON + `]}`),
		}}}, "item_count 2 but 1 items"},
		{"two traces under a DSC", &Envelope{Header: Header{Trace: testDSC()}, Items: []Item{metricItem(metricJSON,
			strings.Replace(metricJSON, testTraceID, "0123456789abcdef0123456789abcdef", 1))}}, "metrics from 2 traces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.env, RelayDefaults())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestTraceMetricSizeLimit: a container whose metrics average over
// max_trace_metric_size is refused whole, as Relay's envelope limits do.
func TestTraceMetricSizeLimit(t *testing.T) {
	l := RelayDefaults()
	l.MaxTraceMetricSize = len(metricJSON) - 1
	err := l.Check(&Envelope{Items: []Item{metricItem(metricJSON)}})
	require.ErrorIs(t, err, ErrTooLarge)
	l.MaxTraceMetricSize = len(metricJSON) + len(`{"items":[]}`)
	require.NoError(t, l.Check(&Envelope{Items: []Item{metricItem(metricJSON)}}))
}
