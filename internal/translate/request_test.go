package translate

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var (
	reqTraceID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	reqRootID  = [8]byte{1, 1, 1, 1, 1, 1, 1, 1}
	reqChildID = [8]byte{2, 2, 2, 2, 2, 2, 2, 2}
)

// serverTrace is one server span with attrs, a child span with an exception
// event, so the error event is raised inside the server segment.
func serverTrace(kind ptrace.SpanKind, attrs map[string]any) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(reqTraceID)
	root.SetSpanID(reqRootID)
	root.SetName("root")
	root.SetKind(kind)
	root.SetStartTimestamp(1_700_000_000_000_000_000)
	root.SetEndTimestamp(1_700_000_001_000_000_000)
	_ = root.Attributes().FromRaw(attrs)
	child := ss.Spans().AppendEmpty()
	child.SetTraceID(reqTraceID)
	child.SetSpanID(reqChildID)
	child.SetParentSpanID(reqRootID)
	child.SetName("work")
	child.SetStartTimestamp(1_700_000_000_100_000_000)
	child.SetEndTimestamp(1_700_000_000_200_000_000)
	ev := child.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.type", "Boom")
	ev.Attributes().PutStr("exception.message", "it broke")
	return td
}

type reqDoc struct {
	Request  map[string]any
	Contexts struct {
		Response map[string]any
		Trace    struct{ Data map[string]any }
	}
}

func decodeDoc(t *testing.T, p []byte) reqDoc {
	t.Helper()
	var d reqDoc
	require.NoError(t, json.Unmarshal(p, &d), "%s", p)
	return d
}

func translateServer(t *testing.T, pii bool, kind ptrace.SpanKind, attrs map[string]any) (Transaction, reqDoc, reqDoc) {
	t.Helper()
	o := testOptions()
	o.SendDefaultPII = pii
	r := New(o).Traces(serverTrace(kind, attrs), TracesWant{Transactions: true, Errors: true})
	require.Len(t, r.Transactions, 1)
	require.Len(t, r.Errors, 1)
	tx := r.Transactions[0]
	_, err := checkTransaction(tx.Payload)
	require.NoError(t, err, "%s", tx.Payload)
	return tx, decodeDoc(t, tx.Payload), decodeDoc(t, r.Errors[0].Payload)
}

func TestRequestCurrentConventions(t *testing.T) {
	tx, doc, errDoc := translateServer(t, false, ptrace.SpanKindServer, map[string]any{
		"http.request.method":               "POST",
		"url.scheme":                        "https",
		"server.address":                    "shop.example.com",
		"server.port":                       int64(443),
		"url.path":                          "/cart/items",
		"url.query":                         "id=7&session_id=abc&ref=home",
		"http.route":                        "/cart/items",
		"user_agent.original":               "Mozilla/5.0",
		"http.response.status_code":         int64(201),
		"http.request.header.content-type":  []any{"application/json"},
		"http.request.header.accept":        []any{"a/b", "c/d"},
		"http.request.header.x-api-key":     []any{"k-123"},
		"http.request.header.cookie":        []any{"session=s3cr3t; theme=dark"},
		"http.request.header.x-real-ip":     []any{"198.51.100.9"},
		"http.response.header.set-cookie":   []any{"session=new"},
		"http.response.header.content-type": []any{"text/html"},
		"client.address":                    "198.51.100.9",
		"enduser.id":                        "u-42",
	})
	want := map[string]any{
		"method":       "POST",
		"url":          "https://shop.example.com/cart/items",
		"query_string": "id=7&session_id=[Filtered]&ref=home",
		"headers": map[string]any{
			"Content-Type": "application/json",
			"Accept":       "a/b,c/d",
			"X-Api-Key":    "[Filtered]",
			"X-Real-Ip":    "[Filtered]",
			"Host":         "shop.example.com",
			"User-Agent":   "Mozilla/5.0",
		},
	}
	assert.Equal(t, want, doc.Request, "transaction request")
	assert.Equal(t, map[string]any{"status_code": float64(201)}, doc.Contexts.Response)
	assert.Equal(t, want, errDoc.Request, "error event raised inside the server segment")
	assert.Equal(t, map[string]any{"status_code": float64(201)}, errDoc.Contexts.Response)

	// Exported for events raised from logs in the same segment.
	var exported map[string]any
	require.NoError(t, json.Unmarshal(tx.Request, &exported))
	assert.Equal(t, want, exported)
	assert.Equal(t, 201, tx.StatusCode)
	assert.Equal(t, hex.EncodeToString(reqRootID[:]), tx.SegmentSpanID)

	// The span's own attributes do not carry what the request filters.
	data := doc.Contexts.Trace.Data
	for _, k := range []string{"http.request.header.cookie", "http.response.header.set-cookie", "client.address", "enduser.id"} {
		assert.NotContains(t, data, k)
	}
	assert.Equal(t, "[Filtered]", data["http.request.header.x-api-key"])
	assert.Equal(t, "id=7&session_id=[Filtered]&ref=home", data["url.query"])
	assert.Equal(t, []any{"text/html"}, data["http.response.header.content-type"])
}

