package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter"
)

// The profiles conformance check runs Sentry's own continuous profiler,
// @sentry/profiling-node 11.1.0 with @sentry/node 11.1.0 (conformance/profiling-node,
// its native part shipped in the package), on a traced node:http request whose handler
// is CPU-bound, and holds its real profile_chunk, and the streamed segment or the
// transaction that names its profiler, against what this exporter sends for the same
// process's OTLP profile and server span. It needs `npm ci` in
// conformance/profiling-node (.ci/run does it); without node_modules it is skipped,
// unless PROFILES_CONFORMANCE_REQUIRED is set (CI), where it fails.

const profilingNodeDir = "profiling-node"

// profileDifferences are the checks where the exporter differs from @sentry/profiling-node
// on purpose, with the reason (docs/conformance.md, Profiles). A listed check must still
// differ: when it stops, the entry goes.
var profileDifferences = map[string]string{
	"chunk fields": "measurements: the SDK writes an empty object; the exporter has no measurements " +
		"to report and leaves it out (Relay's v2 chunk makes it optional)",
	"client_sdk": "it names the sender: the exporter, not sentry.javascript.node",
}

type profileRun struct {
	itemHeader map[string]any
	chunk      map[string]any
	// segment is the attributes of the segment span of the profiled process.
	segment map[string]any
	// profileContext is contexts.profile of the transaction, when spans went as transactions.
	profileContext map[string]any
}

func needProfilingNode(t *testing.T) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errMods := os.Stat(filepath.Join(profilingNodeDir, "node_modules", "@sentry", "profiling-node"))
	if errNode == nil && errMods == nil {
		return
	}
	msg := "profiles conformance needs node and `npm ci` in conformance/profiling-node"
	if os.Getenv("PROFILES_CONFORMANCE_REQUIRED") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// TestProfileChunkMatchesProfilingNode compares the official profiler's chunk and
// profiler link with the exporter's, field by field.
func TestProfileChunkMatchesProfilingNode(t *testing.T) {
	needProfilingNode(t)
	sdk := runProfilingNode(t, "stream")
	ours := runProfilesExporter(t, sentryexporter.TracesAsSpans)
	for _, c := range profileChecks {
		t.Run(c.name, func(t *testing.T) {
			want, got := c.view(sdk), c.view(ours)
			reason, known := profileDifferences[c.name]
			switch {
			case known && want == got:
				t.Errorf("no longer differs; remove it from profileDifferences (%s)", reason)
			case known:
				t.Logf("@sentry/profiling-node %s, exporter %s (%s)", want, got, reason)
			case want != got:
				t.Errorf("\n\t@sentry/profiling-node: %s\n\texporter:               %s", want, got)
			}
		})
	}
}

// TestProfileTransactionLinkMatchesProfilingNode holds the transaction's profiler link
// (contexts.profile) against the SDK's, with spans sent as transactions on both sides
// (traceLifecycle: "static"; traces_as: transactions).
func TestProfileTransactionLinkMatchesProfilingNode(t *testing.T) {
	needProfilingNode(t)
	sdk := runProfilingNode(t, "static")
	ours := runProfilesExporter(t, sentryexporter.TracesAsTransactions)
	for _, r := range []profileRun{sdk, ours} {
		if r.profileContext == nil {
			t.Fatal("no transaction with contexts.profile")
		}
	}
	if want, got := typesOf(sdk.profileContext), typesOf(ours.profileContext); want != got {
		t.Errorf("contexts.profile fields:\n\t@sentry/profiling-node: %s\n\texporter:               %s", want, got)
	}
	for name, r := range map[string]profileRun{"@sentry/profiling-node": sdk, "exporter": ours} {
		if r.profileContext["profiler_id"] != r.chunk["profiler_id"] {
			t.Errorf("%s: contexts.profile.profiler_id %v, the chunk's %v", name, r.profileContext["profiler_id"], r.chunk["profiler_id"])
		}
	}
}

