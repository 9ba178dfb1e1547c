package translate

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Value encoding and repairs.
//
// Plain values (transaction data, extra, contexts.otel.resource) are JSON of the
// same shape: maps are objects, slices are arrays, bytes are base64 strings,
// an empty value is null. Typed values (span v2 and log attributes) are
// {"type":…,"value":…} with type string, boolean, integer, double or array (a
// homogeneous array of primitives); maps, mixed arrays and bytes become strings
// (JSON text or base64), and empty values are left out.
//
// Repairs, in both forms: NaN and ±Inf become the strings "NaN", "+Inf", "-Inf";
// invalid UTF-8 and NUL become U+FFFD; strings longer than the value limit are cut
// and end with "…[truncated]"; maps and arrays nested deeper than MaxDepth become
// "[depth limit]"; an object or array keeps at most MaxAttributes entries and a
// top-level object counts the rest in otel.dropped_attributes_count; a key seen
// twice in one object is written once (the first wins).

const depthLimit = "[depth limit]"

// droppedKey counts attributes that were cut (plus those the SDK already dropped).
const droppedKey = "otel.dropped_attributes_count"

// plain writes v as a plain JSON value at nesting depth d (1 for an attribute value).
func plain(w *jw, v pcommon.Value, l *limits, d int) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		w.str(v.Str(), l.value)
	case pcommon.ValueTypeInt:
		w.int(v.Int())
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if s, bad := nonFinite(f); bad {
			w.str(s, 0)
		} else {
			w.float(f)
		}
	case pcommon.ValueTypeBool:
		w.bool(v.Bool())
	case pcommon.ValueTypeBytes:
		w.base64(v.Bytes().AsRaw(), l.value)
	case pcommon.ValueTypeMap:
		if d > l.depth {
			w.str(depthLimit, 0)
			return
		}
		w.byte('{')
		n := 0
		for k, e := range v.Map().All() {
			if n >= l.attrs {
				break
			}
			w.comma(&n)
			w.str(k, l.value)
			w.byte(':')
			plain(w, e, l, d+1)
		}
		w.byte('}')
	case pcommon.ValueTypeSlice:
		if d > l.depth {
			w.str(depthLimit, 0)
			return
		}
		s := v.Slice()
		w.byte('[')
		for i := range min(s.Len(), l.attrs) {
			if i > 0 {
				w.byte(',')
			}
			plain(w, s.At(i), l, d+1)
		}
		w.byte(']')
	default:
		w.raw("null")
	}
}

// typed writes v as a typed attribute value. The caller skips empty values.
func (s *state) typed(w *jw, v pcommon.Value, l *limits) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		w.raw(`{"type":"string","value":`)
		w.str(v.Str(), l.value)
	case pcommon.ValueTypeInt:
		w.raw(`{"type":"integer","value":`)
		w.int(v.Int())
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if str, bad := nonFinite(f); bad {
			w.raw(`{"type":"string","value":`)
			w.str(str, 0)
		} else {
			w.raw(`{"type":"double","value":`)
			w.float(f)
		}
	case pcommon.ValueTypeBool:
		w.raw(`{"type":"boolean","value":`)
		w.bool(v.Bool())
	case pcommon.ValueTypeBytes:
		w.raw(`{"type":"string","value":`)
		w.base64(v.Bytes().AsRaw(), l.value)
	case pcommon.ValueTypeSlice:
		if homogeneous(v.Slice()) {
			w.raw(`{"type":"array","value":`)
			plain(w, v, l, 1)
			break
		}
		fallthrough
	default: // maps and mixed arrays: their JSON text as a string
		w.raw(`{"type":"string","value":`)
		s.tmp.truncate(0)
		plain(&s.tmp, v, l, 1)
		w.str(string(s.tmp.b), l.value) // rare path; the conversion allocates
	}
	w.byte('}')
}

