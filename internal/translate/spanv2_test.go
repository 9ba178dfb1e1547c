package translate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// TestSpanV2ConventionNames checks the attribute names of @sentry/conventions
// 0.33 on span v2 items: the segment name source only on the segment span,
// sentry.kind and sentry.status.message, and each span's own name kept.
func TestSpanV2ConventionNames(t *testing.T) {
	td := serverTrace(ptrace.SpanKindServer, map[string]any{"http.request.method": "GET", "http.route": "/a/{id}"})
	child0 := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	child0.SetKind(ptrace.SpanKindInternal)
	child0.Status().SetMessage("slow")
	r := New(testOptions()).Traces(td, TracesWant{SpanV2: true})
	require.Len(t, r.SpanGroups, 1)
	require.Len(t, r.SpanGroups[0].Items, 2)
	type item struct {
		Name       string
		IsSegment  bool `json:"is_segment"`
		Attributes map[string]struct{ Value any }
	}
	var seg, child item
	require.NoError(t, json.Unmarshal(r.SpanGroups[0].Items[0], &seg))
	require.NoError(t, json.Unmarshal(r.SpanGroups[0].Items[1], &child))
	require.True(t, seg.IsSegment)
	assert.Equal(t, "GET /a/{id}", seg.Name)
	assert.Equal(t, "work", child.Name, "a child keeps its own name")
	for _, it := range []item{seg, child} {
		assert.Equal(t, "GET /a/{id}", it.Attributes["sentry.segment.name"].Value)
		assert.Equal(t, "0101010101010101", it.Attributes["sentry.segment.id"].Value)
		for _, old := range []string{"sentry.span.source", "sentry.source", "otel.kind", "otel.status_message"} {
			assert.NotContains(t, it.Attributes, old)
		}
	}
	assert.Equal(t, "route", seg.Attributes["sentry.segment.name.source"].Value)
	assert.NotContains(t, child.Attributes, "sentry.segment.name.source", "only on segment spans")
	assert.Equal(t, "server", seg.Attributes["sentry.kind"].Value)
	assert.Equal(t, "internal", child.Attributes["sentry.kind"].Value)
	assert.Equal(t, "slow", child.Attributes["sentry.status.message"].Value)
}

// v2Items translates td as span v2 and decodes its items.
func v2Items(t *testing.T, o Options, td ptrace.Traces) []map[string]any {
	t.Helper()
	r := New(o).Traces(td, TracesWant{SpanV2: true})
	require.Zero(t, r.InvalidSpans)
	var out []map[string]any
	for _, g := range r.SpanGroups {
		for _, it := range g.Items {
			m, err := checkSpanV2(it)
			require.NoError(t, err, "%s", it)
			out = append(out, m)
		}
	}
	return out
}

func attrValue(m map[string]any, k string) any {
	a, _ := m["attributes"].(map[string]any)[k].(map[string]any)
	return a["value"]
}

// TestSpanV2ServerURL: an HTTP server span gets url.full built from the parts
// OTel records, as @sentry/node writes it on server segments, with the SDK's
// query filtering; a span's own url.full is kept; without a host there is none.
func TestSpanV2ServerURL(t *testing.T) {
	for _, tt := range []struct {
		name  string
		attrs map[string]any
		pii   bool
		want  any
	}{
		{"parts", map[string]any{"http.request.method": "GET", "url.scheme": "http", "server.address": "127.0.0.1", "server.port": 8080, "url.path": "/users", "url.query": "id=7&token=s3cr3t"}, false, "http://127.0.0.1:8080/users?id=7&token=[Filtered]"},
		{"default port left out", map[string]any{"http.request.method": "GET", "url.scheme": "https", "server.address": "shop.example", "server.port": 443, "url.path": "/"}, false, "https://shop.example/"},
		{"no scheme: http", map[string]any{"http.request.method": "GET", "server.address": "h", "url.path": "/a"}, false, "http://h/a"},
		{"older names, query in the target", map[string]any{"http.method": "POST", "http.scheme": "http", "net.host.name": "h", "net.host.port": 81, "http.target": "/t?session=1&x=2"}, false, "http://h:81/t?session=[Filtered]&x=2"},
		{"Host header", map[string]any{"http.request.method": "GET", "http.request.header.host": []any{"h.example"}, "url.path": "/p"}, false, "http://h.example/p"},
		{"http.url, userinfo dropped", map[string]any{"http.method": "GET", "http.url": "https://u:pw@h/p?token=1#frag"}, false, "https://h/p?token=[Filtered]"},
		{"own url.full kept (filtered)", map[string]any{"http.request.method": "GET", "url.full": "https://h/own?key=1", "server.address": "other", "url.path": "/x"}, false, "https://h/own?key=[Filtered]"},
		{"no host: none", map[string]any{"http.request.method": "GET", "url.path": "/a"}, false, nil},
		{"pii keeps IP-ish names", map[string]any{"http.request.method": "GET", "server.address": "h", "url.path": "/", "url.query": "x-forwarded-for=1"}, true, "http://h/?x-forwarded-for=1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			o.SendDefaultPII = tt.pii
			items := v2Items(t, o, serverTrace(ptrace.SpanKindServer, tt.attrs))
			require.Len(t, items, 2)
			assert.Equal(t, tt.want, attrValue(items[0], "url.full"))
			assert.Nil(t, attrValue(items[1], "url.full"), "only server spans")
		})
	}
	// A client span's url.full is its own; none is built.
	items := v2Items(t, testOptions(), serverTrace(ptrace.SpanKindClient, map[string]any{"http.request.method": "GET", "server.address": "h", "url.path": "/a"}))
	assert.Nil(t, attrValue(items[0], "url.full"))
}

