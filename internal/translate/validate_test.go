package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"unicode/utf8"
)

// A strict payload checker mirroring what Relay rejects (protocol notes §3).

var (
	hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex16 = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

func decode(p []byte) (map[string]any, error) {
	if !utf8.Valid(p) {
		return nil, fmt.Errorf("invalid UTF-8")
	}
	if bytes.IndexByte(p, 0) >= 0 {
		return nil, fmt.Errorf("raw NUL byte")
	}
	if bytes.Contains(p, []byte(`\u0000`)) {
		return nil, fmt.Errorf("escaped NUL")
	}
	d := json.NewDecoder(bytes.NewReader(p))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return m, nil
}

func checkID(m map[string]any, k string, re *regexp.Regexp, required bool) error {
	v, ok := m[k]
	if !ok {
		if required {
			return fmt.Errorf("missing %s", k)
		}
		return nil
	}
	s, _ := v.(string)
	if !re.MatchString(s) || s == "00000000000000000000000000000000" || s == "0000000000000000" {
		return fmt.Errorf("bad %s %q", k, s)
	}
	return nil
}

func checkTS(m map[string]any, k string) (float64, error) {
	n, ok := m[k].(json.Number)
	if !ok {
		return 0, fmt.Errorf("missing or non-number %s", k)
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("bad %s %v", k, n)
	}
	return f, nil
}

func checkSpan(m map[string]any, endKey string) error {
	for _, c := range []struct {
		k   string
		re  *regexp.Regexp
		req bool
	}{{"trace_id", hex32, true}, {"span_id", hex16, true}, {"parent_span_id", hex16, false}} {
		if err := checkID(m, c.k, c.re, c.req); err != nil {
			return err
		}
	}
	s, err := checkTS(m, "start_timestamp")
	if err != nil {
		return err
	}
	e, err := checkTS(m, endKey)
	if err != nil {
		return err
	}
	if s > e {
		return fmt.Errorf("start %v > end %v", s, e)
	}
	return nil
}

var spanStatuses = []string{"ok", "cancelled", "unknown", "unknown_error", "invalid_argument",
	"deadline_exceeded", "not_found", "already_exists", "permission_denied", "resource_exhausted",
	"failed_precondition", "aborted", "out_of_range", "unimplemented", "internal_error",
	"unavailable", "data_loss", "unauthenticated"}

func checkTags(m map[string]any) error {
	t, ok := m["tags"]
	if !ok {
		return nil
	}
	tm, ok := t.(map[string]any)
	if !ok {
		return fmt.Errorf("tags not an object")
	}
	for k, v := range tm {
		if _, ok := v.(string); !ok {
			return fmt.Errorf("tag %s not a string", k)
		}
	}
	return nil
}

func checkTyped(attrs any) error {
	am, ok := attrs.(map[string]any)
	if !ok {
		return fmt.Errorf("attributes not an object")
	}
	for k, a := range am {
		o, ok := a.(map[string]any)
		if !ok || len(o) != 2 {
			return fmt.Errorf("attribute %s: not {type,value}", k)
		}
		v := o["value"]
		okv := false
		switch o["type"] {
		case "string":
			_, okv = v.(string)
		case "boolean":
			_, okv = v.(bool)
		case "integer":
			n, isNum := v.(json.Number)
			_, err := n.Int64()
			okv = isNum && err == nil
		case "double":
			n, isNum := v.(json.Number)
			okv = isNum && bytes.ContainsAny([]byte(n), ".eE")
		case "array":
			arr, isArr := v.([]any)
			okv = isArr
			for i := range arr {
				switch arr[i].(type) {
				case string, bool, json.Number:
				default:
					okv = false
				}
				if i > 0 && fmt.Sprintf("%T", arr[i]) != fmt.Sprintf("%T", arr[0]) {
					okv = false
				}
			}
		}
		if !okv {
			return fmt.Errorf("attribute %s: type %v does not match value %v", k, o["type"], v)
		}
	}
	return nil
}

func checkTransaction(p []byte) (map[string]any, error) {
	m, err := decode(p)
	if err != nil {
		return nil, err
	}
	if m["type"] != "transaction" {
		return nil, fmt.Errorf("type %v", m["type"])
	}
	if err := checkID(m, "event_id", hex32, true); err != nil {
		return nil, err
	}
	if _, err := checkTS(m, "start_timestamp"); err != nil {
		return nil, err
	}
	src := m["transaction_info"].(map[string]any)["source"]
	if !slices.Contains([]any{"custom", "url", "route", "view", "component", "task"}, src) {
		return nil, fmt.Errorf("source %v", src)
	}
	if name, _ := m["transaction"].(string); name == "" {
		return nil, fmt.Errorf("empty transaction name")
	}
	tc := m["contexts"].(map[string]any)["trace"].(map[string]any)
	tc["start_timestamp"], tc["timestamp"] = m["start_timestamp"], m["timestamp"]
	if err := checkSpan(tc, "timestamp"); err != nil {
		return nil, fmt.Errorf("contexts.trace: %w", err)
	}
	delete(tc, "start_timestamp")
	delete(tc, "timestamp")
	if !slices.Contains(spanStatuses, tc["status"].(string)) {
		return nil, fmt.Errorf("status %v", tc["status"])
	}
	if err := checkTags(m); err != nil {
		return nil, err
	}
	for _, c := range m["spans"].([]any) {
		cm := c.(map[string]any)
		if err := checkSpan(cm, "timestamp"); err != nil {
			return nil, fmt.Errorf("child: %w", err)
		}
		if !slices.Contains(spanStatuses, cm["status"].(string)) {
			return nil, fmt.Errorf("status %v", cm["status"])
		}
		if cm["trace_id"] != tc["trace_id"] {
			return nil, fmt.Errorf("child of another trace")
		}
	}
	return m, nil
}

func checkSpanV2(p []byte) (map[string]any, error) {
	m, err := decode(p)
	if err != nil {
		return nil, err
	}
	if err := checkSpan(m, "end_timestamp"); err != nil {
		return nil, err
	}
	if name, _ := m["name"].(string); name == "" {
		return nil, fmt.Errorf("empty name")
	}
	if st := m["status"]; st != "ok" && st != "error" {
		return nil, fmt.Errorf("status %v", st)
	}
	if _, ok := m["is_segment"].(bool); !ok {
		return nil, fmt.Errorf("is_segment")
	}
	if err := checkTyped(m["attributes"]); err != nil {
		return nil, err
	}
	if ls, ok := m["links"]; ok {
		for _, l := range ls.([]any) {
			lm := l.(map[string]any)
			if err := checkID(lm, "trace_id", hex32, true); err != nil {
				return nil, err
			}
			if err := checkID(lm, "span_id", hex16, true); err != nil {
				return nil, err
			}
			if a, ok := lm["attributes"]; ok {
				if err := checkTyped(a); err != nil {
					return nil, err
				}
			}
		}
	}
	return m, nil
}

func checkError(p []byte) (map[string]any, error) {
	m, err := decode(p)
	if err != nil {
		return nil, err
	}
	if err := checkID(m, "event_id", hex32, true); err != nil {
		return nil, err
	}
	if _, err := checkTS(m, "timestamp"); err != nil {
		return nil, err
	}
	tc := m["contexts"].(map[string]any)["trace"].(map[string]any)
	if err := checkID(tc, "trace_id", hex32, true); err != nil {
		return nil, err
	}
	if err := checkID(tc, "span_id", hex16, true); err != nil {
		return nil, err
	}
	for _, e := range m["exception"].(map[string]any)["values"].([]any) {
		em := e.(map[string]any)
		if em["type"] == nil && em["value"] == nil {
			return nil, fmt.Errorf("exception without type and value")
		}
		if mech, ok := em["mechanism"].(map[string]any); ok && mech["type"] == nil {
			return nil, fmt.Errorf("mechanism without type")
		}
	}
	if err := checkTags(m); err != nil {
		return nil, err
	}
	return m, nil
}

func checkLog(p []byte) (map[string]any, error) {
	m, err := decode(p)
	if err != nil {
		return nil, err
	}
	if _, err := checkTS(m, "timestamp"); err != nil {
		return nil, err
	}
	if err := checkID(m, "trace_id", hex32, true); err != nil {
		return nil, err
	}
	if err := checkID(m, "span_id", hex16, false); err != nil {
		return nil, err
	}
	if !slices.Contains([]any{"trace", "debug", "info", "warn", "error", "fatal"}, m["level"]) {
		return nil, fmt.Errorf("level %v", m["level"])
	}
	if _, ok := m["body"].(string); !ok {
		return nil, fmt.Errorf("body not a string")
	}
	return m, checkTyped(m["attributes"])
}
