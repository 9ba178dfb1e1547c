package translate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// secretResource is a resource as the OTel Go SDK's process detector writes
// it, plus an environment variable and a key named like a credential.
var secretResource = map[string]any{
	"service.name":                         "checkout",
	"host.name":                            "vm",
	"process.runtime.name":                 "go",
	"process.pid":                          int64(7),
	"process.executable.path":              "/app/checkout",
	"process.command_args":                 []any{"/app/checkout", "--db=postgres://u:s3cr3t@db/x"},
	"process.command_line":                 "/app/checkout --db=postgres://u:s3cr3t@db/x",
	"process.owner":                        "app",
	"process.environment_variable.DB_PASS": "s3cr3t",
	"vendor.api_token":                     "t-123",
}

var secretKeys = []string{
	"process.command_args", "process.command_line", "process.owner",
	"process.environment_variable.DB_PASS", "vendor.api_token",
}

var plainKeys = []string{"service.name", "host.name", "process.runtime.name", "process.pid", "process.executable.path"}

// TestResourceSecretsLeftOut: without send_default_pii the secrets-prone
// resource attributes are not in contexts.otel.resource (transactions and
// errors) nor in span v2 attributes; with it they are.
func TestResourceSecretsLeftOut(t *testing.T) {
	for _, pii := range []bool{false, true} {
		o := testOptions()
		o.SendDefaultPII = pii
		td := serverTrace(ptrace.SpanKindServer, map[string]any{"http.request.method": "GET", "http.route": "/a"})
		require.NoError(t, td.ResourceSpans().At(0).Resource().Attributes().FromRaw(secretResource))
		r := New(o).Traces(td, TracesWant{Transactions: true, Errors: true})
		require.Len(t, r.Transactions, 1)
		require.Len(t, r.Errors, 1)
		_, err := checkTransaction(r.Transactions[0].Payload)
		require.NoError(t, err)
		for what, p := range map[string][]byte{"transaction": r.Transactions[0].Payload, "error": r.Errors[0].Payload} {
			var doc struct {
				Contexts struct {
					OTel struct{ Resource map[string]any } `json:"otel"`
				}
			}
			require.NoError(t, json.Unmarshal(p, &doc), "%s", p)
			res := doc.Contexts.OTel.Resource
			for _, k := range plainKeys {
				assert.Contains(t, res, k, "%s, pii %v", what, pii)
			}
			for _, k := range secretKeys {
				if pii {
					assert.Contains(t, res, k, "%s keeps %s with send_default_pii", what, k)
				} else {
					assert.NotContains(t, res, k, "%s", what)
				}
			}
			assert.Equal(t, pii, strings.Contains(string(p), "s3cr3t"), "%s, pii %v: the secret value", what, pii)
		}

		r = New(o).Traces(td, TracesWant{SpanV2: true})
		require.Len(t, r.SpanGroups, 1)
		for i, item := range r.SpanGroups[0].Items {
			attrs := logAttrKeys(t, item)
			for _, k := range plainKeys {
				if i == 0 { // the segment span carries the resource once
					assert.Contains(t, attrs, k, "span v2 segment, pii %v", pii)
				} else {
					assert.NotContains(t, attrs, k, "span v2 child, pii %v", pii)
				}
			}
			for _, k := range secretKeys {
				if pii && i == 0 {
					assert.Contains(t, attrs, k, "span v2 keeps %s with send_default_pii", k)
				} else {
					assert.NotContains(t, attrs, k, "span v2")
				}
			}
		}
	}
}

// TestResourceSecretsInLogsBySelection: log records carry what
// logs::resource_attributes selects; a "*" selection is an explicit choice and
// sends the secrets-prone attributes too.
func TestResourceSecretsInLogsBySelection(t *testing.T) {
	for _, sel := range [][]string{nil, {"*"}, {"process.owner"}} {
		o := testOptions()
		o.LogResourceAttributes = sel
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		require.NoError(t, rl.Resource().Attributes().FromRaw(secretResource))
		rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("hello")
		r := New(o).Logs(ld, LogsWant{Logs: true})
		require.Len(t, r.Logs, 1)
		attrs := logAttrKeys(t, r.Logs[0])
		switch {
		case sel == nil:
			for _, k := range secretKeys {
				assert.NotContains(t, attrs, k, "default selection")
			}
		case sel[0] == "*":
			for _, k := range secretKeys {
				assert.Contains(t, attrs, k, "all selected")
			}
		default:
			assert.Contains(t, attrs, "process.owner", "selected by name")
			assert.NotContains(t, attrs, "process.command_line")
		}
	}
}
