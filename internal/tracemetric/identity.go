package tracemetric

import (
	"hash/maphash"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// hasher hashes what identifies a stream: the resource, the scope, the
// metric's name and kind, and the point's attributes. Two streams share a key
// only by a 64-bit collision (about 3 in 10⁸ among a million streams).
type hasher struct{ seed maphash.Seed }

// attrs mixes every key and value of m into h, in m's order: an SDK writes
// one stream's attributes in the same order every time.
func (x hasher) attrs(h *maphash.Hash, m pcommon.Map) {
	for k, v := range m.All() {
		h.WriteString(k)
		h.WriteByte(0)
		x.value(h, v)
	}
}

func (x hasher) value(h *maphash.Hash, v pcommon.Value) {
	h.WriteByte(byte(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		h.WriteString(v.Str())
	case pcommon.ValueTypeInt:
		maphash.WriteComparable(h, v.Int())
	case pcommon.ValueTypeDouble:
		maphash.WriteComparable(h, math.Float64bits(v.Double()))
	case pcommon.ValueTypeBool:
		maphash.WriteComparable(h, v.Bool())
	case pcommon.ValueTypeBytes:
		h.Write(v.Bytes().AsRaw())
	case pcommon.ValueTypeMap:
		x.attrs(h, v.Map())
	case pcommon.ValueTypeSlice:
		for _, e := range v.Slice().All() {
			x.value(h, e)
		}
	}
	h.WriteByte(0)
}

// resourceKey identifies a resource (its attributes).
func (x hasher) resourceKey(r pcommon.Resource) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	x.attrs(&h, r.Attributes())
	return h.Sum64()
}

// streamKey identifies one stream: within a resource and scope (base), a
// metric by name and kind, with the point's attributes.
func (x hasher) streamKey(base uint64, name string, kind byte, attrs pcommon.Map) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	maphash.WriteComparable(&h, base)
	h.WriteString(name)
	h.WriteByte(kind)
	x.attrs(&h, attrs)
	return h.Sum64()
}

// scopeKey mixes a scope's name and version into a resource's key.
func (x hasher) scopeKey(resource uint64, name, version string) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	maphash.WriteComparable(&h, resource)
	h.WriteString(name)
	h.WriteByte(0)
	h.WriteString(version)
	return h.Sum64()
}

// traceIDOf is the trace id of a resource's points that carry no exemplar:
// one per resource (a process) for the exporter's life, as an SDK with no
// active span uses its propagation context's trace id, random once per
// process (sentry-go's resolveTrace: scope.propagationContext.TraceID). It
// is derived from the resource's key, so it needs no state and is never zero.
func traceIDOf(resource uint64) (id [16]byte) {
	a, b := splitmix(resource), splitmix(resource^0x9e3779b97f4a7c15)
	for i := range 8 {
		id[i] = byte(a >> (56 - 8*i))
		id[8+i] = byte(b >> (56 - 8*i))
	}
	if id == ([16]byte{}) {
		id[15] = 1
	}
	return id
}

// splitmix is SplitMix64's finalizer: a bijection that spreads every input bit.
func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
