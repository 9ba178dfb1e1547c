package errorshape

import "strconv"

// WithSegmentRequest gives an error event derived from a log record the
// request object and contexts.response.status_code of its span's segment
// (traceindex.Index.SegmentOf), as error events raised from span events inside a
// server segment have them. A member the event already has is kept: no key
// is written twice. If the payload cannot be read or the result would be too
// large, the event goes out as it was.
func WithSegmentRequest(payload, request []byte, statusCode int) []byte {
	if len(request) == 0 && statusCode <= 0 {
		return payload
	}
	ms, err := topMembers(payload)
	if err != nil {
		return payload
	}
	changed := false
	if _, ok := ms.get("request"); !ok && len(request) > 0 {
		ms.set("request", request)
		changed = true
	}
	if statusCode > 0 {
		if ctx, ok := ms.get("contexts"); ok {
			cm, err := topMembers(ctx)
			if _, has := cm.get("response"); err == nil && !has {
				cm.set("response", []byte(`{"status_code":`+strconv.Itoa(statusCode)+`}`))
				ms.set("contexts", cm.appendObject(make([]byte, 0, len(ctx)+32)))
				changed = true
			}
		}
	}
	if !changed {
		return payload
	}
	out := ms.appendObject(make([]byte, 0, len(payload)+len(request)+64))
	if len(out) > maxMergedEventBytes {
		return payload
	}
	return out
}
