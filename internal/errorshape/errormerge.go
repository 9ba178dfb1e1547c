package errorshape

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// maxMergedEventBytes keeps a merged error event within Relay's
// max_event_size (1 MiB).
const maxMergedEventBytes = 1 << 20

// MergeErrors makes one event of the same exception seen as a span event and
// as a log record. The span-derived event is kept (it has the transaction,
// the span's op and status); it takes the log's message when it has none,
// and the log's exception (with its stack trace) when only the log has one.
// If the payloads cannot be read or the result would be too large, the
// span-derived event goes out as it is: still one event.
func MergeErrors(span, log *translate.ErrorEvent) translate.ErrorEvent {
	out := *span
	sm, err := topMembers(span.Payload)
	if err != nil {
		return out
	}
	lm, err := topMembers(log.Payload)
	if err != nil {
		return out
	}
	changed := false
	if _, ok := sm.get("message"); !ok {
		if msg, ok := lm.get("message"); ok {
			sm = append(sm, member{key: "message", raw: msg})
			changed = true
		}
	}
	if !span.HasStacktrace && log.HasStacktrace {
		if exc, ok := lm.get("exception"); ok {
			sm.set("exception", exc)
			out.HasStacktrace = true
			changed = true
		}
	}
	if !changed {
		return out
	}
	payload := sm.appendObject(make([]byte, 0, len(span.Payload)+len(log.Payload)))
	if len(payload) > maxMergedEventBytes {
		return *span
	}
	out.Payload = payload
	return out
}

// member is one top-level member of a JSON object, its value kept raw.
type member struct {
	key string
	raw json.RawMessage
}

type members []member

// topMembers splits a JSON object into its top-level members, in order.
func topMembers(p []byte) (members, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out members
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, raw: raw})
	}
	return out, nil
}

func (ms members) get(key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.raw, true
		}
	}
	return nil, false
}

// set replaces the value of key, or appends it: a key is never written twice
// (Relay rejects an object with a duplicate key).
func (ms *members) set(key string, raw json.RawMessage) {
	for i := range *ms {
		if (*ms)[i].key == key {
			(*ms)[i].raw = raw
			return
		}
	}
	*ms = append(*ms, member{key: key, raw: raw})
}

func (ms members) appendObject(dst []byte) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstr.Append(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.raw...)
	}
	return append(dst, '}')
}

// WithTransaction returns the payload of an event that has no `transaction`
// member with one added in front. The caller knows the member is absent
// (ErrorRef.Transaction is ""), so no key is written twice.
func WithTransaction(payload []byte, name string) []byte {
	if len(payload) < 2 || payload[0] != '{' {
		return payload
	}
	out := make([]byte, 0, len(payload)+len(name)+20)
	out = append(out, `{"transaction":`...)
	out = jsonstr.Append(out, name)
	if payload[1] != '}' {
		out = append(out, ',')
	}
	return append(out, payload[1:]...)
}