func TestRequestOlderConventions(t *testing.T) {
	tx, doc, _ := translateServer(t, false, ptrace.SpanKindServer, map[string]any{
		"http.method":      "GET",
		"http.scheme":      "http",
		"http.host":        "legacy.example.com:8080",
		"http.target":      "/search?q=boots&token=t0k#frag",
		"http.user_agent":  "curl/8.0",
		"http.status_code": int64(404),
		"net.peer.ip":      "192.0.2.1",
	})
	assert.Equal(t, map[string]any{
		"method":       "GET",
		"url":          "http://legacy.example.com:8080/search",
		"query_string": "q=boots&token=[Filtered]",
		"headers":      map[string]any{"Host": "legacy.example.com:8080", "User-Agent": "curl/8.0"},
	}, doc.Request)
	assert.Equal(t, 404, tx.StatusCode)
	assert.Equal(t, "/search?q=boots&token=[Filtered]#frag", doc.Contexts.Trace.Data["http.target"])
	assert.NotContains(t, doc.Contexts.Trace.Data, "net.peer.ip")
}

func TestRequestFullURLAndPort(t *testing.T) {
	_, doc, _ := translateServer(t, false, ptrace.SpanKindServer, map[string]any{
		"http.request.method": "GET",
		"url.full":            "https://u:p@api.example.com:8443/v1/x?password=hunter2&a=1",
	})
	assert.Equal(t, "https://api.example.com:8443/v1/x", doc.Request["url"])
	assert.Equal(t, "password=[Filtered]&a=1", doc.Request["query_string"])
	assert.Equal(t, "https://api.example.com:8443/v1/x?password=[Filtered]&a=1", doc.Contexts.Trace.Data["url.full"])
	assert.Nil(t, doc.Contexts.Response, "no status code, no response context")
}

func TestRequestSendDefaultPII(t *testing.T) {
	_, doc, _ := translateServer(t, true, ptrace.SpanKindServer, map[string]any{
		"http.request.method":                 "GET",
		"url.path":                            "/",
		"server.address":                      "h",
		"http.request.header.cookie":          []any{"session=s3cr3t; theme=dark"},
		"http.request.header.x-forwarded-for": []any{"198.51.100.9"},
		"http.request.header.authorization":   []any{"Bearer x"},
		"client.address":                      "198.51.100.9",
		"client.port":                         int64(50123),
		"enduser.id":                          "u-42",
	})
	assert.Equal(t, map[string]any{
		"method":  "GET",
		"url":     "http://h/",
		"cookies": "session=[Filtered]; theme=dark",
		"headers": map[string]any{
			"Cookie":          "session=[Filtered]; theme=dark",
			"X-Forwarded-For": "198.51.100.9",
			"Authorization":   "[Filtered]", // as in sentry-go: sensitive names are filtered even with PII
			"Host":            "h",
		},
		"env": map[string]any{"REMOTE_ADDR": "198.51.100.9", "REMOTE_PORT": "50123"},
	}, doc.Request)
	data := doc.Contexts.Trace.Data
	assert.Equal(t, "198.51.100.9", data["client.address"])
	assert.Equal(t, "u-42", data["enduser.id"])
	assert.Equal(t, "session=[Filtered]; theme=dark", data["http.request.header.cookie"])
}

