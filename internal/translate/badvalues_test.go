package translate

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// putBadValues puts every value JSON cannot hold as it is into m.
func putBadValues(m pcommon.Map) {
	m.PutDouble("nan", math.NaN())
	m.PutDouble("inf", math.Inf(1))
	m.PutDouble("neg_inf", math.Inf(-1))
	m.PutStr("bad_utf8", "a\xff\xfeb")
	m.PutStr("nul", "a\x00b")
	m.PutStr("ctrl", "line\nbreak\x01\"quote\\")
	m.PutStr("huge", strings.Repeat("é", 1_500_000)) // 3 MB
	m.PutStr("key\xffbad\x00", "bad key")
	m.PutInt("big", math.MaxInt64)
	m.PutInt("small", math.MinInt64)
	m.PutDouble("tiny", 5e-324)
	m.PutDouble("large", 1.8e19) // a uint64-sized value
	m.PutEmptyBytes("bytes").FromRaw([]byte{0, 1, 2, 0xff})
	mixed := m.PutEmptySlice("mixed")
	mixed.AppendEmpty().SetStr("a")
	mixed.AppendEmpty().SetInt(1)
	mixed.AppendEmpty().SetDouble(math.NaN())
	nanArr := m.PutEmptySlice("nan_array")
	nanArr.AppendEmpty().SetDouble(1.5)
	nanArr.AppendEmpty().SetDouble(math.Inf(1))
	deep := m.PutEmptyMap("deep")
	for range 50 {
		deep = deep.PutEmptyMap("d")
	}
	deep.PutStr("bottom", "x")
	m.PutEmpty("empty")
}

// putBadRequest puts hostile HTTP server and resource-context attributes.
func putBadRequest(m pcommon.Map) {
	m.PutStr("http.request.method", "GET\x00\xff\"")
	m.PutStr("url.path", "/p\xff?"+strings.Repeat("token=x&", 100_000))
	m.PutStr("server.address", "h\"o\xffst")
	m.PutStr("url.scheme", "ht\"tp")
	m.PutInt("server.port", -1)
	m.PutStr("url.query", "a=\xff&session=\x00")
	m.PutStr("client.address", "\xff")
	m.PutInt("http.response.status_code", 1_000_000)
	m.PutEmptySlice("http.request.header.x-a\"b\xff").AppendEmpty().SetStr(strings.Repeat("v", 100_000))
	m.PutEmptyMap("http.request.header.user-agent").PutStr("k", "v")
	m.PutStr("http.request.header.cookie", "a=b\xff; session=1")
	for i := range 200 {
		m.PutStr("http.request.header.h"+strings.Repeat("x", i), "v")
	}
	m.PutStr("os.type", "lin\x00ux\xff")
	m.PutStr("process.runtime.description", strings.Repeat("d", 100_000))
	m.PutStr("k8s.pod.name", "\"pod\xff")
	m.PutStr("cloud.provider", "\xff")
}

func badTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	putBadValues(rs.Resource().Attributes())
	rs.Resource().Attributes().PutStr("service.name", "bad\x00svc\xff")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("scope\xff")
	root := ss.Spans().AppendEmpty() // all ids zero
	root.SetName("root\x00\xff" + strings.Repeat("n", 100_000))
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(2_000_000_000_000_000_000)
	root.SetEndTimestamp(1_000_000_000_000_000_000) // end < start
	putBadValues(root.Attributes())
	putBadRequest(root.Attributes())
	putBadRequest(rs.Resource().Attributes()) // and as contexts: os.*, process.runtime.*, k8s.*
	ev := root.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.type", "Bad\xff\x00Type")
	ev.Attributes().PutStr("exception.stacktrace", strings.Repeat("x\x00\xff", 1_000_000))
	putBadValues(ev.Attributes())
	lk := root.Links().AppendEmpty() // zero ids: left out
	lk.Attributes().PutStr("k", "v")
	child := ss.Spans().AppendEmpty()
	child.SetName("child")
	child.SetSpanID([8]byte{1})
	child.SetParentSpanID([8]byte{}) // zero parent: a root of its own
	putBadValues(child.Attributes())
	return td
}

func TestBadValuesTraces(t *testing.T) {
	t.Run("default", func(t *testing.T) { testBadValuesTraces(t, testOptions()) })
	t.Run("send_default_pii", func(t *testing.T) {
		o := testOptions()
		o.SendDefaultPII = true
		testBadValuesTraces(t, o)
	})
}

