package envelope

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// Attribute types of logs and span v2 (develop docs data-model/attributes.mdx, Relay
// relay-event-schema/src/protocol/attributes.rs).
const (
	attrString  = "string"
	attrBoolean = "boolean"
	attrInteger = "integer"
	attrDouble  = "double"
	attrArray   = "array"
)

// attributes checks obj["attributes"]: every value must be {"type":T,"value":V} with V
// matching T. integer must be an integer within int64, double a finite number, array a
// homogeneous array of primitives. Integers and doubles count as one kind inside an array,
// because encoding/json writes a whole float64 such as 1.0 as 1.
func (v *validator) attributes(where string, obj map[string]any) {
	attrs, ok := v.objectAt(where, obj, "attributes")
	if !ok {
		return
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable error order
	for _, k := range keys {
		at := fmt.Sprintf("%s attributes[%q]", where, k)
		a, ok := attrs[k].(map[string]any)
		if !ok {
			v.failf(at, "is not a {\"type\",\"value\"} object")
			continue
		}
		ty, _ := a["type"].(string)
		val, has := a["value"]
		if !has || val == nil {
			v.failf(at, "value is missing")
			continue
		}
		if u, ok := a["unit"]; ok {
			if _, ok := u.(string); !ok {
				v.failf(at, "unit is not a string")
			}
		}
		if msg := checkAttributeValue(ty, val); msg != "" {
			v.failf(at, "%s", msg)
		}
	}
}

// checkAttributeValue says why val does not fit attribute type ty, or "" if it does.
func checkAttributeValue(ty string, val any) string {
	switch ty {
	case attrString:
		if _, ok := val.(string); !ok {
			return "type string but the value is not a string"
		}
	case attrBoolean:
		if _, ok := val.(bool); !ok {
			return "type boolean but the value is not a bool"
		}
	case attrInteger:
		n, ok := val.(json.Number)
		if !ok {
			return "type integer but the value is not a number"
		}
		if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
			return fmt.Sprintf("type integer but %s is not an integer within int64", n)
		}
	case attrDouble:
		n, ok := val.(json.Number)
		if !ok {
			return "type double but the value is not a number"
		}
		if _, ok := parseFinite(n.String()); !ok {
			return fmt.Sprintf("type double but %s is not finite", n)
		}
	case attrArray:
		arr, ok := val.([]any)
		if !ok {
			return "type array but the value is not an array"
		}
		kind := ""
		for i, el := range arr {
			k := primitiveKind(el)
			if k == "" {
				return fmt.Sprintf("array element %d is not a primitive", i)
			}
			if kind != "" && k != kind {
				return fmt.Sprintf("array mixes %s and %s", kind, k)
			}
			kind = k
		}
	default:
		return fmt.Sprintf("type %q is not one of string, boolean, integer, double, array", ty)
	}
	return ""
}

// primitiveKind names the kind of an array element, or "" if it is not a usable primitive.
func primitiveKind(el any) string {
	switch t := el.(type) {
	case string:
		return attrString
	case bool:
		return attrBoolean
	case json.Number:
		if _, ok := parseFinite(t.String()); ok {
			return "number"
		}
	}
	return ""
}
