package translate

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
)

// truncMarker ends every string value cut at the value limit.
const truncMarker = "…[truncated]"

// jw is an append-style JSON writer. It never fails: whatever it is given, the
// bytes it writes are valid UTF-8 JSON.
type jw struct{ b []byte }

func (w *jw) raw(s string)   { w.b = append(w.b, s...) }
func (w *jw) byte(c byte)    { w.b = append(w.b, c) }
func (w *jw) int(i int64)    { w.b = strconv.AppendInt(w.b, i, 10) }
func (w *jw) bool(v bool)    { w.b = strconv.AppendBool(w.b, v) }
func (w *jw) len() int       { return len(w.b) }
func (w *jw) truncate(n int) { w.b = w.b[:n] }

// Every method stores into w.b once: w usually points at a heap field, and each
// pointer store there costs a GC write barrier while a collection runs.

// comma writes a separator before every member but the first.
func (w *jw) comma(n *int) {
	if *n > 0 {
		w.b = append(w.b, ',')
	}
	*n++
}

// key writes "k": after a separator; k is a trusted constant.
func (w *jw) key(n *int, k string) {
	b := w.b
	if *n > 0 {
		b = append(b, ',')
	}
	*n++
	b = append(b, '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	w.b = b
}

// optStrField is strField for a member left out when v is empty.
func (w *jw) optStrField(n *int, k, v string, limit int) {
	if v != "" {
		w.strField(n, k, v, limit)
	}
}

// strField writes "k":"v" with v escaped and cut at limit.
func (w *jw) strField(n *int, k, v string, limit int) {
	w.key(n, k)
	w.b = appendStr(w.b, v, limit)
}

// member writes "k": after a separator, with k escaped and cut at limit.
func (w *jw) member(n *int, k string, limit int) {
	b := w.b
	if *n > 0 {
		b = append(b, ',')
	}
	*n++
	b = appendStr(b, k, limit)
	b = append(b, ':')
	w.b = b
}

// str writes s as a JSON string: invalid UTF-8 and NUL become U+FFFD, and a
// string longer than limit bytes is cut at a rune boundary and ends with truncMarker.
func (w *jw) str(s string, limit int) { w.b = appendStr(w.b, s, limit) }

func appendStr(b []byte, s string, limit int) []byte {
	s, cut := cutAt(s, limit)
	b = append(b, '"')
	b = jsonstr.AppendEscaped(b, s)
	if cut {
		b = append(b, truncMarker...)
	}
	return append(b, '"')
}

// name writes the concatenation of the parts of n as one JSON string, cut like str.
func (w *jw) name(n name, limit int) {
	b := w.b
	b = append(b, '"')
	cut := false
	for _, p := range n {
		if p == "" {
			continue
		}
		if limit <= 0 {
			cut = true
			break
		}
		if p, cut = cutAt(p, limit); cut {
			b = jsonstr.AppendEscaped(b, p)
			break
		}
		limit -= len(p)
		b = jsonstr.AppendEscaped(b, p)
	}
	if cut {
		b = append(b, truncMarker...)
	}
	b = append(b, '"')
	w.b = b
}

// cutAt shortens s to at most limit bytes at a rune start.
func cutAt(s string, limit int) (string, bool) {
	if limit <= 0 || len(s) <= limit {
		return s, false
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// base64 writes bytes as a base64 JSON string, cut like str when the encoding
// would exceed limit.
func (w *jw) base64(p []byte, limit int) {
	cut := false
	if limit > 0 && base64.StdEncoding.EncodedLen(len(p)) > limit {
		p, cut = p[:limit/4*3], true
	}
	b := w.b
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, p)
	if cut {
		b = append(b, truncMarker...)
	}
	b = append(b, '"')
	w.b = b
}

// float writes a finite float as a JSON number that always reads back as a
// double (1 is written 1.0). The caller handles NaN and ±Inf.
func (w *jw) float(f float64) { w.b = jsonstr.AppendFloat(w.b, f) }

// nonFinite names NaN and ±Inf, which JSON cannot hold, as strings.
func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "+Inf", true
	case math.IsInf(f, -1):
		return "-Inf", true
	}
	return "", false
}

// ts writes nanoseconds since the epoch as seconds with exactly microsecond
// precision, without going through a float.
func (w *jw) ts(ns uint64) { w.b = jsonstr.AppendTimestamp(w.b, ns) }

// hex writes id as a quoted lowercase hex string.
func (w *jw) hex(id []byte) {
	b := w.b
	b = append(b, '"')
	b = jsonstr.AppendHex(b, id)
	b = append(b, '"')
	w.b = b
}
