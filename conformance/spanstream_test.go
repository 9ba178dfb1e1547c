package conformance

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// TestSpanStreamingMatchesSentryNode holds this exporter's span v2 output
// (traces_as: spans) against @sentry/node 11.12's streamed spans for the same
// node:http program (conformance/node), field by field: the envelope and
// item headers, the span container, the DSC, each span's top-level fields and
// each attribute. A field is compared for equality unless a rule below says
// otherwise, and every rule gives its reason. Values that differ by nature
// between two runs (ids, ports, timestamps) are compared as structure.
func TestSpanStreamingMatchesSentryNode(t *testing.T) {
	needNode(t)
	sdk := newStreamView(t, "@sentry/node", runSentryNode(t))
	exp := newStreamView(t, "exporter", runOTelNode(t))
	for _, raw := range exp.raw {
		if err := validate(raw); err != nil {
			t.Errorf("exporter envelope fails the strict Relay model: %v", err)
		}
	}
	t.Run("envelope and item headers", func(t *testing.T) { checkStreamHeaders(t, sdk, exp) })
	t.Run("span container", func(t *testing.T) { checkSpanContainer(t, sdk, exp) })
	t.Run("trace header (DSC)", func(t *testing.T) { checkStreamDSC(t, sdk, exp) })
	t.Run("the same spans", func(t *testing.T) {
		want, got := keysOf(sdk.byRole), keysOf(exp.byRole)
		if strings.Join(want, "|") != strings.Join(got, "|") {
			t.Fatalf("span roles:\n SDK      %v\n exporter %v", want, got)
		}
	})
	for _, role := range keysOf(sdk.byRole) {
		s, o := sdk.byRole[role], exp.byRole[role]
		if o == nil {
			continue
		}
		t.Run(role, func(t *testing.T) {
			checkSpanTopLevel(t, sdk, exp, s, o)
			checkSpanAttributes(t, sdk, exp, s, o)
		})
	}
	t.Run("no per-process data on child spans", func(t *testing.T) {
		for _, v := range []*streamView{sdk, exp} {
			checkNoResourceOnChildren(t, v)
		}
	})
	t.Run("bytes per span", func(t *testing.T) {
		s, o := sdk.bytesPerSpan(), exp.bytesPerSpan()
		t.Logf("span container bytes per span: @sentry/node %.0f, exporter %.0f (%.2fx)", s, o, o/s)
		if o > s {
			t.Errorf("the exporter sends %.0f bytes per span, the SDK %.0f", o, s)
		}
	})
}

// checkStreamHeaders holds each span envelope's item header to span v2 with
// an item_count that counts its spans, and the exporter's envelope header to
// every member the SDK writes.
func checkStreamHeaders(t *testing.T, sdk, exp *streamView) {
	for _, v := range []*streamView{sdk, exp} {
		for _, e := range v.envs {
			if e.item["type"] != "span" || e.item["content_type"] != "application/vnd.sentry.items.span.v2+json" {
				t.Errorf("%s: item header %v", v.name, e.item)
			}
			if fmt.Sprint(e.item["item_count"]) != fmt.Sprint(len(e.spans)) {
				t.Errorf("%s: item_count %v for %d spans", v.name, e.item["item_count"], len(e.spans))
			}
		}
	}
	for _, k := range union(keysOf(sdk.envs[0].header), keysOf(exp.envs[0].header)) {
		if _, ok := exp.envs[0].header[k]; !ok {
			t.Errorf("envelope header %q: the SDK writes it, the exporter does not", k)
		}
	}
}

// checkSpanContainer holds every span container to version 2 and the
// exporter's container members to the SDK's.
func checkSpanContainer(t *testing.T, sdk, exp *streamView) {
	for _, v := range []*streamView{sdk, exp} {
		for _, e := range v.envs {
			if fmt.Sprint(e.container["version"]) != "2" {
				t.Errorf("%s: container version %v, want 2", v.name, e.container["version"])
			}
		}
	}
	// ingest_settings: only in browsers (isBrowser()), to let Relay infer
	// the user's IP and user agent; neither a Node SDK nor a collector.
	want, got := keysOf(sdk.envs[0].container), keysOf(exp.envs[0].container)
	if strings.Join(want, ",") != strings.Join(got, ",") {
		t.Errorf("container members: SDK %v, exporter %v", want, got)
	}
}

