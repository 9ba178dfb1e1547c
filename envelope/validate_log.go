package envelope

import "fmt"

// logLevels are the levels Relay stores as such (relay-event-schema/src/protocol/ourlog/mod.rs);
// anything else becomes "unknown".
var logLevels = map[string]bool{"trace": true, "debug": true, "info": true, "warn": true, "error": true, "fatal": true}

// logs checks the logs of a log container: timestamp, trace_id, level and body are required,
// span_id is optional, attributes are typed. Logs from several traces may share a container
// only when the envelope has no `trace` header.
func (v *validator) logs(where string, items []any) {
	traces := map[string]bool{}
	for i, raw := range items {
		at := fmt.Sprintf("%s items[%d]", where, i)
		log, ok := raw.(map[string]any)
		if !ok {
			v.failf(at, "is not an object")
			continue
		}
		v.timestamp(at, log, "timestamp")
		if id := v.id(at, log, "trace_id", 32, true); id != "" {
			traces[id] = true
		}
		v.id(at, log, "span_id", 16, false)
		if level, ok := v.requiredString(at, log, "level"); ok && !logLevels[level] {
			v.failf(at, "level %q is not one of trace, debug, info, warn, error, fatal", level)
		}
		if _, ok := log["body"].(string); !ok {
			v.failf(at, "body is missing or not a string")
		}
		v.attributes(at, log)
	}
	if len(traces) > 1 && v.env.Header.Trace != nil {
		v.failf(where, "logs from %d traces in one container, but the envelope has a trace header", len(traces))
	}
}
