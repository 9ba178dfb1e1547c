package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A check compares one thing a Sentry user sees; it reports every place
// where the exporter's output differs from sentry-go's (want) with both values.
type check struct {
	name string
	run  func(sdk, ours *view) []diff
}

type diff struct{ where, want, got string }

// Fields left out of every comparison because they differ by nature:
//   - event_id, span_id, trace_id, timestamps, sent_at: random or clock values;
//     IDs are compared by structure instead (spanRef, the trace head);
//   - sdk (name, version, integrations, packages) and the envelope's `dsn`
//     header: they name the sender, which differs by design;
//   - modules: sentry-go lists the Go modules of its own process, which the
//     collector cannot know;
//   - contexts.runtime go_maxprocs/go_numcgocalls/go_numroutines and
//     contexts.device: live figures of the SDK's own process; OTel resources
//     carry no equivalent (host.arch only with a host detector this program
//     does not use);
//   - request headers other than User-Agent: otelhttp records only
//     user_agent.original unless told to capture headers;
//   - the exception chain's stack frames outside app_test.go: the frames of
//     each instrumentation's own adapter and of its SDK differ by nature.
var checks = []check{
	{"exporter envelopes pass the strict Relay model (envelope.Validate)", func(_, o *view) []diff {
		return same("invalid envelopes", "", strings.Join(o.invalid, "; "))
	}},
	// Transactions (issue 7: names, sources, ops, statuses, parent links, child spans).
	{"transactions: one per request served", func(s, o *view) []diff {
		return same("transactions", strings.Join(keys(s.transactions), ", "), strings.Join(keys(o.transactions), ", "))
	}},
	txField("transaction name", func(_ *view, tx map[string]any) string { return str(tx, "transaction") }),
	txField("transaction_info.source", func(_ *view, tx map[string]any) string { return str(tx, "transaction_info", "source") }),
	txField("contexts.trace.op", func(_ *view, tx map[string]any) string { return str(tx, "contexts", "trace", "op") }),
	txField("contexts.trace.status", func(_ *view, tx map[string]any) string { return str(tx, "contexts", "trace", "status") }),
	txField("parent link", func(v *view, tx map[string]any) string {
		return v.ref(str(tx, "contexts", "trace", "parent_span_id"))
	}),
	txField("child span count", func(_ *view, tx map[string]any) string { return fmt.Sprint(len(list(tx, "spans"))) }),
	txField("child spans (op: description)", func(_ *view, tx map[string]any) string {
		var out []string
		for _, sp := range list(tx, "spans") {
			out = append(out, str(sp, "op")+": "+str(sp, "description"))
		}
		sort.Strings(out)
		return strings.Join(out, "; ")
	}),
	txField("child span status", func(_ *view, tx map[string]any) string {
		var out []string
		for _, sp := range list(tx, "spans") {
			out = append(out, str(sp, "op")+"="+str(sp, "status"))
		}
		sort.Strings(out)
		return strings.Join(out, "; ")
	}),
	txField("request.method", func(_ *view, tx map[string]any) string { return str(tx, "request", "method") }),
	txField("request.url", func(_ *view, tx map[string]any) string { return str(tx, "request", "url") }),
	txField("request.query_string", func(_ *view, tx map[string]any) string { return queryString(tx) }),
	txField("request.headers.User-Agent", func(_ *view, tx map[string]any) string { return header(tx, "User-Agent") }),
	txField("request.headers.X-Request-Id", func(_ *view, tx map[string]any) string { return header(tx, "X-Request-Id") }),
	txField("no Authorization or Cookie value anywhere (send_default_pii off)", func(_ *view, tx map[string]any) string {
		return leakedSecrets(tx)
	}),
	txField("client IP address (send_default_pii off)", func(_ *view, tx map[string]any) string { return clientIP(tx) }),
	txField("no command line or process owner (send_default_pii off)", func(_ *view, tx map[string]any) string { return processSecrets(tx) }),
	// sentry-go v0.50 writes the status code only in contexts.trace.data; issue 7
	// (and the JS SDK) want contexts.response.status_code, which Relay tags.
	{"transaction contexts.response.status_code", func(s, o *view) []diff {
		var out []diff
		for _, k := range keys(s.transactions) {
			want := str(s.transactions[k].payload, "contexts", "trace", "data", "http.response.status_code")
			got := ""
			if tx := o.transactions[k]; tx != nil {
				got = str(tx.payload, "contexts", "response", "status_code")
			}
			out = append(out, same(k, want, got)...)
		}
		return out
	}},
	txField("contexts.runtime.name", func(_ *view, tx map[string]any) string { return str(tx, "contexts", "runtime", "name") }),
	txField("contexts.runtime.version", func(_ *view, tx map[string]any) string { return str(tx, "contexts", "runtime", "version") }),
	txField("contexts.os.name", func(_ *view, tx map[string]any) string { return str(tx, "contexts", "os", "name") }),
	txField("release, environment, server_name", func(_ *view, tx map[string]any) string {
		return fields(str(tx, "release"), str(tx, "environment"), str(tx, "server_name"))
	}),

	// Error events (issue 7 point 1: one event per exception).
	{"error events: one per exception", func(s, o *view) []diff {
		return same("error events by exception type", errorCounts(s), errorCounts(o))
	}},
	errField("exception value", func(_ *view, ev map[string]any) string { return str(mainException(ev), "value") }),
	errField("exception count (chain)", func(_ *view, ev map[string]any) string { return fmt.Sprint(len(exceptions(ev))) }),
	errField("stack frames in app_test.go (module function:line in_app)", func(_ *view, ev map[string]any) string {
		return appFrames(mainException(ev))
	}),
	errField("level", func(_ *view, ev map[string]any) string { return str(ev, "level") }),
	errField("contexts.trace link", func(v *view, ev map[string]any) string {
		return v.ref(str(ev, "contexts", "trace", "span_id"))
	}),
	// sentry-go v0.50 leaves `transaction` off error events; issue 7 (and the
	// JS SDK) want the name of the segment the error happened in.
	{"error transaction = its segment's name", func(s, o *view) []diff {
		var out []diff
		for _, k := range keys(s.errors) {
			want := ""
			if seg := s.segmentOf(str(s.errors[k][0].payload, "contexts", "trace", "span_id")); seg != nil {
				want = str(seg.payload, "transaction")
			}
			if len(o.errors[k]) == 0 {
				out = append(out, same(k, want, "<no event>")...)
			}
			for i, ev := range o.errors[k] {
				out = append(out, same(fmt.Sprintf("%s (event %d of %d)", k, i+1, len(o.errors[k])), want, str(ev.payload, "transaction"))...)
			}
		}
		return out
	}},
	// sentry-go v0.50 writes no contexts.response; issue 7 wants error events,
	// those derived from logs included, to carry the status code of the
	// segment they happened in, as its transaction does.
	{"error contexts.response.status_code = its segment's", func(s, o *view) []diff {
		var out []diff
		for _, k := range keys(s.errors) {
			want := ""
			if seg := s.segmentOf(str(s.errors[k][0].payload, "contexts", "trace", "span_id")); seg != nil {
				want = str(seg.payload, "contexts", "trace", "data", "http.response.status_code")
			}
			if len(o.errors[k]) == 0 {
				out = append(out, same(k, want, "<no event>")...)
			}
			for i, ev := range o.errors[k] {
				out = append(out, same(fmt.Sprintf("%s (event %d of %d)", k, i+1, len(o.errors[k])), want,
					str(ev.payload, "contexts", "response", "status_code"))...)
			}
		}
		return out
	}},
	errField("request.method", func(_ *view, ev map[string]any) string { return str(ev, "request", "method") }),
	errField("request.url", func(_ *view, ev map[string]any) string { return str(ev, "request", "url") }),
	errField("request.query_string", func(_ *view, ev map[string]any) string { return queryString(ev) }),
	errField("request.headers.User-Agent", func(_ *view, ev map[string]any) string { return header(ev, "User-Agent") }),
	errField("request.headers.X-Request-Id", func(_ *view, ev map[string]any) string { return header(ev, "X-Request-Id") }),
	errField("no Authorization or Cookie value anywhere (send_default_pii off)", func(_ *view, ev map[string]any) string {
		return leakedSecrets(ev)
	}),
	errField("client IP address (send_default_pii off)", func(_ *view, ev map[string]any) string { return clientIP(ev) }),
	errField("no command line or process owner (send_default_pii off)", func(_ *view, ev map[string]any) string { return processSecrets(ev) }),
	errField("contexts.runtime.name version", func(_ *view, ev map[string]any) string {
		return fields(str(ev, "contexts", "runtime", "name"), str(ev, "contexts", "runtime", "version"))
	}),
	errField("contexts.os.name", func(_ *view, ev map[string]any) string { return str(ev, "contexts", "os", "name") }),
	errField("release, environment, server_name", func(_ *view, ev map[string]any) string {
		return fields(str(ev, "release"), str(ev, "environment"), str(ev, "server_name"))
	}),

	// The envelope `trace` header (issue 7 point 4): every envelope of a trace
	// carries the trace head's DSC. The expected values come from sentry-go's
	// transactions (the head's name) and its DSC (sampled, sample_rate), not
	// from its error envelopes' headers, which lack `transaction`.
	{"envelope trace header = the trace head's DSC", func(s, o *view) []diff {
		var want dscWant
		for _, envs := range s.traces {
			want.sampled, want.sampleRate = str(envs[0].dsc, "sampled"), str(envs[0].dsc, "sample_rate")
			break
		}
		var out []diff
		ids := keys(o.traces) // trace IDs are random: order the traces by their head
		sort.SliceStable(ids, func(i, j int) bool { return o.headKey(ids[i]) < o.headKey(ids[j]) })
		for _, id := range ids {
			head := o.head(id)
			headKey, headName := "<no head transaction>", ""
			if head != nil {
				headKey = txKey(head.payload)
				if sh := s.transactions[headKey]; sh != nil {
					headName = str(sh.payload, "transaction")
				}
			}
			for i, e := range o.traces[id] {
				where := fmt.Sprintf("trace of %s, envelope %d (%s)", headKey, i, e.carries)
				out = append(out, same(where+" transaction", headName, str(e.dsc, "transaction"))...)
				out = append(out, same(where+" sampled", want.sampled, str(e.dsc, "sampled"))...)
				out = append(out, same(where+" sample_rate", want.sampleRate, str(e.dsc, "sample_rate"))...)
				out = append(out, same(where+" public_key release environment", fields("key", release, environment),
					fields(str(e.dsc, "public_key"), str(e.dsc, "release"), str(e.dsc, "environment")))...)
			}
		}
		return out
	}},

	// Logs (issue 7 point 5).
	{"logs: one per record", func(s, o *view) []diff {
		return same("log bodies", strings.Join(keys(s.logs), ", "), strings.Join(keys(o.logs), ", "))
	}},
	logField("level severity_number", func(_ *view, l *logRecord) string {
		return fields(str(l.item, "level"), str(l.item, "severity_number"))
	}),
	// sentry-go writes the span as the record's span_id, the JS SDK as the
	// attribute sentry.trace.parent_span_id; either is a link.
	logField("span link", func(v *view, l *logRecord) string {
		id := str(l.item, "span_id")
		if id == "" {
			id = str(l.item, "attributes", "sentry.trace.parent_span_id", "value")
		}
		return v.ref(id)
	}),
	{"log attributes the SDK sends (type and value)", func(s, o *view) []diff {
		var out []diff
		for _, body := range keys(s.logs) {
			ol := o.logs[body]
			for _, k := range keys(attrs(s.logs[body])) {
				want, got := attrs(s.logs[body])[k], ""
				if ol != nil {
					got = attrs(ol)[k]
					for _, alias := range logAttrAliases[k] {
						if got == "" {
							got = attrs(ol)[alias]
						}
					}
				}
				if valueDiffersByNature[k] {
					want, got = typeOnly(want), typeOnly(got)
				}
				out = append(out, same(body+": "+k, want, got)...)
			}
		}
		return out
	}},
	{"log attributes beyond the SDK's (resource attributes Sentry's UI uses)", func(s, o *view) []diff {
		var out []diff
		for _, body := range keys(s.logs) {
			if o.logs[body] == nil {
				continue
			}
			sdkAttrs := attrs(s.logs[body])
			var extra []string
			for _, k := range keys(attrs(o.logs[body])) {
				if _, ok := sdkAttrs[k]; !ok && !allowedExtraLogAttr(k) && !aliasOfPresent(k, sdkAttrs) {
					extra = append(extra, k)
				}
			}
			out = append(out, same(body+": extra attributes", "", strings.Join(extra, ", "))...)
		}
		return out
	}},
	{"log bytes per record within 1.5x of the SDK's", func(s, o *view) []diff {
		var out []diff
		for _, body := range keys(s.logs) {
			if o.logs[body] == nil {
				continue
			}
			sb, ob := s.logs[body].raw, o.logs[body].raw
			if float64(ob) > 1.5*float64(sb) {
				out = append(out, diff{
					body + ": bytes", fmt.Sprintf("<= %d (1.5 x %d)", sb*3/2, sb),
					fmt.Sprintf("%d (%.2fx)", ob, float64(ob)/float64(sb)),
				})
			}
		}
		return out
	}},
}