// checkStreamDSC compares each segment's trace header member by member, as
// dscRules says.
func checkStreamDSC(t *testing.T, sdk, exp *streamView) {
	for _, role := range sdk.segmentRoles() {
		want, got := sdk.dscOf(role), exp.dscOf(role)
		if got == nil {
			t.Errorf("%s: the exporter sent no envelope with this segment", role)
			continue
		}
		for _, k := range union(keysOf(want), keysOf(got)) {
			checkDSCMember(t, role, k, want, got)
		}
	}
}

// checkDSCMember compares one DSC member k of the segment role.
func checkDSCMember(t *testing.T, role, k string, want, got map[string]any) {
	if reason, ok := dscRules[k]; ok && reason.how != ruleEqual {
		if reason.how == ruleSDKOnly && got[k] != nil && want[k] == nil {
			t.Errorf("%s: DSC %s only the exporter writes", role, k)
		}
		return
	}
	if fmt.Sprint(want[k]) != fmt.Sprint(got[k]) {
		t.Errorf("%s: DSC %s: SDK %v, exporter %v", role, k, want[k], got[k])
	}
}

// checkSpanTopLevel compares the top-level fields of the SDK's span s and
// the exporter's span o of the same role.
func checkSpanTopLevel(t *testing.T, sdk, exp *streamView, s, o *streamedSpan) {
	if s.top["name"] != o.top["name"] && s.op() != "http.client" { // see nameDiffers
		t.Errorf("name: SDK %v, exporter %v", s.top["name"], o.top["name"])
	}
	for _, k := range []string{"status", "is_segment"} {
		if fmt.Sprint(s.top[k]) != fmt.Sprint(o.top[k]) {
			t.Errorf("%s: SDK %v, exporter %v", k, s.top[k], o.top[k])
		}
	}
	if sdk.parentRole(s) != exp.parentRole(o) {
		t.Errorf("parent: SDK %q, exporter %q", sdk.parentRole(s), exp.parentRole(o))
	}
	if sdk.segmentRole(s) != exp.segmentRole(o) {
		t.Errorf("sentry.segment.id names the segment: SDK %q, exporter %q", sdk.segmentRole(s), exp.segmentRole(o))
	}
	if s.top["trace_id"] == nil || o.top["trace_id"] == nil || o.float("end_timestamp") < o.float("start_timestamp") {
		t.Errorf("ids or timestamps: exporter %v", o.top)
	}
}

// checkSpanAttributes compares the attributes of the SDK's span s and the
// exporter's span o of the same role, as spanRules says.
func checkSpanAttributes(t *testing.T, sdk, exp *streamView, s, o *streamedSpan) {
	op := s.op()
	for _, k := range union(keysOf(s.attrs), keysOf(o.attrs)) {
		r := ruleFor(op, k)
		sv, sok := s.attrs[k]
		ov, ook := o.attrs[k]
		switch {
		case r.how == ruleValueDiffers:
			if sok != ook {
				t.Errorf("%s: SDK has it %v, exporter %v", k, sok, ook)
			}
		case sok && ook:
			if sdk.norm(sv) != exp.norm(ov) {
				t.Errorf("%s: SDK %s, exporter %s", k, sdk.norm(sv), exp.norm(ov))
			}
		case sok && r.how != ruleSDKOnly:
			t.Errorf("%s = %s: the SDK writes it, the exporter does not", k, sdk.norm(sv))
		case ook && r.how != ruleExporterOnly:
			t.Errorf("%s = %s: the exporter writes it, the SDK does not", k, exp.norm(ov))
		}
	}
}

