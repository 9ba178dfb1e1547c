package tracemetric

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// MaxItemBytes is what one trace metric may measure: sentry.io runs Relay
// with max_trace_metric_size 2 KiB ([envelope.SentryTraceMetricSize]), not
// Relay's self-hosted default of 1 MiB. Relay applies it twice: to a container's JSON bytes per metric
// (envelope check, 413 for the whole envelope), and to each parsed metric's
// canonical size (relay-server processing/trace_metrics validate::size,
// utils::calculate_size: the name's bytes, 8 for the value, and per
// attribute its key's bytes plus its value's: a string's bytes, 8 for a
// number, 1 for a boolean, an array the sum of its elements).
//
// An item is measured as its JSON length plus 8 per array element. That is
// at least its canonical size (JSON-escaped text is never shorter than the
// text; every number or boolean is written with more than 8 bytes of
// `{"type":…,"value":…}` around it, the value with `"value":`; only an array
// element can be shorter in JSON than Relay counts it) and at least its
// JSON length, so erring small on both. The container's `{"items":[]}` and
// commas are kept out of the 2 KiB, so that the per-metric average of a
// container of metrics at the bound is still within it.
const MaxItemBytes = envelope.SentryTraceMetricSize - len(`{"items":[]}`) - len(",")

// cut bounds what one rendering of a metric's attributes writes: string
// values in bytes, arrays in elements, and how many attributes other than
// the SDK's defaults are kept.
type cut struct {
	value, elems, attrs int
}

// whole is no cut: the first rendering.
var whole = cut{value: math.MaxInt, elems: math.MaxInt, attrs: math.MaxInt}

// cuts are the renderings tried, in order, for a metric over MaxItemBytes,
// as translate re-renders a log or span over its budget with smaller
// limits. The name, value, unit, ids, the sentry.* defaults and a summary's
// quantile are never cut; attributes beyond the cap are dropped and counted
// in otel.dropped_attributes_count, as translate counts them. A metric that
// fits none is invalid.
var cuts = [...]cut{
	{value: 256, elems: 16, attrs: 32},
	{value: 64, elems: 4, attrs: 8},
}

const (
	truncatedMark = "…[truncated]"
	droppedKey    = "otel.dropped_attributes_count"
)

// cutString cuts s to at most n bytes at a character boundary, marked.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + truncatedMark
}

// cutState is one cut rendering's count of the attributes it kept and
// dropped; nil is the whole rendering.
type cutState struct {
	cut
	kept, dropped int
}

func (c *cutState) limits() cut {
	if c == nil {
		return whole
	}
	return c.cut
}

// admit says whether attribute k is written: always in the whole rendering
// and for the SDK's defaults, else while under the cap (a dropped one is
// counted).
func (c *cutState) admit(k string) bool {
	switch {
	case c == nil || sentryKey(k):
		return true
	case c.kept >= c.attrs:
		c.dropped++
		return false
	}
	c.kept++
	return true
}

// fits reports whether the item written from start, with elems array
// elements among its attributes, is within MaxItemBytes as measured above.
func (r *run) fits(start, elems int) bool {
	return len(r.buf)-start+8*elems <= MaxItemBytes
}

// refit rewrites the item at start, which is over MaxItemBytes, with each
// cut in turn, and reports whether one fits; if none does, buf is as it was
// before the item.
func (r *run) refit(rc *resCtx, p *point, it *metricItem, start int) bool {
	for _, c := range cuts {
		r.buf = appendHead(r.buf[:start], p, it)
		var elems int
		r.buf, elems = r.appendAttributesCut(r.buf, rc, p, it, &cutState{cut: c})
		r.buf = append(r.buf, "}}"...)
		if r.fits(start, elems) {
			return true
		}
	}
	r.buf = r.buf[:start]
	return false
}

// appendAttributesCut is appendAttributes for one cut: the point's
// attributes, the quantile, the defaults and the selected resource
// attributes, then the count of those dropped. It is the rare path, so it
// renders the shared members anew.
func (r *run) appendAttributesCut(b []byte, rc *resCtx, p *point, it *metricItem, c *cutState) (_ []byte, elems int) {
	start := len(b)
	b, a := appendPointAttributes(b, rc, p.attrs, c)
	if it.hasQuantile && !a.quantileKey {
		b = appendQuantile(b, len(b) == start, it.quantile)
	}
	rest, restElems := r.t.appendShared(nil, rc, rc.res, p.has, c)
	if len(rest) > 0 && len(b) > start {
		b = append(b, ',')
	}
	b = append(b, rest...)
	if c.dropped > 0 && !p.has(droppedKey) {
		b = appendMember(b, len(b) == start, droppedKey)
		b = append(b, `{"type":"integer","value":`...)
		b = strconv.AppendInt(b, int64(c.dropped), 10)
		b = append(b, '}')
	}
	return b, a.elems + restElems
}