func TestNoRequestOutsideServerSpans(t *testing.T) {
	tx, doc, errDoc := translateServer(t, false, ptrace.SpanKindClient, map[string]any{
		"http.request.method": "GET", "url.full": "https://x.example.com/", "http.response.status_code": int64(200),
	})
	assert.Nil(t, doc.Request)
	assert.Nil(t, errDoc.Request)
	assert.Nil(t, doc.Contexts.Response)
	assert.Nil(t, tx.Request)
	assert.Zero(t, tx.StatusCode)
}

func TestScrubSpanAttributes(t *testing.T) {
	for _, tt := range []struct {
		k, v, want string
		pii        bool
	}{
		{"url.query", "next=/home&token=t", "next=/home&token=[Filtered]", false},
		{"url.query", "a=1", "a=1", false},
		{"http.target", "/p?apikey=1#f", "/p?apikey=[Filtered]#f", false},
		{"http.target", "/p/token=x", "/p/token=x", false}, // no query
		{"url.full", "https://u:p@h/x", "https://h/x", false},
		{"http.request.header.x-csrf-token", "abc", "[Filtered]", true},
		{"http.request.header.x-forwarded-for", "1.2.3.4", "[Filtered]", false},
		{"http.request.header.x-forwarded-for", "1.2.3.4", "1.2.3.4", true},
		{"http.request.header.cookie", "sid=1; a=b", "", false}, // left out
		{"http.request.header.cookie", "sid=1; a=b", "sid=[Filtered]; a=b", true},
		{"user.email", "a@b.c", "", false},
		{"user.email", "a@b.c", "a@b.c", true},
		{"http.route", "/a", "/a", false},
	} {
		o := testOptions()
		o.SendDefaultPII = tt.pii
		td := serverTrace(ptrace.SpanKindInternal, map[string]any{tt.k: tt.v})
		r := New(o).Traces(td, TracesWant{Transactions: true})
		require.Len(t, r.Transactions, 1)
		got, ok := decodeDoc(t, r.Transactions[0].Payload).Contexts.Trace.Data[tt.k]
		if tt.want == "" {
			assert.False(t, ok, "%s (pii %v) left out", tt.k, tt.pii)
			continue
		}
		assert.Equal(t, tt.want, got, "%s=%q (pii %v)", tt.k, tt.v, tt.pii)
	}
}

func TestRequestURLNeedsAHost(t *testing.T) {
	_, doc, _ := translateServer(t, false, ptrace.SpanKindServer, map[string]any{"http.request.method": "GET", "url.path": "/a", "url.query": "b=1"})
	assert.NotContains(t, doc.Request, "url", "no host: no url, as @sentry/core")
	assert.Equal(t, "b=1", doc.Request["query_string"])
	_, doc, _ = translateServer(t, false, ptrace.SpanKindServer, map[string]any{
		"http.request.method": "GET", "url.path": "/a", "http.request.header.host": []any{"h.example:8080"},
	})
	assert.Equal(t, "http://h.example:8080/a", doc.Request["url"], "the Host header names the host")
	assert.Equal(t, map[string]any{"Host": "h.example:8080"}, doc.Request["headers"])
}

