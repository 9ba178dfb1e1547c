package encode

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/account/accounttest"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/internal/traceindex"
)

const (
	testProject   = "42"
	testPublicKey = "0123456789abcdef0123456789abcdef"
	testTraceID   = "4bf92f3577b34da6a3ce929d0e0e4736"
	testEventID   = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
)

// fixture is one project's encoder with real telemetry and client reports.
type fixture struct {
	tel     *accounttest.Telemetry
	reports *account.ClientReports
	index   *traceindex.Index
	enc     *Encoder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	tel := accounttest.New(t)
	reports := &account.ClientReports{}
	index := traceindex.New()
	acct := account.NewAccountant(tel.Builder, testProject, reports)
	return &fixture{tel: tel, reports: reports, index: index, enc: New(index, testPublicKey, acct)}
}

// dropped returns the dropped_items points as "category/reason" → value;
// empty when the metric was never recorded.
func (f *fixture) dropped(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for attrs, v := range f.tel.Sums(t, "otelcol_exporter_sentry_dropped_items") {
		kv := map[string]string{}
		for pair := range strings.SplitSeq(attrs, ",") {
			k, val, _ := strings.Cut(pair, "=")
			kv[k] = val
		}
		assert.Equal(t, testProject, kv["project"])
		out[kv["category"]+"/"+kv["reason"]] += v
	}
	return out
}

// writeAndParse writes the envelope as the sender would and reads it back
// with the strict reader, then validates it against Relay's defaults.
func writeAndParse(t *testing.T, env *envelope.Envelope) *envelope.Envelope {
	t.Helper()
	raw := env.AppendTo(nil)
	parsed, err := envelope.Parse(raw)
	require.NoError(t, err, "envelope does not parse:\n%.2000s", raw)
	require.NoError(t, envelope.Validate(parsed, envelope.RelayDefaults()), "envelope does not validate:\n%.2000s", raw)
	return parsed
}

// containerItems decodes a container payload's items as raw JSON.
func containerItems(t *testing.T, payload []byte) []json.RawMessage {
	t.Helper()
	var c struct {
		Items []json.RawMessage `json:"items"`
	}
	require.NoError(t, json.Unmarshal(payload, &c))
	return c.Items
}

func assertSDK(t *testing.T, h envelope.Header) {
	t.Helper()
	require.NotNil(t, h.SDK)
	assert.Equal(t, sdkinfo.Name, h.SDK.Name)
	assert.Equal(t, sdkinfo.Version, h.SDK.Version)
}

// logItem is a valid log JSON of exactly size bytes (size >= 120).
func logItem(i, size int) []byte {
	head := fmt.Sprintf(`{"timestamp":1700000000.5,"trace_id":"%032x","level":"info","body":"%d-`, i+1, i)
	tail := `"}`
	pad := size - len(head) - len(tail)
	if pad < 0 {
		panic("log item too small")
	}
	return []byte(head + strings.Repeat("x", pad) + tail)
}

func logItems(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = logItem(i, size)
	}
	return out
}

// spanItem is a valid span v2 JSON of trace testTraceID, of at least size bytes.
func spanItem(i, size int) []byte {
	head := fmt.Sprintf(`{"trace_id":%q,"span_id":"%016x","name":"op %d","status":"ok","is_segment":false,"start_timestamp":1700000000.0,"end_timestamp":1700000001.0,"attributes":{"pad":{"type":"string","value":"`, testTraceID, i+1, i)
	tail := `"}}}`
	pad := max(size-len(head)-len(tail), 0)
	return []byte(head + strings.Repeat("y", pad) + tail)
}

func spanItems(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = spanItem(i, size)
	}
	return out
}

func totalLen(items [][]byte) int64 {
	var n int64
	for _, it := range items {
		n += int64(len(it))
	}
	return n
}