// homogeneous reports whether a slice holds only primitives of one type, which
// is what a typed "array" may hold. Non-finite doubles disqualify it.
func homogeneous(sl pcommon.Slice) bool {
	t := pcommon.ValueTypeEmpty
	for i := range sl.Len() {
		e := sl.At(i)
		et := e.Type()
		switch et {
		case pcommon.ValueTypeStr, pcommon.ValueTypeInt, pcommon.ValueTypeBool:
		case pcommon.ValueTypeDouble:
			if _, bad := nonFinite(e.Double()); bad {
				return false
			}
		default:
			return false
		}
		if i == 0 {
			t = et
		} else if et != t {
			return false
		}
	}
	return true
}

// members writes the entries of m as members of the object being written,
// plain or typed, skipping keys in s.seen and counting entries over the cap in
// *dropped. n counts the object's members so far.
func (s *state) members(w *jw, m pcommon.Map, typed bool, n *int, l *limits, dropped *int) {
	for k, v := range m.All() {
		if typed && v.Type() == pcommon.ValueTypeEmpty {
			continue
		}
		if !s.seen.add(k) {
			continue
		}
		if *n >= l.attrs {
			*dropped++
			continue
		}
		w.member(n, k, l.value)
		if typed {
			s.typed(w, v, l)
		} else {
			plain(w, v, l, 1)
		}
	}
}

// dropped writes the otel.dropped_attributes_count member when d > 0.
func droppedMember(w *jw, n *int, d int, typed bool) {
	if d <= 0 {
		return
	}
	w.key(n, droppedKey)
	if typed {
		w.raw(`{"type":"integer","value":`)
		w.int(int64(d))
		w.byte('}')
	} else {
		w.int(int64(d))
	}
}

// seenSet finds repeated keys within one object. It compares cheap
// fingerprints first and the strings only when those match, so a key costs a
// couple of loads; past 32 keys it switches to a map.
type seenSet struct {
	bloom uint64 // one bit per fingerprint: most new keys miss and skip the scan
	fps   []uint64
	keys  []string
	m     map[string]struct{}
}

func (s *seenSet) reset() {
	s.bloom = 0
	s.fps = s.fps[:0]
	clear(s.keys) // drop references to pdata strings
	s.keys = s.keys[:0]
	if len(s.m) > 0 {
		clear(s.m)
	}
}

// fingerprint mixes the length and the first and last 8 bytes of k.
func fingerprint(k string) uint64 {
	n := len(k)
	var a, b uint64
	if n >= 8 {
		a, b = load8(k, 0), load8(k, n-8)
	} else {
		for i := range n {
			a = a<<8 | uint64(k[i])
		}
	}
	return (a*0x9E3779B97F4A7C15 ^ b) + uint64(n)
}

// add records k and reports whether it was new.
func (s *seenSet) add(k string) bool {
	if len(s.keys) < 32 {
		fp := fingerprint(k)
		bit := uint64(1) << (fp >> 58)
		if s.bloom&bit != 0 {
			for i, f := range s.fps {
				if f == fp && s.keys[i] == k {
					return false
				}
			}
		}
		s.bloom |= bit
		s.fps = append(s.fps, fp)
		s.keys = append(s.keys, k)
		return true
	}
	if s.m == nil {
		s.m = make(map[string]struct{}, 64)
	}
	if len(s.m) == 0 {
		for _, x := range s.keys {
			s.m[x] = struct{}{}
		}
	}
	if _, ok := s.m[k]; ok {
		return false
	}
	s.m[k] = struct{}{}
	return true
}

// typedStr writes a string typed attribute member, recording its key.
func (s *state) typedStr(w *jw, n *int, k, v string) {
	if v == "" {
		return
	}
	s.seen.add(k)
	w.key(n, k)
	w.raw(`{"type":"string","value":`)
	w.str(v, s.t.o.MaxValueBytes)
	w.byte('}')
}