// TestScrubKeysFlagTheSpan checks that every key scrubFor may change marks the
// span in semAttrs.scan, which is what turns scrubbing on for its attributes.
func TestScrubKeysFlagTheSpan(t *testing.T) {
	for _, k := range []string{
		"url.query", "url.full", "http.url", "http.target",
		"client.address", "http.client_ip", "net.sock.peer.addr", "net.peer.ip",
		"enduser.id", "user.id", "user.email", "user.name", "user.ip_address",
		"http.request.header.cookie", "http.request.header.authorization", "http.response.header.set-cookie",
		"network.peer.address", "network.peer.port",
	} {
		for _, pii := range []bool{false, true} {
			if k == "url.full" || k == "http.url" || k == "http.target" || k == "url.query" || !pii {
				assert.NotEqual(t, scrubKeep, scrubFor(k, pii, true), "%s is scrubbed (pii %v)", k, pii)
			}
		}
		m := ptrace.NewSpan().Attributes()
		m.PutStr(k, "v")
		var a semAttrs
		a.scan(m)
		assert.True(t, a.scrub, "%s flags the span", k)
	}
	m := ptrace.NewSpan().Attributes()
	m.PutStr("http.request.method", "GET")
	m.PutStr("db.query.text", "SELECT 1")
	var a semAttrs
	a.scan(m)
	assert.False(t, a.scrub)
}

// TestPeerAddressByKind: on a server span network.peer.address/port are the
// client's (otelhttp records them beside client.address), so they stay out
// without send_default_pii; on a client span they are the server called and
// are kept, as the SDKs keep server.address on outgoing spans.
func TestPeerAddressByKind(t *testing.T) {
	tests := []struct {
		name string
		kind ptrace.SpanKind
		pii  bool
		kept bool
	}{
		{"server span", ptrace.SpanKindServer, false, false},
		{"server span with send_default_pii", ptrace.SpanKindServer, true, true},
		{"client span", ptrace.SpanKindClient, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, doc, _ := translateServer(t, tt.pii, tt.kind, map[string]any{
				"http.request.method": "GET", "url.path": "/a", "url.full": "http://h/a", "server.address": "h",
				"network.peer.address": "198.51.100.9", "network.peer.port": int64(50123),
			})
			data := doc.Contexts.Trace.Data
			if tt.kept {
				assert.Equal(t, "198.51.100.9", data["network.peer.address"])
				assert.Equal(t, float64(50123), data["network.peer.port"])
			} else {
				assert.NotContains(t, data, "network.peer.address")
				assert.NotContains(t, data, "network.peer.port")
			}
			assert.Equal(t, "h", data["server.address"])
		})
	}
}

// TestRequestQueryAgreesWithURL: the request's query_string and span v2's
// url.full carry the same query: everything after the first `?` (a second `?`
// is part of it), without the fragment; url.query wins, else the query of
// the URL the request's url came from (http.url over url.path's).
func TestRequestQueryAgreesWithURL(t *testing.T) {
	for _, tt := range []struct {
		name          string
		attrs         map[string]any
		query, urlQry string
	}{
		{"second ? in url.path", map[string]any{"http.request.method": "GET", "server.address": "h", "url.path": "/a?b=1?c=2"}, "b=1?c=2", "http://h/a?b=1?c=2"},
		{"second ? in http.target", map[string]any{"http.method": "GET", "http.host": "h", "http.target": "/a?b=1?c=2#f"}, "b=1?c=2", "http://h/a?b=1?c=2"},
		{"second ? in http.url", map[string]any{"http.method": "GET", "http.url": "http://h/a?b=1?c=2#f"}, "b=1?c=2", "http://h/a?b=1?c=2"},
		{"http.url's query over url.path's", map[string]any{"http.method": "GET", "http.url": "http://h/a?from=url", "url.path": "/a?from=path"}, "from=url", "http://h/a?from=url"},
		{"http.url without query: none from url.path", map[string]any{"http.method": "GET", "http.url": "http://h/a", "url.path": "/a?from=path"}, "", "http://h/a"},
		{"url.query over both", map[string]any{"http.method": "GET", "http.url": "http://h/a?from=url", "url.path": "/a?from=path", "url.query": "from=query"}, "from=query", "http://h/a?from=query"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, doc, _ := translateServer(t, false, ptrace.SpanKindServer, tt.attrs)
			if tt.query == "" {
				assert.NotContains(t, doc.Request, "query_string")
			} else {
				assert.Equal(t, tt.query, doc.Request["query_string"])
			}
			items := v2Items(t, testOptions(), serverTrace(ptrace.SpanKindServer, tt.attrs))
			assert.Equal(t, tt.urlQry, attrValue(items[0], "url.full"))
		})
	}
}
