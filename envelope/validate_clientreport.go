package envelope

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// maxReasonLen is the longest discard reason Relay keeps
// (relay-server/src/processing/client_reports).
const maxReasonLen = 200

// clientReport checks a client report payload (develop docs telemetry/client-reports.mdx,
// Relay protocol/client_report.rs): discarded_events is required, each entry has a reason of
// at most 200 characters, a category and a u64 quantity; the timestamp, if any, is valid; and
// the Relay-only lists are absent.
func (v *validator) clientReport(where string, obj map[string]any) {
	if _, ok := obj["timestamp"]; ok {
		v.timestamp(where, obj, "timestamp")
	}
	for _, k := range []string{"rate_limited_events", "filtered_events", "filtered_sampling_events"} {
		if _, ok := obj[k]; ok {
			v.failf(where, "%s is reserved for Relays", k)
		}
	}
	if obj["discarded_events"] == nil {
		v.failf(where, "discarded_events is missing")
		return
	}
	v.eachObject(where, "discarded_events", v.arrayAt(where, obj, "discarded_events"), func(at string, d map[string]any) {
		if reason, has := v.requiredString(at, d, "reason"); has && utf8.RuneCountInString(reason) > maxReasonLen {
			v.failf(at, "reason is longer than %d characters", maxReasonLen)
		}
		v.requiredString(at, d, "category")
		n, ok := d["quantity"].(json.Number)
		if !ok {
			v.failf(at, "quantity is missing or not a number")
		} else if _, err := strconv.ParseUint(n.String(), 10, 64); err != nil {
			v.failf(at, "quantity %s is not an unsigned 64-bit integer", n)
		}
	})
}
