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
func (s *state) typed(w *jw, v pcommon.Value, l *limits) { s.typedT(w, v, v.Type(), l) }

// typedT is typed for a value of type t.
func (s *state) typedT(w *jw, v pcommon.Value, t pcommon.ValueType, l *limits) {
	switch t {
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
		t := v.Type()
		if typed && t == pcommon.ValueTypeEmpty {
			continue
		}
		if !s.seen.add(k) {
			continue
		}
		if *n >= l.attrs {
			*dropped++
			continue
		}
		if s.resScrub && secretResourceKey(k) {
			continue
		}
		if s.scrub {
			if act := scrubFor(k, s.t.o.SendDefaultPII, s.server); act != scrubKeep {
				if act != scrubDrop {
					w.member(n, k, l.value)
					s.writeScrubbed(w, v, act, typed, l)
				}
				continue
			}
		}
		w.member(n, k, l.value)
		if typed {
			s.typedT(w, v, t, l)
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
// fingerprints first and the keys only when those match, so a key costs a
// couple of loads; past 32 keys it switches to a map. A key of up to 32 bytes
// is held as its bytes (four words and the length), not as a string: storing
// a pointer would cost a GC write barrier while a collection runs.
type seenSet struct {
	bloom uint64 // one bit per fingerprint: most new keys miss and skip the scan
	ents  []seenKey
	long  []string // keys over 32 bytes, indexed by seenKey.w[0]
	m     map[seenMapKey]struct{}
}

// seenKey identifies a key of up to 32 bytes by its length and bytes (the
// words may overlap); fp mixes the length and the first and last 8 bytes.
type seenKey struct {
	fp uint64
	w  [4]uint64
	n  int
}

// seenMapKey is a key in the map: a long key is held as itself.
type seenMapKey struct {
	w    [4]uint64
	n    int
	long string
}

func (s *seenSet) reset() {
	s.bloom = 0
	s.ents = s.ents[:0]
	if len(s.long) > 0 {
		clear(s.long) // drop references to pdata strings
		s.long = s.long[:0]
	}
	if len(s.m) > 0 {
		clear(s.m)
	}
}

func keyOf(k string) (e seenKey) {
	n := len(k)
	e.n = n
	var a, d uint64
	switch {
	case n >= 8:
		a, d = load8(k, 0), load8(k, n-8)
		if n > 16 {
			e.w[1] = load8(k, 8)
			if n > 24 {
				e.w[2] = load8(k, 16)
			}
		}
	case n >= 4:
		a = uint64(load4(k, 0))<<32 | uint64(load4(k, n-4))
	default:
		for i := range n {
			a = a<<8 | uint64(k[i])
		}
	}
	e.w[0], e.w[3] = a, d
	e.fp = (a*0x9E3779B97F4A7C15 ^ d) + uint64(n)
	return e
}

// load4 reads 4 bytes of s at i as a little-endian word.
// load8 reads 8 bytes of s at i as a little-endian word (one load once compiled).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load4(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// add records k and reports whether it was new.
func (s *seenSet) add(k string) bool {
	e := keyOf(k)
	return s.addKey(&e, k)
}

// addKey is add with the seenKey of k already computed.
func (s *seenSet) addKey(e *seenKey, k string) bool {
	if len(s.ents) < 32 {
		bit := uint64(1) << (e.fp >> 58)
		if s.bloom&bit != 0 && s.scan(e, k) {
			return false
		}
		s.bloom |= bit
		s.ents = append(s.ents, *e)
		if e.n > 32 {
			s.ents[len(s.ents)-1].w[0] = uint64(len(s.long))
			s.long = append(s.long, k)
		}
		return true
	}
	s.fillMap()
	mk := mapKey(e, k)
	if _, ok := s.m[mk]; ok {
		return false
	}
	s.m[mk] = struct{}{}
	return true
}

// has reports whether k (of seenKey e) was added, without adding it.
func (s *seenSet) has(e *seenKey, k string) bool {
	if len(s.ents) < 32 {
		return s.bloom&(uint64(1)<<(e.fp>>58)) != 0 && s.scan(e, k)
	}
	s.fillMap()
	_, ok := s.m[mapKey(e, k)]
	return ok
}

// addBlock adds the keys of a pre-rendered block (distinct, at most 32 bytes
// each); into an empty set they are copied at once.
func (s *seenSet) addBlock(bl *block) {
	if len(s.ents) == 0 {
		s.ents = append(s.ents, bl.sks[:bl.n]...)
		s.bloom = bl.bloom
		return
	}
	for i := range bl.n {
		s.addKey(&bl.sks[i], bl.keys[i])
	}
}

// scan looks for k among the recorded keys.
func (s *seenSet) scan(e *seenKey, k string) bool {
	for i := range s.ents {
		x := &s.ents[i]
		if x.fp != e.fp || x.n != e.n {
			continue
		}
		if e.n > 32 {
			if s.long[x.w[0]] == k {
				return true
			}
		} else if x.w == e.w {
			return true
		}
	}
	return false
}

// fillMap moves the recorded keys into the map, once they are 32.
func (s *seenSet) fillMap() {
	if s.m == nil {
		s.m = make(map[seenMapKey]struct{}, 64)
	}
	if len(s.m) == 0 {
		for i := range s.ents {
			x := &s.ents[i]
			k := ""
			if x.n > 32 {
				k = s.long[x.w[0]]
			}
			s.m[mapKey(x, k)] = struct{}{}
		}
	}
}

func mapKey(e *seenKey, k string) seenMapKey {
	if e.n > 32 {
		return seenMapKey{n: e.n, long: k}
	}
	return seenMapKey{w: e.w, n: e.n}
}

// typedStr writes a string typed attribute member, recording its key.
func (s *state) typedStr(w *jw, n *int, k, v string) {
	if v == "" {
		return
	}
	s.seen.add(k)
	s.typedStrMember(w, n, k, v)
}

// typedStrUnlessSeen is typedStr for a key the attributes written before
// may hold already: theirs stays, k is not written twice, and the result
// says whether v was written (true for an empty v: nothing to write).
func (s *state) typedStrUnlessSeen(w *jw, n *int, k, v string) bool {
	if v == "" {
		return true
	}
	if !s.seen.add(k) {
		return false
	}
	s.typedStrMember(w, n, k, v)
	return true
}

// typedStrMember writes k with the string v as a typed attribute.
func (s *state) typedStrMember(w *jw, n *int, k, v string) {
	w.key(n, k)
	w.raw(`{"type":"string","value":`)
	w.str(v, s.t.o.MaxValueBytes)
	w.byte('}')
}
