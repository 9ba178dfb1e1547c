package tracemetric

import (
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
)

// Sentry's metric types.
const (
	typeCounter = "counter"
	typeGauge   = "gauge"
)

// number is a metric's value: an integer or a double.
type number struct {
	isInt bool
	i     int64
	f     float64
}

func intOf(i int64) number     { return number{isInt: true, i: i} }
func floatOf(f float64) number { return number{f: f} }

func (n number) valid() bool { return n.isInt || finite(n.f) }

// zero tells a value of 0 (either sign of it, for a double).
func (n number) zero() bool { return n.i == 0 && n.f == 0 }

// point is what the items of one data point share: its time, trace and
// attributes, rendered once for all its items.
type point struct {
	time    uint64
	traceID [16]byte
	spanID  [8]byte
	attrs   pcommon.Map

	rendered    []byte // the point's attributes as members; valid once ready
	rest        []byte // the shared members the point has no key of; valid once ready
	elems       int    // the array elements among them (see fit.go)
	ready       bool
	clash       bool // a point attribute has the key of a default or a resource attribute
	quantileKey bool // a point attribute is named quantile
}

// pointOf reads a data point's time and attributes; its trace is the
// resource's trace id until exemplars says otherwise.
func pointOf(rc *resCtx, ts pcommon.Timestamp, attrs pcommon.Map, now uint64) point {
	p := point{time: uint64(ts), traceID: rc.traceID, attrs: attrs}
	if p.time == 0 {
		p.time = now
	}
	return p
}

// exemplars takes the point's trace from its first exemplar with a trace id
// (a summary point has none).
func (p *point) exemplars(ex pmetric.ExemplarSlice) {
	for _, e := range ex.All() {
		if id := e.TraceID(); !id.IsEmpty() {
			p.traceID, p.spanID = id, e.SpanID()
			return
		}
	}
}

// has reports whether the point has an attribute k.
func (p *point) has(k string) bool { _, ok := p.attrs.Get(k); return ok }

// metricItem is one trace metric to write.
type metricItem struct {
	ty, name, suffix, unit string
	value                  number
	quantile               float64
	hasQuantile            bool
}

// appendItem writes one trace metric, its fields in sentry-go's order.
func (r *run) appendItem(b []byte, rc *resCtx, p *point, it *metricItem) []byte {
	b = appendHead(b, p, it)
	b = r.appendAttributes(b, rc, p, it)
	return append(b, "}}"...)
}

// appendHead writes a trace metric up to its attributes' opening brace.
func appendHead(b []byte, p *point, it *metricItem) []byte {
	b = append(b, `{"timestamp":`...)
	b = jsonstr.AppendTimestamp(b, p.time)
	b = append(b, `,"trace_id":`...)
	b = appendHex(b, p.traceID[:])
	if !pcommon.SpanID(p.spanID).IsEmpty() {
		b = append(b, `,"span_id":`...)
		b = appendHex(b, p.spanID[:])
	}
	b = append(b, `,"type":"`...)
	b = append(b, it.ty...)
	b = append(b, `","name":"`...)
	b = jsonstr.AppendEscaped(b, it.name)
	b = jsonstr.AppendEscaped(b, it.suffix)
	b = append(b, `","value":`...)
	if it.value.isInt {
		b = strconv.AppendInt(b, it.value.i, 10)
	} else {
		b = jsonstr.AppendFloat(b, it.value.f)
	}
	if it.unit != "" {
		b = append(b, `,"unit":"`...)
		b = append(b, it.unit...)
		b = append(b, '"')
	}
	return append(b, `,"attributes":{`...)
}

// appendAttributes writes the point's attributes (they win over the
// defaults, as an SDK's per-call attributes do), the quantile, then the
// resource's shared members, without repeating a key. The point's, and
// the shared ones when a key clashes, are rendered once, into the run's
// scratch buffer, for all its items.
func (r *run) appendAttributes(b []byte, rc *resCtx, p *point, it *metricItem) []byte {
	if !p.ready {
		var a pointAttrs
		r.scratch, a = appendPointAttributes(r.scratch[:0], rc, p.attrs, nil)
		p.clash, p.quantileKey, p.elems = a.clash, a.quantileKey, a.elems
		p.rendered, p.rest, p.ready = r.scratch, rc.rest, true
		if p.clash {
			n := len(r.scratch)
			r.scratch, _ = r.t.appendShared(r.scratch, rc, rc.res, p.has, nil)
			p.rendered, p.rest = r.scratch[:n:n], r.scratch[n:]
		}
	}
	b = append(b, p.rendered...)
	first := len(p.rendered) == 0
	if it.hasQuantile && !p.quantileKey {
		b = appendQuantile(b, first, it.quantile)
		first = false
	}
	if len(p.rest) > 0 && !first {
		b = append(b, ',')
	}
	return append(b, p.rest...)
}

// appendQuantile writes a summary item's quantile as a double attribute.
func appendQuantile(b []byte, first bool, q float64) []byte {
	b = appendMember(b, first, "quantile")
	b = append(b, `{"type":"double","value":`...)
	b = jsonstr.AppendFloat(b, q)
	return append(b, '}')
}

// pointAttrs is what appendPointAttributes found: whether a point attribute
// has the key of a default or a selected resource attribute, whether one is
// named quantile, and how many array elements it wrote.
type pointAttrs struct {
	clash, quantileKey bool
	elems              int
}

// appendPointAttributes writes a point's attributes as members, cut to c
// (nil: whole).
func appendPointAttributes(b []byte, rc *resCtx, attrs pcommon.Map, c *cutState) ([]byte, pointAttrs) {
	var a pointAttrs
	first := true
	for k, v := range attrs.All() {
		if v.Type() == pcommon.ValueTypeEmpty || !c.admit(k) {
			continue
		}
		b = appendMember(b, first, k)
		var elems int
		b, elems = appendTypedCut(b, v, c.limits())
		first = false
		a.elems += elems
		a.clash = a.clash || sentryKey(k) || k == serverAddress || slices.Contains(rc.keys, k)
		a.quantileKey = a.quantileKey || k == "quantile"
	}
	return b, a
}