func testBadValuesTraces(t *testing.T, o Options) {
	tr := New(o)
	r := tr.Traces(badTraces(), TracesWant{Transactions: true, SpanV2: true, Errors: true})
	require.Zero(t, r.InvalidSpans)
	require.Zero(t, r.InvalidErrors)
	spans := 0
	for i := range r.Transactions {
		x := &r.Transactions[i]
		m, err := checkTransaction(x.Payload)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(x.Payload), DefaultMaxEventBytes)
		spans += x.Spans
		assertRepaired(t, string(x.Payload))
		data := m["contexts"].(map[string]any)["trace"].(map[string]any)["data"].(map[string]any)
		assert.Equal(t, "NaN", data["nan"])
		assert.Equal(t, "+Inf", data["inf"])
		assert.Equal(t, "-Inf", data["neg_inf"])
		assert.Equal(t, "a\uFFFD\uFFFDb", data["bad_utf8"])
		assert.Equal(t, "a\uFFFDb", data["nul"])
		assert.Equal(t, "key\uFFFDbad\uFFFD", firstKeyWith(data, "key"))
		huge := data["huge"].(string)
		assert.True(t, strings.HasSuffix(huge, truncMarker))
		assert.LessOrEqual(t, len(huge), DefaultMaxValueBytes+len(truncMarker))
		assert.Contains(t, string(x.Payload), depthLimit)
	}
	assert.Equal(t, 2, spans)
	for _, g := range r.SpanGroups {
		for _, it := range g.Items {
			m, err := checkSpanV2(it)
			require.NoError(t, err, "%s", it)
			assertRepaired(t, string(it))
			_, hasLinks := m["links"]
			assert.False(t, hasLinks, "links with zero ids are left out")
			a := m["attributes"].(map[string]any)
			assert.Equal(t, map[string]any{"type": "string", "value": "NaN"}, a["nan"])
			assert.Equal(t, "string", a["mixed"].(map[string]any)["type"])
			assert.Equal(t, "string", a["nan_array"].(map[string]any)["type"])
			assert.Equal(t, "string", a["deep"].(map[string]any)["type"])
			assert.NotContains(t, a, "empty")
			if kind, _ := a["sentry.kind"].(map[string]any); kind["value"] == "server" {
				// url.full built from the hostile parts: repaired, bounded, the
				// sensitive query values filtered.
				require.Contains(t, a, "url.full", "%.3000s", it)
				u := a["url.full"].(map[string]any)["value"].(string)
				assert.True(t, strings.HasPrefix(u, "ht\"tp://h\"o\uFFFDst/p\uFFFD?"), "%.80q", u)
				assert.LessOrEqual(t, len(u), DefaultMaxValueBytes+len(truncMarker))
				assert.True(t, strings.HasSuffix(u, "?a=\uFFFD&session=[Filtered]"), "url.query wins, filtered: %.80q", u)
			}
		}
	}
	require.Len(t, r.Errors, 1)
	_, err := checkError(r.Errors[0].Payload)
	require.NoError(t, err)
	assertRepaired(t, string(r.Errors[0].Payload))
}

func TestBadValuesLogs(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	putBadValues(rl.Resource().Attributes())
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	a := lrs.AppendEmpty()
	a.Body().SetStr(strings.Repeat("\x00\xff", 1_500_000))
	putBadValues(a.Attributes())
	a.Attributes().PutStr("exception.message", "boom\xff")
	b := lrs.AppendEmpty()
	deep := b.Body().SetEmptyMap()
	putBadValues(deep)
	c := lrs.AppendEmpty()
	c.SetSeverityNumber(plog.SeverityNumber(99))
	c.Body().SetDouble(math.Inf(-1))

	tr := New(testOptions())
	r := tr.Logs(ld, LogsWant{Logs: true, Errors: true})
	require.Len(t, r.Logs, 3)
	require.Zero(t, r.InvalidLogs)
	for _, l := range r.Logs {
		m, err := checkLog(l)
		require.NoError(t, err, "%.2000s", l)
		assert.LessOrEqual(t, len(l), DefaultMaxItemBytes)
		assertRepaired(t, string(l))
		assert.NotEqual(t, strings.Repeat("0", 32), m["trace_id"])
	}
	require.Len(t, r.Errors, 1)
	_, err := checkError(r.Errors[0].Payload)
	require.NoError(t, err)
}

// assertRepaired checks that no raw invalid value survived.
func assertRepaired(t *testing.T, p string) {
	t.Helper()
	assert.NotContains(t, p, "\x00")
	assert.NotContains(t, p, `\u0000`)
	assert.NotContains(t, p, "NaN,")
	assert.NotContains(t, p, ":NaN")
	assert.NotContains(t, p, "Inf,")
	assert.NotContains(t, p, strings.Repeat("0", 32))
}

func firstKeyWith(m map[string]any, prefix string) string {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return k
		}
	}
	return ""
}
