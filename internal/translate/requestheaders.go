package translate

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Header values and names as sentry-go writes a request's headers.

// headerValue is one header's value: arrays (the OTel form) joined with ",".
func headerValue(v pcommon.Value) string {
	if v.Type() != pcommon.ValueTypeSlice {
		return v.AsString()
	}
	sl := v.Slice()
	switch sl.Len() {
	case 0:
		return ""
	case 1:
		return sl.At(0).AsString()
	}
	var b strings.Builder
	for i := range sl.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(sl.At(i).AsString())
	}
	return b.String()
}

// headerNameChar reports whether c is in [A-Za-z0-9-_.].
func headerNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// headerName writes a header name in Go's canonical form (user-agent ->
// User-Agent), as sentry-go's request headers are; a name with characters
// outside [A-Za-z0-9-_.] is written as it is, escaped.
func headerName(w *jw, name string) {
	for i := 0; i < len(name); i++ {
		if !headerNameChar(name[i]) || i >= 256 {
			w.str(name, 256)
			return
		}
	}
	b := w.b
	b = append(b, '"')
	up := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case up && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case !up && c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
		up = c == '-'
	}
	b = append(b, '"')
	w.b = b
}
