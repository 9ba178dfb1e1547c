package envelope

import (
	"time"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. It escapes `"`, `\` and control characters, and
// replaces invalid UTF-8 with U+FFFD, so the output is always valid JSON in valid UTF-8.
// Everything else, U+2028 and U+2029 included, is written as is.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendTime appends t in UTC as an RFC 3339 JSON string with microseconds, or nanoseconds
// when t has them, so that Parse gives back the same instant.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	layout := "2006-01-02T15:04:05.000000Z07:00"
	if t.Nanosecond()%1000 != 0 {
		layout = "2006-01-02T15:04:05.000000000Z07:00"
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, layout)
	return append(dst, '"')
}