// profileChecks each render one aspect of a run; the two renderings must be equal.
var profileChecks = []struct {
	name string
	view func(r profileRun) string
}{
	{"item header", func(r profileRun) string { return fmt.Sprintf("%v", r.itemHeader) }},
	{"chunk fields", func(r profileRun) string { return typesOf(r.chunk) }},
	{"version, platform, release, environment", func(r profileRun) string {
		return fmt.Sprint(r.chunk["version"], " ", r.chunk["platform"], " ", r.chunk["release"], " ", r.chunk["environment"])
	}},
	{"chunk_id and profiler_id: 32 hex digits", func(r profileRun) string {
		return fmt.Sprint(hex32(r.chunk["chunk_id"]), " ", hex32(r.chunk["profiler_id"]))
	}},
	{"client_sdk", func(r profileRun) string { return fmt.Sprintf("%v", r.chunk["client_sdk"]) }},
	{"client_sdk fields", func(r profileRun) string { return typesOf(asMap(r.chunk["client_sdk"])) }},
	{"debug_meta", func(r profileRun) string { return typesOf(asMap(r.chunk["debug_meta"])) }},
	{"profile fields", func(r profileRun) string { return typesOf(profileOf(r)) }},
	{"sample fields", func(r profileRun) string { return unionTypes(listOf(profileOf(r)["samples"])) }},
	{"stacks: arrays of frame indexes, each frame used", func(r profileRun) string { return stacksShape(profileOf(r)) }},
	{"frame fields", func(r profileRun) string { return unionTypes(listOf(profileOf(r)["frames"])) }},
	{"module and application code of the app's and a package's frames", func(r profileRun) string {
		return nodeFrames(profileOf(r), "fib", "startSpan")
	}},
	{"thread_metadata", func(r profileRun) string { return fmt.Sprintf("%v", profileOf(r)["thread_metadata"]) }},
	{"samples in time order, within 66 s", func(r profileRun) string { return timeline(profileOf(r)) }},
	{"the segment names the chunk's profiler", func(r profileRun) string {
		p, _ := asMap(r.segment["sentry.profiler_id"])["value"].(string)
		return fmt.Sprint(p != "" && p == r.chunk["profiler_id"])
	}},
}

// nodeFrames renders, for the frames of the named functions, their module and
// whether Sentry counts them as application code: their in_app, else its node
// rule (vroomrs is_node_application_frame: not node: and not under node_modules).
func nodeFrames(p map[string]any, names ...string) string {
	var out []string
	for _, f := range listOf(p["frames"]) {
		fn, _ := f["function"].(string)
		if !slices.Contains(names, fn) {
			continue
		}
		path, _ := f["abs_path"].(string)
		app, set := f["in_app"].(bool)
		if !set {
			app = !strings.HasPrefix(path, "node:") && !strings.Contains(path, "node_modules")
		}
		out = append(out, fmt.Sprintf("%s module=%v application=%v", fn, f["module"], app))
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), "; ")
}

var hex32re = regexp.MustCompile(`^[0-9a-f]{32}$`)

func hex32(v any) bool { s, _ := v.(string); return hex32re.MatchString(s) }

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func listOf(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		out = append(out, asMap(x))
	}
	return out
}

func profileOf(r profileRun) map[string]any { return asMap(r.chunk["profile"]) }

// typeName is a JSON value's kind.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "bool"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return reflect.TypeOf(v).String()
}

