package translate

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	sentry "github.com/getsentry/sentry-go"
	"github.com/getsentry/sentry-go/attribute"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

var (
	logTraceID = [16]byte{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}
	logSpanID  = [8]byte{0xb0, 0xe6, 0xf1, 0x5b, 0x45, 0xc3, 0x6b, 0x12}
	webLogTime = time.Date(2026, 7, 1, 12, 0, 0, 123456789, time.UTC)
)

// webAppLogs is one log record of a small web app as the OTel Go SDK and its
// logs bridge send it: the resource of resource.Default() plus WithHost,
// WithOS, WithProcess (the whole command line included) and the service, and
// a record with a body and three attributes inside a server span.
func webAppLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	_ = rl.Resource().Attributes().FromRaw(map[string]any{
		"service.name":                "checkout",
		"service.version":             "1.4.2",
		"deployment.environment.name": "production",
		"host.name":                   "checkout-7d9f8c-x2x9z",
		"host.arch":                   "amd64",
		"os.type":                     "linux",
		"os.description":              "Debian GNU/Linux 12 (bookworm) (Linux checkout-7d9f8c-x2x9z 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64)",
		"process.pid":                 int64(1),
		"process.executable.name":     "checkout",
		"process.executable.path":     "/app/checkout",
		"process.command_args":        []any{"/app/checkout", "--listen=:8080", "--db=postgres://checkout:s3cr3t@db:5432/checkout"},
		"process.owner":               "app",
		"process.runtime.name":        "go",
		"process.runtime.version":     "go1.26.0",
		"process.runtime.description": "go version go1.26.0 linux/amd64",
		"telemetry.sdk.name":          "opentelemetry",
		"telemetry.sdk.language":      "go",
		"telemetry.sdk.version":       "1.40.0",
	})
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("checkout/orders")
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(webLogTime))
	lr.SetTraceID(logTraceID)
	lr.SetSpanID(logSpanID)
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("INFO")
	lr.Body().SetStr("order placed")
	_ = lr.Attributes().FromRaw(map[string]any{"order.id": "o-12345", "order.items": int64(3), "payment.method": "card"})
	return ld
}

// sentryGoLog is the same record as sentry-go v0.50.0 writes it
// (sentry.NewLogger: the default sentry.* attributes of log.go plus the
// entry's own), marshaled as in its log envelope item.
func sentryGoLog(t *testing.T) []byte {
	log := sentry.Log{
		Timestamp: webLogTime, TraceID: logTraceID, SpanID: logSpanID,
		Level: sentry.LogLevelInfo, Severity: 9, Body: "order placed",
		Attributes: map[string]attribute.Value{
			"sentry.release":        attribute.StringValue("1.4.2"),
			"sentry.environment":    attribute.StringValue("production"),
			"sentry.server.address": attribute.StringValue("checkout-7d9f8c-x2x9z"),
			"sentry.sdk.name":       attribute.StringValue("sentry.go"),
			"sentry.sdk.version":    attribute.StringValue(sentry.SDKVersion),
			"order.id":              attribute.StringValue("o-12345"),
			"order.items":           attribute.Int64Value(3),
			"payment.method":        attribute.StringValue("card"),
		},
	}
	b, err := json.Marshal(&log)
	require.NoError(t, err)
	return b
}

// TestLogBytesLikeSDK measures bytes per log record against the record
// sentry-go writes for the same log: the target is at most 1.5 times.
func TestLogBytesLikeSDK(t *testing.T) {
	sdk := sentryGoLog(t)
	o := testOptions()
	o.SDKName = "sentry.otelcol.exporter"
	r := New(o).Logs(webAppLogs(), LogsWant{Logs: true})
	require.Len(t, r.Logs, 1)
	ours := r.Logs[0]
	ratio := float64(len(ours)) / float64(len(sdk))
	t.Logf("bytes per record: ours %d, sentry-go %d, ratio %.2f", len(ours), len(sdk), ratio)
	assert.LessOrEqual(t, ratio, 1.5, "ours:\n%s\nsentry-go:\n%s", ours, sdk)

	all := o
	all.LogResourceAttributes = []string{"*"}
	r = New(all).Logs(webAppLogs(), LogsWant{Logs: true})
	t.Logf("with every resource attribute (the old behavior): %d bytes, ratio %.2f", len(r.Logs[0]), float64(len(r.Logs[0]))/float64(len(sdk)))
}

