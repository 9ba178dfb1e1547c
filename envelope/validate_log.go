package envelope

// logLevels are the levels Relay stores as such (relay-event-schema/src/protocol/ourlog/mod.rs);
// anything else becomes "unknown".
var logLevels = map[string]bool{"trace": true, "debug": true, "info": true, "warn": true, "error": true, "fatal": true}

// logs checks the logs of a log container: timestamp, trace_id, level and body are required,
// span_id is optional, attributes are typed. Logs from several traces may share a container
// only when the envelope has no `trace` header.
func (v *validator) logs(where string, items []any) {
	traces := traceSet{}
	v.eachObject(where, "items", items, func(at string, log map[string]any) {
		v.timestamp(at, log, "timestamp")
		traces.add(v.id(at, log, "trace_id", 32, true))
		v.id(at, log, "span_id", 16, false)
		if level, ok := v.requiredString(at, log, "level"); ok && !logLevels[level] {
			v.failf(at, "level %q is not one of trace, debug, info, warn, error, fatal", level)
		}
		if _, ok := log["body"].(string); !ok {
			v.failf(at, "body is missing or not a string")
		}
		v.attributes(at, log)
	})
	traces.check(v, where, "logs")
}