// typesOf renders "key:type" for every key of m, sorted.
func typesOf(m map[string]any) string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+":"+typeName(v))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// unionTypes renders the keys and types any element of l has.
func unionTypes(l []map[string]any) string {
	seen := map[string]bool{}
	for _, m := range l {
		for k, v := range m {
			seen[k+":"+typeName(v)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// stacksShape says whether every stack is an array of valid frame indexes and every
// frame is in some stack.
func stacksShape(p map[string]any) string {
	frames := len(listOf(p["frames"]))
	used := make([]bool, frames)
	stacks, _ := p["stacks"].([]any)
	for _, s := range stacks {
		idx, ok := s.([]any)
		if !ok {
			return "a stack that is not an array"
		}
		for _, i := range idx {
			n, ok := i.(float64)
			if !ok || int(n) < 0 || int(n) >= frames {
				return "a dangling frame index"
			}
			used[int(n)] = true
		}
	}
	return fmt.Sprint("stacks are index arrays; every frame used: ", !slices.Contains(used, false))
}

// timeline says whether the samples' timestamps are seconds, ordered, within 66 s.
func timeline(p map[string]any) string {
	var prev float64
	first := -1.0
	for _, s := range listOf(p["samples"]) {
		ts, ok := s["timestamp"].(float64)
		if !ok || ts < prev {
			return "a sample out of order or without a number timestamp"
		}
		if first < 0 {
			first = ts
		}
		prev = ts
	}
	return fmt.Sprint("ordered seconds within 66 s: ", prev-first <= 66 && first > 1e9)
}

// runProfilingNode runs conformance/profiling-node/run.js against a capture sink.
// lifecycle is @sentry/node's traceLifecycle: "stream" (span v2) or "static" (transactions).
func runProfilingNode(t *testing.T, lifecycle string) profileRun {
	t.Helper()
	sink := newCaptureSink(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "run.js")
	cmd.Dir = profilingNodeDir
	cmd.Env = append(os.Environ(), "SENTRY_DSN="+sink.dsn(), "TRACE_LIFECYCLE="+lifecycle)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run.js: %v: %s", err, out)
	}
	return profileRunOf(t, sink)
}

// profileRunOf finds the one profile chunk and the segment span that names a
// profiler among what sink got.
func profileRunOf(t *testing.T, sink *captureSink) profileRun {
	t.Helper()
	envs, bad := sink.envelopes()
	if len(bad) > 0 {
		t.Fatalf("the sink rejected envelopes: %v", bad)
	}
	var r profileRun
	for _, e := range envs {
		for _, it := range e.items {
			r.take(t, it)
		}
	}
	if r.chunk == nil || (r.segment == nil && r.profileContext == nil) {
		t.Fatalf("no profile chunk or no segment span or transaction among %d envelopes", len(envs))
	}
	return r
}

// take keeps it if it is the profile chunk or a span container with the segment.
func (r *profileRun) take(t *testing.T, it capturedItem) {
	switch it.typ() {
	case "profile_chunk":
		if r.chunk != nil {
			t.Fatal("more than one profile chunk")
		}
		// every key but the item's length, which differs by nature (content_type too, if either writes one)
		r.itemHeader = maps.Clone(it.header)
		delete(r.itemHeader, "length")
		r.chunk = it.payload
	case "transaction":
		r.profileContext = asMap(asMap(it.payload["contexts"])["profile"])
	case "span":
		for _, sp := range listOf(it.payload["items"]) {
			if sp["is_segment"] == true {
				r.segment = asMap(sp["attributes"])
			}
		}
	}
}

// runProfilesExporter sends the same process's OTLP profile, then its server span, to
// the exporter (traces_as as given), and shuts it down so that everything is sent.
func runProfilesExporter(t *testing.T, tracesAs sentryexporter.TracesAs) profileRun {
	t.Helper()
	sink := newCaptureSink(t)
	ctx := t.Context()
	f := sentryexporter.NewFactory().(xexporter.Factory)
	cfg := f.CreateDefaultConfig().(*sentryexporter.Config)
	cfg.DSN = configopaque.String(sink.dsn())
	cfg.TracesAs = tracesAs
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	set := exportertest.NewNopSettings(f.Type())
	pe, err := f.CreateProfiles(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	te, err := f.CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pe.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := te.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-2 * time.Second)
	if err := pe.ConsumeProfiles(ctx, nodeProcessProfile(start)); err != nil {
		t.Fatal(err)
	}
	if err := te.ConsumeTraces(ctx, nodeProcessSpan(start)); err != nil {
		t.Fatal(err)
	}
	if err := te.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pe.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return profileRunOf(t, sink)
}

// nodeProcess is the resource of the profiled node process, as the OTel JS SDK names it.
func nodeProcess(r pcommon.Resource) {
	a := r.Attributes()
	a.PutStr("service.name", "shop")
	a.PutStr("service.version", nodeRelease)
	a.PutStr("deployment.environment.name", nodeEnvironment)
	a.PutStr("telemetry.sdk.language", "nodejs")
	a.PutStr("host.name", "conformance-host")
}

// nodeProcessProfile is 1.5 s of CPU samples every 10 ms on the main thread, in fib()
// called from the request handler, as a CPU profiler of that process exports them.
func nodeProcessProfile(start time.Time) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("")
	for _, tbl := range []func(){
		func() { d.StackTable().AppendEmpty() }, func() { d.LocationTable().AppendEmpty() },
		func() { d.FunctionTable().AppendEmpty() }, func() { d.MappingTable().AppendEmpty() },
		func() { d.LinkTable().AppendEmpty() }, func() { d.AttributeTable().AppendEmpty() },
	} {
		tbl()
	}
	str := func(s string) int32 {
		d.StringTable().Append(s)
		return int32(d.StringTable().Len() - 1)
	}
	attr := func(k string, v any) int32 {
		a := d.AttributeTable().AppendEmpty()
		a.SetKeyStrindex(str(k))
		_ = a.Value().FromRaw(v)
		return int32(d.AttributeTable().Len() - 1)
	}
	v8 := attr("profile.frame.type", "v8js")
	loc := func(fn, file string, line, col int64) int32 {
		f := d.FunctionTable().AppendEmpty()
		f.SetNameStrindex(str(fn))
		f.SetFilenameStrindex(str(file))
		l := d.LocationTable().AppendEmpty()
		l.AttributeIndices().Append(v8)
		ln := l.Lines().AppendEmpty()
		ln.SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
		ln.SetLine(line)
		ln.SetColumn(col)
		return int32(d.LocationTable().Len() - 1)
	}
	dir, _ := filepath.Abs(profilingNodeDir) // the paths the SDK's run has
	run := filepath.Join(dir, "run.js")
	fib := loc("fib", run, 18, 14)
	work := loc("", run, 25, 31)
	startSpan := loc("startSpan", filepath.Join(dir, "node_modules/@sentry/node/build/cjs/integrations/http/httpServerSpansIntegration.js"), 49, 12)
	stacks := [][]int32{{fib, fib, work, startSpan}, {fib, work, startSpan}, {work, startSpan}}
	for _, s := range stacks {
		st := d.StackTable().AppendEmpty()
		st.LocationIndices().FromRaw(s)
	}
	rp := pd.ResourceProfiles().AppendEmpty()
	nodeProcess(rp.Resource())
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(str("samples"))
	p.SampleType().SetUnitStrindex(str("count"))
	p.SetTime(pcommon.NewTimestampFromTime(start))
	p.SetDurationNano(uint64(1500 * time.Millisecond))
	tid, tname := attr("thread.id", "0"), attr("thread.name", "main")
	for i := range 150 {
		smp := p.Samples().AppendEmpty()
		smp.SetStackIndex(int32(1 + i%len(stacks)))
		smp.AttributeIndices().FromRaw([]int32{tid, tname})
		smp.TimestampsUnixNano().Append(uint64(start.Add(time.Duration(i) * 10 * time.Millisecond).UnixNano()))
	}
	return pd
}

// nodeProcessSpan is the process's server span over the profiled time.
func nodeProcessSpan(start time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	nodeProcess(rs.Resource())
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	sp.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	sp.SetName("GET /work")
	sp.SetKind(ptrace.SpanKindServer)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1500 * time.Millisecond)))
	return td
}
