package envelope

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// isLowerHex reports whether s is n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

// checkID says what is wrong with a trace ID (n = 32) or span ID (n = 16), or "" if nothing.
// Relay marks an all-zero ID invalid (relay-event-schema/src/protocol/contexts/trace.rs).
func checkID(s string, n int) string {
	if !isLowerHex(s, n) {
		return fmt.Sprintf("%q is not %d lowercase hex characters", s, n)
	}
	if strings.Trim(s, "0") == "" {
		return "is all zeros"
	}
	return ""
}

// id checks obj[key] as a trace or span ID of n hex digits, and returns it.
// A missing or null ID is a problem only when required.
func (v *validator) id(where string, obj map[string]any, key string, n int, required bool) string {
	raw, ok := obj[key]
	if !ok || raw == nil {
		if required {
			v.failf(where, "%s is missing", key)
		}
		return ""
	}
	s, ok := raw.(string)
	if !ok {
		v.failf(where, "%s is not a string", key)
		return ""
	}
	if msg := checkID(s, n); msg != "" {
		v.failf(where, "%s %s", key, msg)
	}
	return s
}

// parseFinite parses a JSON number or numeric string as a finite float64.
func parseFinite(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// timestamp checks obj[key] as a required timestamp: a finite number of seconds since the
// Unix epoch or an RFC 3339 string. It returns the seconds and whether they are usable.
func (v *validator) timestamp(where string, obj map[string]any, key string) (float64, bool) {
	switch t := obj[key].(type) {
	case nil:
		v.failf(where, "%s is missing", key)
	case json.Number:
		if f, ok := parseFinite(t.String()); ok {
			return f, true
		}
		v.failf(where, "%s %s is not a finite number", key, t)
	case string:
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return float64(ts.UnixNano()) / 1e9, true
		}
		v.failf(where, "%s %q is not an RFC 3339 timestamp", key, t)
	default:
		v.failf(where, "%s is neither a number nor a string", key)
	}
	return 0, false
}

// timeRange checks that startKey is not after endKey, both required timestamps.
func (v *validator) timeRange(where string, obj map[string]any, startKey, endKey string) {
	start, ok1 := v.timestamp(where, obj, startKey)
	end, ok2 := v.timestamp(where, obj, endKey)
	if ok1 && ok2 && start > end {
		v.failf(where, "%s is after %s", startKey, endKey)
	}
}

// requiredString checks that obj[key] is a non-empty string and returns it.
func (v *validator) requiredString(where string, obj map[string]any, key string) (string, bool) {
	switch s := obj[key].(type) {
	case nil:
		v.failf(where, "%s is missing", key)
	case string:
		if s != "" {
			return s, true
		}
		v.failf(where, "%s is empty", key)
	default:
		v.failf(where, "%s is not a string", key)
	}
	return "", false
}

// objectAt returns obj[key] as an object; a present non-object is a problem.
func (v *validator) objectAt(where string, obj map[string]any, key string) (map[string]any, bool) {
	raw, ok := obj[key]
	if !ok || raw == nil {
		return nil, false
	}
	m, ok := raw.(map[string]any)
	if !ok {
		v.failf(where, "%s is not an object", key)
	}
	return m, ok
}

// arrayAt returns obj[key] as an array, nil when it is absent; a present
// non-array is a problem.
func (v *validator) arrayAt(where string, obj map[string]any, key string) []any {
	raw, ok := obj[key]
	if !ok || raw == nil {
		return nil
	}
	a, ok := raw.([]any)
	if !ok {
		v.failf(where, "%s is not an array", key)
	}
	return a
}

// eachObject calls check on each element of arr that is an object, at "where name[i]";
// any other element is a problem.
func (v *validator) eachObject(where, name string, arr []any, check func(at string, obj map[string]any)) {
	for i, raw := range arr {
		at := fmt.Sprintf("%s %s[%d]", where, name, i)
		obj, ok := raw.(map[string]any)
		if !ok {
			v.failf(at, "is not an object")
			continue
		}
		check(at, obj)
	}
}

// traceSet collects the trace IDs of a container's items: a log or trace metric
// container may mix traces only when the envelope has no `trace` header.
type traceSet map[string]bool

// add records a non-empty trace ID.
func (s traceSet) add(id string) {
	if id != "" {
		s[id] = true
	}
}

// check fails when the container mixes traces under a `trace` header; what names its items.
func (s traceSet) check(v *validator, where, what string) {
	if len(s) > 1 && v.env.Header.Trace != nil {
		v.failf(where, "%s from %d traces in one container, but the envelope has a trace header", what, len(s))
	}
}