// checkNoResourceOnChildren fails on a child span of v that carries
// per-process data (resourcePrefixes).
func checkNoResourceOnChildren(t *testing.T, v *streamView) {
	for role, sp := range v.byRole {
		if sp.top["is_segment"] == true {
			continue
		}
		for k := range sp.attrs {
			if hasResourcePrefix(k) {
				t.Errorf("%s: child %s carries %s", v.name, role, k)
			}
		}
	}
}

// hasResourcePrefix reports whether attribute k is per-process data.
func hasResourcePrefix(k string) bool {
	for _, p := range resourcePrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// How a field is compared.
const (
	ruleEqual        = iota // both write it, with the same value (the default)
	ruleSDKOnly             // the exporter may lack it; compared when both have it
	ruleExporterOnly        // the SDK may lack it; compared when both have it
	ruleValueDiffers        // both write it; the values differ by nature
)

type fieldRule struct {
	how    int
	reason string
}

const (
	whyResource = "OTel's resource: the exporter keeps it once, on the segment span, where the SDK puts its own process context"
	whyContext  = "@sentry/node's Context integration (processSegmentSpan) reads the Node process and machine; a collector does not see them, and the OTel resource stands for them (whyResource)"
	whyPII      = "the client's address: without send_default_pii the exporter leaves it out (scrub.go), as sentry-go does; @sentry/node 11 records it at its defaults"
	whyNodeHTTP = "@sentry/node's own HTTP instrumentation records it; OTel's HTTP instrumentation (stable conventions) does not"
	whyURLParts = "@sentry/node's HTTP client instrumentation also splits url.full into its parts; OTel's records url.full, which both have"
)

// spanRules are the attribute rules: "key", "key*" (a prefix) or "op:key"
// (only on spans with that sentry.op).
var spanRules = map[string]fieldRule{
	"app.*":                       {ruleSDKOnly, whyContext},
	"device.*":                    {ruleSDKOnly, whyContext},
	"culture.*":                   {ruleSDKOnly, whyContext},
	"os.name":                     {ruleSDKOnly, whyContext},
	"os.kernel_version":           {ruleSDKOnly, whyContext},
	"process.runtime.engine.*":    {ruleSDKOnly, whyContext},
	"os.version":                  {ruleValueDiffers, "the SDK writes the distribution's version, OTel's resource the kernel's"},
	"host.*":                      {ruleExporterOnly, whyResource},
	"process.*":                   {ruleExporterOnly, whyResource},
	"telemetry.sdk.*":             {ruleExporterOnly, whyResource},
	"service.*":                   {ruleExporterOnly, whyResource},
	"os.type":                     {ruleExporterOnly, whyResource},
	"deployment.environment.name": {ruleExporterOnly, whyResource},
	"otel.scope.*":                {ruleExporterOnly, "the OTel instrumentation scope; the SDK has no counterpart (its sentry.origin names its own instrumentation)"},
	"http.request.header.*":       {ruleSDKOnly, "OTel's HTTP instrumentation records request headers only when told which (headersToSpanAttributes); the exporter passes on what the span carries, filtered as the SDK filters (scrub.go, request_test.go)"},
	"client.address":              {ruleSDKOnly, whyPII},
	"client.port":                 {ruleSDKOnly, whyPII},
	"user.ip_address":             {ruleSDKOnly, whyPII},
	"http.server:network.peer.*":  {ruleSDKOnly, whyPII + " (on a server span the peer is the client)"},
	"sentry.is_localhost":         {ruleSDKOnly, "@sentry/core's requestData integration derives it from the client's IP, which the exporter does not keep without send_default_pii"},
	"http.response.status_text":   {ruleSDKOnly, whyNodeHTTP},
	"network.local.*":             {ruleSDKOnly, whyNodeHTTP},
	"network.protocol.name":       {ruleSDKOnly, whyNodeHTTP},
	"network.transport":           {ruleSDKOnly, whyNodeHTTP},
	"http.client:url.*":           {ruleSDKOnly, whyURLParts},
	"http.client:url.full":        {ruleEqual, ""},
	"http.client:server.port":     {ruleExporterOnly, "OTel's HTTP client instrumentation records server.port; the SDK records the same port as url.port"},
	"error.type":                  {ruleExporterOnly, "OTel's HTTP instrumentation records error.type (the status code) on a failed request; the SDK has no such attribute"},
	"db:sentry.kind":              {ruleExporterOnly, "the program's database span is an OTel CLIENT span; Sentry.startSpan sets no kind"},
	"sentry.sample_rate":          {ruleSDKOnly, "the OTel SDK's default sampler (parentbased_always_on) records no rate; a span's sentry.sample_rate is passed on, and a known rate goes into the DSC (refs.go sampling)"},
	"sentry.sdk.integrations":     {ruleSDKOnly, "the SDK's list of its own integrations; OTLP has nothing like it"},
	"sentry.sdk.name":             {ruleValueDiffers, "each names itself"},
	"sentry.sdk.version":          {ruleValueDiffers, "each names itself"},
	"sentry.origin":               {ruleValueDiffers, "names the instrumentation: the SDK's own (auto.http.http_server, manual), auto.otel for OTel's"},
	"sentry.segment.id":           {ruleValueDiffers, "span ids differ by run; compared as structure (the role of the span it names)"},
}

// dscRules are the DSC members not compared for equality.
var dscRules = map[string]fieldRule{
	"trace_id":    {ruleValueDiffers, "differs by run; each envelope's is its spans' (envelope.Validate)"},
	"sample_rate": {ruleSDKOnly, "the OTel SDK's default sampler records no rate (ot=th); the exporter writes one only when the spans carry it (refs.go sampling)"},
	"sample_rand": {ruleSDKOnly, "the OTel SDK records no explicit randomness (ot=rv) and sets no W3C random flag; the exporter derives sample_rand only from those (refs.go sampleRand, TestSampleRand)"},
}

// nameDiffers: on http.client spans the SDK's HTTP client instrumentation
// names outgoing spans "<method> <host>", OTel's "<method>"; the exporter
// keeps the name the program's instrumentation gave, so names of outgoing
// HTTP spans are not compared. Every other span's name is.

// resourcePrefixes are per-process data that must not repeat on child spans.
var resourcePrefixes = []string{"host.", "process.", "telemetry.sdk.", "service.", "os.", "deployment.", "device.", "app.", "culture."}

func ruleFor(op, k string) fieldRule {
	if r, ok := spanRules[op+":"+k]; ok {
		return r
	}
	if r, ok := spanRules[k]; ok {
		return r
	}
	best, found := "", fieldRule{}
	for p, r := range spanRules {
		if !strings.HasSuffix(p, "*") {
			continue
		}
		pre, scoped := strings.TrimSuffix(p, "*"), ""
		if i := strings.IndexByte(pre, ':'); i >= 0 {
			scoped, pre = pre[:i], pre[i+1:]
		}
		if (scoped == "" || scoped == op) && strings.HasPrefix(k, pre) && len(p) > len(best) {
			best, found = p, r
		}
	}
	return found
}

// streamView is one run's span envelopes, their spans by role.
type streamView struct {
	name   string
	port   string
	raw    [][]byte
	envs   []streamEnv
	byRole map[string]*streamedSpan
	byID   map[string]*streamedSpan
}

type streamEnv struct {
	header, item, container map[string]any
	payloadBytes            int
	spans                   []*streamedSpan
}

type streamedSpan struct {
	top   map[string]any
	attrs map[string]any // key -> {"type", "value"}
	env   int
}

func (sp *streamedSpan) str(k string) string {
	if a, ok := sp.attrs[k].(map[string]any); ok {
		s, _ := a["value"].(string)
		return s
	}
	return ""
}

func (sp *streamedSpan) op() string {
	if sp.str("db.query.text") != "" {
		return "db"
	}
	return sp.str("sentry.op")
}

func (sp *streamedSpan) float(k string) float64 { f, _ := sp.top[k].(float64); return f }

// role names a span by what it is: its op and path, or its query.
func (sp *streamedSpan) role() string {
	if q := sp.str("db.query.text"); q != "" {
		return "db " + q
	}
	path := sp.str("url.path")
	if path == "" {
		if u, err := url.Parse(sp.str("url.full")); err == nil {
			path = u.Path
		}
	}
	return sp.op() + " " + path
}

// newStreamView reads run's span envelopes, failing on a run without one
// and on two spans of one role.
func newStreamView(t *testing.T, name string, run nodeRun) *streamView {
	t.Helper()
	v := &streamView{name: name, port: run.port, byRole: map[string]*streamedSpan{}, byID: map[string]*streamedSpan{}}
	for _, e := range run.envelopes {
		for _, it := range e.items {
			if it.typ() == "span" {
				v.addSpanItem(t, e, it)
			}
		}
	}
	if len(v.envs) == 0 {
		t.Fatalf("%s: no span envelope arrived", name)
	}
	return v
}

// addSpanItem adds envelope e's span item it: its container members and
// each of its spans, by role and by id.
func (v *streamView) addSpanItem(t *testing.T, e captured, it capturedItem) {
	t.Helper()
	se := streamEnv{header: e.header, item: it.header, container: map[string]any{}, payloadBytes: len(it.raw)}
	for k, val := range it.payload {
		if k != "items" {
			se.container[k] = val
		}
	}
	items, _ := it.payload["items"].([]any)
	for _, x := range items {
		m, _ := x.(map[string]any)
		sp := newStreamedSpan(m, len(v.envs))
		se.spans = append(se.spans, sp)
		if _, dup := v.byRole[sp.role()]; dup {
			t.Fatalf("%s: two spans with role %q", v.name, sp.role())
		}
		v.byRole[sp.role()] = sp
		v.byID[fmt.Sprint(sp.top["span_id"])] = sp
	}
	v.envs = append(v.envs, se)
	v.raw = append(v.raw, e.raw)
}

// newStreamedSpan splits a span v2 item m, of the view's envelope env, into
// its attributes and its top-level fields.
func newStreamedSpan(m map[string]any, env int) *streamedSpan {
	sp := &streamedSpan{top: map[string]any{}, env: env}
	for k, val := range m {
		if k == "attributes" {
			sp.attrs, _ = val.(map[string]any)
		} else {
			sp.top[k] = val
		}
	}
	return sp
}

func (v *streamView) parentRole(sp *streamedSpan) string {
	if p := v.byID[fmt.Sprint(sp.top["parent_span_id"])]; p != nil {
		return p.role()
	}
	return ""
}

func (v *streamView) segmentRole(sp *streamedSpan) string {
	if p := v.byID[sp.str("sentry.segment.id")]; p != nil {
		return p.role()
	}
	return "<none>"
}

func (v *streamView) segmentRoles() []string {
	var out []string
	for r, sp := range v.byRole {
		if sp.top["is_segment"] == true && v.parentRole(sp) == "" {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// dscOf is the trace header of the envelope that carries the span of role.
func (v *streamView) dscOf(role string) map[string]any {
	sp := v.byRole[role]
	if sp == nil {
		return nil
	}
	m, _ := v.envs[sp.env].header["trace"].(map[string]any)
	return m
}

// norm is an attribute's type and value with the run's port replaced.
func (v *streamView) norm(a any) string {
	s := fmt.Sprint(a)
	return strings.ReplaceAll(strings.ReplaceAll(s, ":"+v.port, ":PORT"), " "+v.port+"]", " PORT]")
}

func (v *streamView) bytesPerSpan() float64 {
	b, n := 0, 0
	for _, e := range v.envs {
		b += e.payloadBytes
		n += len(e.spans)
	}
	return float64(b) / float64(n)
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range append(append([]string(nil), a...), b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
