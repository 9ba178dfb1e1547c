package translate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// agreedMappingCases are TestSemanticsAgreedMappings' spans and their op, name, source and status.
var agreedMappingCases = []struct {
	name               string
	kind               ptrace.SpanKind
	attrs              map[string]any
	code               ptrace.StatusCode
	msg                string
	op, source, status string
	txName             string
}{
	{
		name: "db", attrs: map[string]any{"db.system.name": "postgresql", "db.query.text": "SELECT 1"},
		op: "db", source: "task", status: "ok", txName: "SELECT 1",
	},
	{
		name: "db old", attrs: map[string]any{"db.system": "mysql", "db.operation": "SELECT", "db.sql.table": "users"},
		op: "db", source: "task", status: "ok", txName: "SELECT users",
	},
	{
		name: "rpc", kind: ptrace.SpanKindServer, attrs: map[string]any{"rpc.system": "grpc", "rpc.service": "pkg.Svc", "rpc.method": "Get"},
		op: "rpc", source: "route", status: "ok", txName: "pkg.Svc/Get",
	},
	{
		name: "messaging publish", kind: ptrace.SpanKindProducer, attrs: map[string]any{"messaging.system": "kafka", "messaging.operation.type": "send"},
		op: "queue.publish", source: "route", status: "ok", txName: "span",
	},
	{
		name: "messaging process", kind: ptrace.SpanKindConsumer, attrs: map[string]any{"messaging.system": "kafka"},
		op: "queue.process", source: "route", status: "ok", txName: "span",
	},
	{
		name: "faas", kind: ptrace.SpanKindServer, attrs: map[string]any{"faas.trigger": "pubsub"},
		op: "pubsub", source: "route", status: "ok", txName: "span",
	},
	{
		name: "faas timer", attrs: map[string]any{"faas.trigger": "timer"},
		op: "timer", source: "route", status: "ok", txName: "span",
	},
	{
		name: "error without code", code: ptrace.StatusCodeError, msg: "boom",
		op: "default", source: "custom", status: "internal_error", txName: "span",
	},
	{
		name: "error with a Sentry status as message", code: ptrace.StatusCodeError, msg: "not_found",
		op: "default", source: "custom", status: "not_found", txName: "span",
	},
	{
		name: "error with HTTP code", kind: ptrace.SpanKindServer, code: ptrace.StatusCodeError,
		attrs: map[string]any{"http.request.method": "GET", "http.route": "/a", "http.response.status_code": 503},
		op:    "http.server", source: "route", status: "unavailable", txName: "GET /a",
	},
}

// TestSemanticsAgreedMappings checks the mappings where sentry-go's OTel span
// processor (removed in sentry-go 0.47; last in otel/internal/utils/spanattributes.go
// and mapotelstatus.go) and @sentry/opentelemetry agree, and the queue ops we keep.
func TestSemanticsAgreedMappings(t *testing.T) {
	for _, tt := range agreedMappingCases {
		t.Run(tt.name, func(t *testing.T) {
			sp := ptrace.NewSpan()
			sp.SetName("span")
			sp.SetKind(tt.kind)
			sp.Status().SetCode(tt.code)
			sp.Status().SetMessage(tt.msg)
			_ = sp.Attributes().FromRaw(tt.attrs)
			si := semantics(sp)
			assert.Equal(t, tt.op, si.op, "op")
			assert.Equal(t, tt.source, si.source, "source")
			assert.Equal(t, tt.status, si.status, "status")
			assert.Equal(t, tt.txName, si.name.String(), "name")
		})
	}
}

// serverNameCases are TestServerNameFromSpanName's server spans and their transaction names.
var serverNameCases = []struct {
	name, spanName string
	attrs          map[string]any
	txName, source string
}{
	{
		name: "ServeMux pattern", spanName: "GET /users/{id}",
		attrs:  map[string]any{"http.request.method": "GET", "url.path": "/users/42"},
		txName: "GET /users/{id}", source: "route",
	},
	{
		name: "static route", spanName: "POST /orders",
		attrs:  map[string]any{"http.request.method": "POST", "url.path": "/orders"},
		txName: "POST /orders", source: "route",
	},
	{
		name: "http.route wins", spanName: "GET /other",
		attrs:  map[string]any{"http.request.method": "GET", "http.route": "/users/{id}", "url.path": "/users/42"},
		txName: "GET /users/{id}", source: "route",
	},
	{
		name: "method only", spanName: "GET",
		attrs:  map[string]any{"http.request.method": "GET", "url.path": "/users/42"},
		txName: "GET /users/42", source: "url",
	},
	{
		name: "operation name", spanName: "server",
		attrs:  map[string]any{"http.request.method": "GET", "url.path": "/users/42"},
		txName: "GET /users/42", source: "url",
	},
	{
		name: "other method in name", spanName: "POST /users/{id}",
		attrs:  map[string]any{"http.request.method": "GET", "url.path": "/users/42"},
		txName: "GET /users/42", source: "url",
	},
	{
		name: "name with a query", spanName: "GET /users?id=42",
		attrs:  map[string]any{"http.request.method": "GET", "url.path": "/users"},
		txName: "GET /users", source: "url",
	},
	{
		name: "name without slash", spanName: "GET users",
		attrs:  map[string]any{"http.request.method": "GET", "url.path": "/users"},
		txName: "GET /users", source: "url",
	},
	{
		name: "older conventions", spanName: "GET /users/{id}",
		attrs:  map[string]any{"http.method": "GET", "http.target": "/users/42?x=1"},
		txName: "GET /users/{id}", source: "route",
	},
}

// TestServerNameFromSpanName: a server span without http.route whose name is
// "<method> /<route>" (otelhttp v0.72 around a ServeMux names it after the
// pattern) is named by its span name with source route; otherwise the name
// comes from the URL, source url.
func TestServerNameFromSpanName(t *testing.T) {
	for _, tt := range serverNameCases {
		t.Run(tt.name, func(t *testing.T) {
			sp := ptrace.NewSpan()
			sp.SetName(tt.spanName)
			sp.SetKind(ptrace.SpanKindServer)
			_ = sp.Attributes().FromRaw(tt.attrs)
			si := semantics(sp)
			assert.Equal(t, tt.txName, si.name.String(), "name")
			assert.Equal(t, tt.source, si.source, "source")
		})
	}
	client := ptrace.NewSpan()
	client.SetName("GET /users/{id}")
	client.SetKind(ptrace.SpanKindClient)
	_ = client.Attributes().FromRaw(map[string]any{"http.request.method": "GET", "url.full": "http://a/users/42"})
	si := semantics(client)
	assert.Equal(t, "GET http://a/users/42", si.name.String(), "client spans keep the URL name")
	assert.Equal(t, "url", si.source)
}
