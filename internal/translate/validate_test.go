package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// The payload checks below run envelope.Validate — the same strict rules the
// fake Sentry of the exporter's tests applies, mirroring what Relay rejects —
// on each payload wrapped in the envelope it would travel in, plus the few
// properties that are this package's own promises (status and source values,
// doubles written as doubles, no NUL even escaped).

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

// validateIn wraps p into the envelope it would travel in and validates it.
func validateIn(itemType string, p []byte, m map[string]any) error {
	env := &envelope.Envelope{}
	switch itemType {
	case envelope.ItemTypeTransaction, envelope.ItemTypeEvent:
		env.Header.EventID, _ = m["event_id"].(string)
		env.Items = []envelope.Item{{Type: itemType, Payload: p}}
	case envelope.ItemTypeSpan:
		traceID, _ := m["trace_id"].(string)
		env.Header.Trace = &envelope.TraceContext{TraceID: traceID, PublicKey: "publickey"}
		env.Items = []envelope.Item{{Type: itemType, ContentType: envelope.ContentTypeSpanContainer, ItemCount: 1, Payload: envelope.AppendContainer(nil, [][]byte{p})}}
	case envelope.ItemTypeLog:
		env.Items = []envelope.Item{{Type: itemType, ContentType: envelope.ContentTypeLogContainer, ItemCount: 1, Payload: envelope.AppendContainer(nil, [][]byte{p})}}
	}
	return envelope.Validate(env, envelope.RelayDefaults())
}

var spanStatuses = []string{
	"ok", "cancelled", "unknown", "unknown_error", "invalid_argument",
	"deadline_exceeded", "not_found", "already_exists", "permission_denied", "resource_exhausted",
	"failed_precondition", "aborted", "out_of_range", "unimplemented", "internal_error",
	"unavailable", "data_loss", "unauthenticated",
}

// checkDoubles: every typed double is written as a double (a '.' or an exponent).
func checkDoubles(attrs any) error {
	am, _ := attrs.(map[string]any)
	for k, a := range am {
		o, _ := a.(map[string]any)
		if o["type"] != "double" {
			continue
		}
		if n, ok := o["value"].(json.Number); !ok || !strings.ContainsAny(string(n), ".eE") {
			return fmt.Errorf("attribute %s: double written as %v", k, o["value"])
		}
	}
	return nil
}

func checkTransaction(p []byte) (map[string]any, error) {
	m, err := decode(p)
	if err != nil {
		return nil, err
	}
	if err := validateIn(envelope.ItemTypeTransaction, p, m); err != nil {
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
	if !slices.Contains(spanStatuses, tc["status"].(string)) {
		return nil, fmt.Errorf("status %v", tc["status"])
	}
	for _, c := range m["spans"].([]any) {
		cm := c.(map[string]any)
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
	if err := validateIn(envelope.ItemTypeSpan, p, m); err != nil {
		return nil, err
	}
	if st := m["status"]; st != "ok" && st != "error" {
		return nil, fmt.Errorf("status %v", st)
	}
	return m, checkDoubles(m["attributes"])
}

func checkError(p []byte) (map[string]any, error) {
	m, err := decode(p)
	if err != nil {
		return nil, err
	}
	if err := validateIn(envelope.ItemTypeEvent, p, m); err != nil {
		return nil, err
	}
	tc, _ := m["contexts"].(map[string]any)["trace"].(map[string]any)
	if tc == nil || tc["trace_id"] == nil || tc["span_id"] == nil {
		return nil, fmt.Errorf("error event not linked to its trace")
	}
	return m, nil
}

func checkLog(p []byte) (map[string]any, error) {
	m, err := decode(p)
	if err != nil {
		return nil, err
	}
	if err := validateIn(envelope.ItemTypeLog, p, m); err != nil {
		return nil, err
	}
	if _, ok := m["body"].(string); !ok {
		return nil, fmt.Errorf("body not a string")
	}
	return m, checkDoubles(m["attributes"])
}