func logAttrKeys(t *testing.T, item []byte) map[string]any {
	t.Helper()
	var v struct{ Attributes map[string]any }
	require.NoError(t, json.Unmarshal(item, &v), "%s", item)
	return v.Attributes
}

func TestLogResourceAttributes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		sel       []string
		has, hasn []string
	}{
		{
			"default", nil,
			[]string{"service.name", "sentry.environment", "sentry.release", "otel.scope.name", "server.address"},
			[]string{"host.name", "process.command_args", "process.owner", "process.executable.path", "os.description", "telemetry.sdk.name", "service.version", "deployment.environment.name"},
		},
		{
			"none",
			[]string{},
			[]string{"sentry.environment", "sentry.release", "order.id", "server.address"},
			[]string{"service.name", "host.name", "process.command_args"},
		},
		{
			"chosen",
			[]string{"process.runtime.name", "not.there"},
			[]string{"process.runtime.name"},
			[]string{"service.name", "process.command_args"},
		},
		{
			"all",
			[]string{"*"},
			[]string{"service.name", "process.command_args", "process.owner", "os.type"},
			nil,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			o.LogResourceAttributes = tt.sel
			r := New(o).Logs(webAppLogs(), LogsWant{Logs: true})
			require.Len(t, r.Logs, 1)
			attrs := logAttrKeys(t, r.Logs[0])
			for _, k := range tt.has {
				assert.Contains(t, attrs, k)
			}
			for _, k := range tt.hasn {
				assert.NotContains(t, attrs, k)
			}
		})
	}
}

// TestLogSkippedBytesFollowSelection checks that the log_byte estimate of
// skipped records counts only the resource attributes that would be sent.
func TestLogSkippedBytesFollowSelection(t *testing.T) {
	o := testOptions()
	sent := New(o).Logs(webAppLogs(), LogsWant{Logs: true})
	skipped := New(o).Logs(webAppLogs(), LogsWant{})
	require.Equal(t, 1, skipped.SkippedLogs)
	assert.InDelta(t, len(sent.Logs[0]), skipped.SkippedLogBytes, float64(len(sent.Logs[0]))/2)
}

// TestLogServerAddressOnce: the host is server.address, as @sentry/node and
// Sentry's logs docs write it; a record's own server.address (an HTTP
// client's peer) wins, the host then going as host.name, and each key is
// written once, even when the resource carries it too.
func TestLogServerAddressOnce(t *testing.T) {
	ld := webAppLogs()
	rl := ld.ResourceLogs().At(0)
	rl.Resource().Attributes().PutStr("server.address", "10.0.0.7")
	records := rl.ScopeLogs().At(0).LogRecords()
	peer := records.AppendEmpty()
	records.At(0).CopyTo(peer)
	peer.Attributes().PutStr("server.address", "payments.internal")
	o := testOptions()
	o.LogResourceAttributes = []string{"*"}
	r := New(o).Logs(ld, LogsWant{Logs: true})
	require.Len(t, r.Logs, 2)
	for i, want := range []string{"checkout-7d9f8c-x2x9z", "payments.internal"} {
		assert.Equal(t, 1, bytes.Count(r.Logs[i], []byte(`"server.address"`)), "written once: %s", r.Logs[i])
		assert.Equal(t, map[string]any{"type": "string", "value": want}, logAttrKeys(t, r.Logs[i])["server.address"])
		assert.NotContains(t, logAttrKeys(t, r.Logs[i]), "sentry.server.address")
		assert.Equal(t, 1, bytes.Count(r.Logs[i], []byte(`"host.name"`)), "the host once, under its own key: %s", r.Logs[i])
	}
	o.LogResourceAttributes = nil // the defaults: host.name not among them
	r = New(o).Logs(ld, LogsWant{Logs: true})
	assert.NotContains(t, logAttrKeys(t, r.Logs[0]), "host.name", "the host is server.address")
	assert.Equal(t, map[string]any{"type": "string", "value": "checkout-7d9f8c-x2x9z"}, logAttrKeys(t, r.Logs[1])["host.name"],
		"a record with its own server.address still names its host")
}
