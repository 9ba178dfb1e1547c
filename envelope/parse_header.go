package envelope

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// decode fills h from a decoded envelope header object.
func (h *Header) decode(obj map[string]any) error {
	if v, ok := obj["event_id"]; ok && v != nil {
		s, ok := v.(string)
		if !ok || !isUUID(s) {
			return errors.New("event_id is not a UUID")
		}
		h.EventID = s
	}
	if v, ok := obj["sent_at"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return errors.New("sent_at is not a string")
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return errors.New("sent_at is not an RFC 3339 timestamp")
		}
		h.SentAt = t.UTC()
	}
	if v, ok := obj["sdk"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return errors.New("sdk is not an object")
		}
		sdk := &SDKInfo{}
		for k, dst := range map[string]*string{"name": &sdk.Name, "version": &sdk.Version} {
			if s, ok := m[k]; ok && s != nil {
				if *dst, ok = s.(string); !ok {
					return fmt.Errorf("sdk.%s is not a string", k)
				}
			}
		}
		h.SDK = sdk
	}
	if v, ok := obj["trace"]; ok && v != nil {
		h.Trace, h.traceErr = decodeTrace(v)
	}
	return nil
}

// decodeTrace reads a DSC the way Relay's DynamicSamplingContext would, but keeps what it
// could read and returns the problems instead of failing (Relay's ErrorBoundary).
func decodeTrace(v any) (*TraceContext, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return &TraceContext{}, errors.New("trace header is not an object")
	}
	t := &TraceContext{}
	var errs []error
	for k, dst := range map[string]*string{
		"trace_id": &t.TraceID, "public_key": &t.PublicKey, "release": &t.Release,
		"environment": &t.Environment, "transaction": &t.Transaction,
	} {
		if s, ok := m[k]; ok && s != nil {
			if *dst, ok = s.(string); !ok {
				errs = append(errs, fmt.Errorf("trace.%s is not a string", k))
			}
		}
	}
	switch s := m["sample_rate"].(type) {
	case nil:
	case string:
		t.SampleRate = s
	case json.Number:
		t.SampleRate = s.String()
		errs = append(errs, errors.New("trace.sample_rate is a JSON number, Relay needs a string"))
	default:
		errs = append(errs, errors.New("trace.sample_rate is not a string"))
	}
	switch s := m["sample_rand"].(type) {
	case nil:
	case string:
		t.SampleRand = s
	case json.Number:
		t.SampleRand = s.String()
	default:
		errs = append(errs, errors.New("trace.sample_rand is neither a string nor a number"))
	}
	switch s := m["sampled"].(type) {
	case nil:
	case bool:
		t.Sampled = strconv.FormatBool(s)
	case string:
		t.Sampled = s
		if s != "true" && s != "false" {
			errs = append(errs, errors.New(`trace.sampled is neither a bool nor "true" or "false"`))
		}
	default:
		errs = append(errs, errors.New("trace.sampled is not a bool"))
	}
	return t, errors.Join(errs...)
}

// decodeItemHeader reads an item header object. length is -1 when the header has none.
func decodeItemHeader(obj map[string]any) (it Item, length int, err error) {
	ty, ok := obj["type"].(string)
	if !ok {
		return Item{}, 0, errors.New("type is missing or not a string")
	}
	it.Type = ty
	if v, ok := obj["content_type"]; ok && v != nil {
		if it.ContentType, ok = v.(string); !ok {
			return Item{}, 0, errors.New("content_type is not a string")
		}
	}
	length = -1
	if v, ok := obj["length"]; ok && v != nil {
		if length, err = decodeU32(v); err != nil {
			return Item{}, 0, fmt.Errorf("length %w", err)
		}
	}
	if v, ok := obj["item_count"]; ok && v != nil {
		if it.ItemCount, err = decodeU32(v); err != nil {
			return Item{}, 0, fmt.Errorf("item_count %w", err)
		}
	}
	if v, ok := obj["platform"]; ok && v != nil {
		if it.Platform, ok = v.(string); !ok {
			return Item{}, 0, errors.New("platform is not a string")
		}
	}
	return it, length, nil
}

// decodeU32 reads a JSON integer in the range of Relay's u32.
func decodeU32(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("is not a number")
	}
	u, err := strconv.ParseUint(n.String(), 10, 32)
	if err != nil {
		return 0, errors.New("is not an unsigned 32-bit integer")
	}
	return int(u), nil
}

// isUUID reports whether s is a UUID in the simple (32 hex) or hyphenated (8-4-4-4-12) form.
func isUUID(s string) bool {
	switch len(s) {
	case 32:
		return isHex(s)
	case 36:
		return s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' &&
			isHex(s[:8]) && isHex(s[9:13]) && isHex(s[14:18]) && isHex(s[19:23]) && isHex(s[24:])
	}
	return false
}

// isHex reports whether s is non-empty and all hex digits, either case.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isHexDigit(c) && (c < 'A' || c > 'F') {
			return false
		}
	}
	return s != ""
}

// isHexDigit reports whether c is 0-9 or a-f.
func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
}