// TestSpanV2ResourceOnSegments: the resource's attributes go on the segment
// span once, not on its children; a child from another resource of the same
// service (another instance) keeps its own, so nothing is lost.
func TestSpanV2ResourceOnSegments(t *testing.T) {
	td := serverTrace(ptrace.SpanKindServer, map[string]any{"http.request.method": "GET"})
	rs := td.ResourceSpans().At(0)
	rs.Resource().Attributes().PutStr("service.name", "shop")
	rs.Resource().Attributes().PutInt("process.pid", 1)
	other := td.ResourceSpans().AppendEmpty()
	other.Resource().Attributes().PutStr("service.name", "shop")
	other.Resource().Attributes().PutInt("process.pid", 2)
	sp := other.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(reqTraceID)
	sp.SetSpanID([8]byte{9})
	sp.SetParentSpanID(reqRootID)
	sp.SetName("elsewhere")
	items := v2Items(t, testOptions(), td)
	require.Len(t, items, 3)
	byName := map[string]map[string]any{}
	for _, it := range items {
		byName[it["name"].(string)] = it
	}
	assert.Equal(t, "1", fmt.Sprint(attrValue(byName["root"], "process.pid")))
	assert.Equal(t, "shop", attrValue(byName["root"], "service.name"))
	assert.Nil(t, attrValue(byName["work"], "process.pid"), "a child of the segment's resource")
	assert.Nil(t, attrValue(byName["work"], "service.name"))
	assert.Equal(t, "2", fmt.Sprint(attrValue(byName["elsewhere"], "process.pid")), "a child of another resource keeps its own")
	assert.Equal(t, false, byName["elsewhere"]["is_segment"])
	for _, it := range items {
		assert.Equal(t, "stream", attrValue(it, "sentry.trace_lifecycle"))
		assert.Equal(t, "root", attrValue(it, "sentry.segment.name"))
	}
}

// TestSpanV2Names: a span keeps its own name ("SELECT users", not the query
// text the transaction form describes it by); an HTTP server span with a
// route is "<method> <route>"; an unnamed span gets its semantic name.
func TestSpanV2Names(t *testing.T) {
	td := serverTrace(ptrace.SpanKindServer, map[string]any{"http.request.method": "GET", "url.path": "/users/7"})
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.At(0).SetName("GET")
	db := spans.At(1)
	db.SetName("SELECT users")
	db.Attributes().PutStr("db.system.name", "postgresql")
	db.Attributes().PutStr("db.query.text", "SELECT id FROM users WHERE id = $1")
	unnamed := spans.AppendEmpty()
	unnamed.SetTraceID(reqTraceID)
	unnamed.SetSpanID([8]byte{7})
	unnamed.SetParentSpanID(reqRootID)
	unnamed.Attributes().PutStr("db.system.name", "redis")
	unnamed.Attributes().PutStr("db.operation.name", "GET")
	unnamed.Attributes().PutStr("db.collection.name", "sessions")
	items := v2Items(t, testOptions(), td)
	require.Len(t, items, 3)
	assert.Equal(t, "GET", items[0]["name"], "no route: the span's own name, as @sentry/node 11 names it")
	assert.Equal(t, "url", attrValue(items[0], "sentry.segment.name.source"))
	assert.Equal(t, "SELECT users", items[1]["name"])
	assert.Equal(t, "SELECT id FROM users WHERE id = $1", attrValue(items[1], "db.query.text"))
	assert.Equal(t, "GET sessions", items[2]["name"])
	for _, it := range items {
		assert.Equal(t, "GET", attrValue(it, "sentry.segment.name"))
	}
}

// TestSpanV2StatusMessage: a failed span without a status message carries
// its Sentry status as sentry.status.message, as @sentry/node's do.
func TestSpanV2StatusMessage(t *testing.T) {
	td := serverTrace(ptrace.SpanKindServer, map[string]any{"http.request.method": "GET", "http.response.status_code": 500})
	items := v2Items(t, testOptions(), td)
	assert.Equal(t, "error", items[0]["status"])
	assert.Equal(t, "internal_error", attrValue(items[0], "sentry.status.message"))
	assert.Nil(t, attrValue(items[1], "sentry.status.message"), "ok spans have none")
}

// TestSpanV2ContainerFraming: each group's Container is its items framed as
// one span v2 container, byte for byte what envelope.AppendSpanContainer
// writes (the exporter sends it as is), also when items in the middle of a
// trace are too large at every level and left out (counted invalid).
func TestSpanV2ContainerFraming(t *testing.T) {
	invalid := 0
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 11))
		n := 1 + rng.IntN(120)
		td, _ := randomTraces(rng, n)
		o := testOptions()
		if seed%2 == 1 {
			o.MaxItemBytes = 700 + rng.IntN(800) // some items fit at no level
		}
		r := New(o).Traces(td, TracesWant{SpanV2: true, Transactions: seed%3 == 0})
		items := 0
		for _, g := range r.SpanGroups {
			require.Equal(t, string(envelope.AppendSpanContainer(nil, g.Items)), string(g.Container), "seed %d", seed)
			var c struct {
				Version int
				Items   []json.RawMessage
			}
			require.NoError(t, json.Unmarshal(g.Container, &c), "seed %d", seed)
			assert.Equal(t, 2, c.Version)
			assert.Len(t, c.Items, len(g.Items))
			items += len(g.Items)
		}
		assert.Equal(t, n, items+r.InvalidSpans, "seed %d", seed)
		invalid += r.InvalidSpans
		if seed%2 == 0 {
			assert.Zero(t, r.InvalidSpans, "seed %d", seed)
		}
	}
	require.Positive(t, invalid, "some items must be too large at every level")
}
