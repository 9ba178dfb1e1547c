package conformance

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// view is what a Sentry user sees of one run: transactions, error events and
// logs, with the values that differ by nature between two runs (ports, IDs)
// replaced or turned into structure (which span of which transaction).
type view struct {
	transactions map[string]*event   // by txKey
	errors       map[string][]*event // by exception type, in arrival order
	logs         map[string]*logRecord
	traces       map[string][]envelopeTrace // trace header of every envelope, by trace_id
	spanOwner    map[string]spanRef         // span_id -> which span of which transaction
	invalid      []string                   // what the strict Relay model rejected, by envelope
}

// event is a transaction or an error event payload with its envelope's trace header.
type event struct {
	payload map[string]any
	dsc     map[string]any
}

type logRecord struct {
	item map[string]any
	raw  int // bytes of this record's JSON in the container
}

// envelopeTrace is one envelope's `trace` header and what the envelope carried.
type envelopeTrace struct {
	carries string // item types
	dsc     map[string]any
}

// spanRef names a span by structure: the transaction (txKey) it belongs to
// and its op ("" for the transaction's root span).
type spanRef struct{ tx, op string }

func (r spanRef) String() string {
	if r.op == "" {
		return "root span of " + r.tx
	}
	return r.op + " span of " + r.tx
}

// appAddr matches the program's and the sink's listen addresses, which
// differ between the two runs by nature.
var appAddr = regexp.MustCompile(`127\.0\.0\.1:\d+`)

func normalize(s string) string { return appAddr.ReplaceAllString(s, "127.0.0.1:PORT") }

func newView(envs []captured) *view {
	v := &view{
		transactions: map[string]*event{},
		errors:       map[string][]*event{},
		logs:         map[string]*logRecord{},
		traces:       map[string][]envelopeTrace{},
		spanOwner:    map[string]spanRef{},
	}
	for i, env := range envs {
		if err := validate(env.raw); err != nil {
			v.invalid = append(v.invalid, fmt.Sprintf("envelope %d: %v", i, err))
		}
		dsc, _ := env.header["trace"].(map[string]any)
		var types []string
		for _, it := range env.items {
			switch it.typ() {
			case "transaction":
				v.transactions[txKey(it.payload)] = &event{payload: it.payload, dsc: dsc}
			case "event":
				typ := str(mainException(it.payload), "type")
				v.errors[typ] = append(v.errors[typ], &event{payload: it.payload, dsc: dsc})
			case "log":
				for _, rec := range containerItems(it.raw) {
					v.logs[str(rec.item, "body")] = rec
				}
			case "client_report":
				continue
			}
			types = append(types, it.typ())
		}
		if id := str(dsc, "trace_id"); id != "" && len(types) > 0 {
			v.traces[id] = append(v.traces[id], envelopeTrace{carries: strings.Join(types, "+"), dsc: dsc})
		}
	}
	for _, envs := range v.traces { // arrival order differs between runs; print in a stable one
		sort.SliceStable(envs, func(i, j int) bool {
			return envs[i].carries+str(envs[i].dsc, "transaction") < envs[j].carries+str(envs[j].dsc, "transaction")
		})
	}
	for key, tx := range v.transactions {
		v.spanOwner[str(tx.payload, "contexts", "trace", "span_id")] = spanRef{tx: key}
		for _, sp := range list(tx.payload, "spans") {
			m, _ := sp.(map[string]any)
			v.spanOwner[str(m, "span_id")] = spanRef{tx: key, op: str(m, "op")}
		}
	}
	return v
}

// txKey identifies a transaction by the request it served ("GET /users/42"),
// which both sides know whatever they name the transaction: from `request`
// when present, else from the span's attributes (current or older names).
func txKey(tx map[string]any) string {
	data := func(k string) string { s, _ := get(tx, "contexts", "trace", "data", k).(string); return s }
	method := firstOf(str(tx, "request", "method"), data("http.request.method"), data("http.method"))
	target := firstOf(str(tx, "request", "url"), data("url.path"), data("http.target"))
	if i := strings.Index(target, "://"); i >= 0 { // a full URL: keep its path
		target = target[i+3:]
		target = target[strings.IndexByte(target+"/", '/'):]
	}
	path, _, _ := strings.Cut(target, "?")
	return method + " " + path
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// ref is where a span ID points, by structure.
func (v *view) ref(spanID string) string {
	if spanID == "" {
		return "<none>"
	}
	if r, ok := v.spanOwner[spanID]; ok {
		return r.String()
	}
	return "a span that was not sent"
}

// head is the trace's root transaction: the one without a parent.
func (v *view) head(traceID string) *event {
	for _, tx := range v.transactions {
		if str(tx.payload, "contexts", "trace", "trace_id") == traceID && str(tx.payload, "contexts", "trace", "parent_span_id") == "" {
			return tx
		}
	}
	return nil
}

// headKey is the txKey of the trace's head, or "" when it was not sent.
func (v *view) headKey(traceID string) string {
	if h := v.head(traceID); h != nil {
		return txKey(h.payload)
	}
	return ""
}

// segmentOf is the transaction that owns the span.
func (v *view) segmentOf(spanID string) *event {
	if r, ok := v.spanOwner[spanID]; ok {
		return v.transactions[r.tx]
	}
	return nil
}

// containerItems splits a log container into its records, each with the
// bytes it takes in the container as sent.
func containerItems(raw []byte) []*logRecord {
	var c struct {
		Items []jsonRaw `json:"items"`
	}
	if err := unmarshal(raw, &c); err != nil {
		return nil
	}
	out := make([]*logRecord, 0, len(c.Items))
	for _, r := range c.Items {
		var m map[string]any
		if unmarshal(r, &m) == nil {
			out = append(out, &logRecord{item: m, raw: len(r)})
		}
	}
	return out
}

// str reads a nested member ("0" indexes a list) as a string: absent is "",
// numbers and bools are printed, and addresses are normalized.
func str(m any, path ...string) string {
	v := get(m, path...)
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return normalize(x)
	case float64:
		return fmt.Sprint(x)
	default:
		b, _ := marshal(x)
		return normalize(string(b))
	}
}

func get(m any, path ...string) any {
	cur := m
	for _, p := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func list(m any, path ...string) []any { l, _ := get(m, path...).([]any); return l }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// show prints a value for a diff; absent values are visible as such.
func show(s string) string {
	if s == "" {
		return "<absent>"
	}
	return fmt.Sprintf("%q", s)
}

// exceptions is the event's exception list; both {"values":[...]} and the
// bare list (sentry-go) are valid.
func exceptions(ev map[string]any) []any {
	if l := list(ev, "exception"); l != nil {
		return l
	}
	return list(ev, "exception", "values")
}

// mainException is the last exception: the one Sentry titles the issue with.
func mainException(ev map[string]any) any {
	l := exceptions(ev)
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}
