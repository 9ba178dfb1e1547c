package tracemetric

import (
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
)

// maxDepth bounds how deep a map or array attribute is written; deeper
// parts become "[depth limit]", as translate writes them.
const maxDepth = 10

// appendHex writes id as a quoted lowercase hex string.
func appendHex(b, id []byte) []byte {
	b = append(b, '"')
	b = jsonstr.AppendHex(b, id)
	return append(b, '"')
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// appendMember writes ,"key": (the comma unless first).
func appendMember(b []byte, first bool, key string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = jsonstr.Append(b, key)
	return append(b, ':')
}

// appendTypedStr writes s as a Sentry typed string attribute.
func appendTypedStr(b []byte, s string) []byte {
	b = append(b, `{"type":"string","value":`...)
	b = jsonstr.Append(b, s)
	return append(b, '}')
}

// appendTypedCut writes v as a Sentry typed attribute {"type":…,"value":…}, as
// translate writes log attributes: string, boolean, integer, double, array
// (of one primitive type); bytes as base64 text, maps and mixed arrays as
// their JSON text, NaN and ±Inf as strings; strings cut to l.value bytes and
// arrays to l.elems elements. It says how many array elements it wrote. Its
// callers leave out empty values; one given writes nothing.
func appendTypedCut(b []byte, v pcommon.Value, l cut) (_ []byte, elems int) {
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		return b, 0
	case pcommon.ValueTypeInt:
		b = append(b, `{"type":"integer","value":`...)
		b = strconv.AppendInt(b, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		if f := v.Double(); finite(f) {
			b = append(b, `{"type":"double","value":`...)
			b = jsonstr.AppendFloat(b, f)
			break
		}
		b = append(b, `{"type":"string","value":`...)
		b = jsonstr.Append(b, v.AsString())
	case pcommon.ValueTypeBool:
		b = append(b, `{"type":"boolean","value":`...)
		b = strconv.AppendBool(b, v.Bool())
	case pcommon.ValueTypeSlice:
		if homogeneous(v.Slice()) {
			b = append(b, `{"type":"array","value":`...)
			b, elems = appendArrayCut(b, v.Slice(), l)
			break
		}
		b = append(b, `{"type":"string","value":`...)
		b = jsonstr.Append(b, cutString(string(appendPlain(nil, v, 1)), l.value))
	case pcommon.ValueTypeMap:
		b = append(b, `{"type":"string","value":`...)
		b = jsonstr.Append(b, cutString(string(appendPlain(nil, v, 1)), l.value))
	case pcommon.ValueTypeStr:
		b = append(b, `{"type":"string","value":`...)
		b = jsonstr.Append(b, cutString(v.Str(), l.value))
	default: // bytes, as base64 (pdata's AsString)
		b = append(b, `{"type":"string","value":`...)
		b = jsonstr.Append(b, cutString(v.AsString(), l.value))
	}
	return append(b, '}'), elems
}

// appendArrayCut writes a homogeneous array's first l.elems elements, its
// strings cut to l.value bytes.
func appendArrayCut(b []byte, sl pcommon.Slice, l cut) ([]byte, int) {
	n := min(sl.Len(), l.elems)
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		if e := sl.At(i); e.Type() == pcommon.ValueTypeStr {
			b = jsonstr.Append(b, cutString(e.Str(), l.value))
		} else {
			b = appendPlain(b, e, 2)
		}
	}
	return append(b, ']'), n
}

// homogeneous reports whether a slice holds finite primitives of one type.
func homogeneous(sl pcommon.Slice) bool {
	t := pcommon.ValueTypeEmpty
	for i, e := range sl.All() {
		switch e.Type() {
		case pcommon.ValueTypeStr, pcommon.ValueTypeInt, pcommon.ValueTypeBool:
		case pcommon.ValueTypeDouble:
			if !finite(e.Double()) {
				return false
			}
		default:
			return false
		}
		if i > 0 && e.Type() != t {
			return false
		}
		t = e.Type()
	}
	return true
}

// appendPlain writes v as plain JSON at depth d.
func appendPlain(b []byte, v pcommon.Value, d int) []byte {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		if f := v.Double(); finite(f) {
			return jsonstr.AppendFloat(b, f)
		}
		return jsonstr.Append(b, v.AsString())
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(b, v.Bool())
	case pcommon.ValueTypeEmpty:
		return append(b, "null"...)
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		if d > maxDepth {
			return jsonstr.Append(b, "[depth limit]")
		}
		return appendNested(b, v, d)
	}
	return jsonstr.Append(b, v.AsString())
}

func appendNested(b []byte, v pcommon.Value, d int) []byte {
	if v.Type() == pcommon.ValueTypeSlice {
		b = append(b, '[')
		for i, e := range v.Slice().All() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPlain(b, e, d+1)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	first := true
	for k, e := range v.Map().All() {
		b = appendMember(b, first, k)
		b = appendPlain(b, e, d+1)
		first = false
	}
	return append(b, '}')
}