// valueDiffersByNature lists log attributes compared by type only: the
// sender's name, and a stack trace taken in each side's own adapter.
var valueDiffersByNature = map[string]bool{
	"sentry.sdk.name": true, "sentry.sdk.version": true, "exception.stacktrace": true,
}

// logAttrAliases are other names under which a log attribute sentry-go sends
// counts as present: sentry-go writes the host as sentry.server.address, the
// JS SDK (@sentry/node 11.12) and Sentry's conventions (0.33) as server.address.
var logAttrAliases = map[string][]string{
	"sentry.server.address": {"server.address"},
}

// aliasOfPresent: k is another name (logAttrAliases) of an attribute the
// SDK sent.
func aliasOfPresent(k string, sdk map[string]string) bool {
	for sk, aliases := range logAttrAliases {
		if _, ok := sdk[sk]; ok && slices.Contains(aliases, k) {
			return true
		}
	}
	return false
}

// typeOnly keeps the type of a "type value" attribute.
func typeOnly(tv string) string {
	typ, _, _ := strings.Cut(tv, " ")
	return typ
}

type dscWant struct{ sampled, sampleRate string }

// allowedExtraLogAttr lists what the exporter may add to a log record beyond
// what sentry-go sends: the resource's service identity and what Sentry's
// logs UI shows (issue 7 point 5: "service, environment, release, host"),
// and the OTel instrumentation scope and origin, which say where it came from.
func allowedExtraLogAttr(k string) bool {
	switch k {
	case "service.name", "service.version", "service.namespace", "service.instance.id",
		"deployment.environment.name", "deployment.environment", "host.name",
		"otel.scope.name", "otel.scope.version", "sentry.origin":
		return true
	}
	return false
}
