package envelope

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelayDefaults(t *testing.T) {
	l := RelayDefaults()
	assert.Equal(t, 200<<20, l.MaxEnvelopeSize, "max_envelope_size")
	assert.Equal(t, 1<<20, l.MaxEventSize, "max_event_size")
	assert.Equal(t, 2<<20, l.MaxLogSize, "max_log_size")
	assert.Equal(t, 10<<20, l.MaxSpanSize, "max_span_size")
	assert.Equal(t, 1<<20, l.MaxTraceMetricSize, "max_trace_metric_size")
	assert.Equal(t, 12<<20, l.MaxContainerSize, "max_container_size")
	assert.Equal(t, 25, l.MaxStandaloneSpanCount, "max_standalone_span_count")
	assert.Equal(t, 100<<10, l.MaxClientReportsSize, "max_client_reports_size")
	assert.Equal(t, 100, l.MaxClientReportsCount, "max_client_reports_count")
}

// TestCheck mirrors relay-server/src/utils/sizes.rs with small limits.
func TestCheck(t *testing.T) {
	small := Limits{
		MaxEnvelopeSize: 1000, MaxEventSize: 100, MaxLogSize: 10, MaxSpanSize: 10, MaxTraceMetricSize: 10, MaxContainerSize: 200,
		MaxStandaloneSpanCount: 2, MaxClientReportsSize: 50, MaxClientReportsCount: 2,
	}
	p := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	event := func(n int) Item { return Item{Type: ItemTypeEvent, Payload: p(n)} }
	logs := func(count, n int) Item {
		return Item{Type: ItemTypeLog, ContentType: ContentTypeLogContainer, ItemCount: count, Payload: p(n)}
	}
	spans := func(count, n int) Item {
		return Item{Type: ItemTypeSpan, ContentType: ContentTypeSpanContainer, ItemCount: count, Payload: p(n)}
	}
	metrics := func(count, n int) Item {
		return Item{Type: ItemTypeTraceMetric, ContentType: ContentTypeTraceMetricContainer, ItemCount: count, Payload: p(n)}
	}
	report := func(n int) Item { return Item{Type: ItemTypeClientReport, Payload: p(n)} }
	tests := []struct {
		name  string
		items []Item
		ok    bool
	}{
		{"empty", nil, true},
		{"event at limit", []Item{event(100)}, true},
		{"event over limit", []Item{event(101)}, false},
		{"transaction over limit", []Item{{Type: ItemTypeTransaction, Payload: p(101)}}, false},
		{"two events", []Item{event(1), event(1)}, false},
		{"event and transaction", []Item{event(1), {Type: ItemTypeTransaction, Payload: p(1)}}, false},
		{"log average at limit", []Item{logs(10, 109)}, true}, // 109/10 = 10
		{"log average over limit", []Item{logs(10, 110)}, false},
		{"log container over container size", []Item{logs(50, 201)}, false},
		{"log without item_count counts as one", []Item{{Type: ItemTypeLog, ContentType: ContentTypeLogContainer, Payload: p(11)}}, false},
		{"two log containers", []Item{logs(1, 5), logs(1, 5)}, false},
		{"span average over limit", []Item{spans(2, 22)}, false},
		{"two span containers", []Item{spans(1, 5), spans(1, 5)}, false},
		{"legacy spans under count", []Item{{Type: ItemTypeSpan, Payload: p(5)}, {Type: ItemTypeSpan, Payload: p(5)}}, true},
		{"legacy spans over count", []Item{{Type: ItemTypeSpan, Payload: p(5)}, {Type: ItemTypeSpan, Payload: p(5)}, {Type: ItemTypeSpan, Payload: p(5)}}, false},
		{"trace_metric average at limit", []Item{metrics(10, 109)}, true},
		{"trace_metric average over limit", []Item{metrics(10, 110)}, false},
		{"trace_metric container over container size", []Item{metrics(50, 201)}, false},
		{"two trace_metric containers", []Item{metrics(1, 5), metrics(1, 5)}, false},
		{"client reports within limits", []Item{report(25), report(25)}, true},
		{"client reports over count", []Item{report(1), report(1), report(1)}, false},
		{"client reports over total size", []Item{report(30), report(30)}, false},
		{"unknown items are not sized", []Item{{Type: "attachment", Payload: p(500)}}, true},
		{"envelope over limit", []Item{{Type: "attachment", Payload: p(1000)}}, false},
		{"log, span, event and report together", []Item{event(50), logs(5, 50), spans(5, 50), metrics(5, 50), report(10)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := small.Check(&Envelope{Items: tt.items})
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrTooLarge)
			}
		})
	}
	assert.NoError(t, RelayDefaults().Check(benchLogEnvelope()))
}
