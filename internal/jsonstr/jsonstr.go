// Package jsonstr writes Go strings as JSON string content that Sentry can
// store: valid JSON in valid UTF-8, whatever the input. It is shared by the
// envelope writer (headers) and the translators (payloads), so all repair a
// string the same way. Beside that repair it holds the translators' other
// scalar writers, so each exists once: a float that reads back as a double,
// a timestamp in seconds with microseconds, an ID's hex digits.
//
// Its main job is that repair. It must not fail or reject a string: what JSON
// or UTF-8 cannot hold is replaced, never dropped.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s as a quoted JSON string; see AppendEscaped.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends the JSON string content of s, without quotes. It
// escapes `"`, `\` and control characters, and writes U+FFFD for invalid
// UTF-8 and for NUL (valid JSON, but Sentry's storage rejects it). Everything
// else, U+2028 and U+2029 included, is copied as is. Most strings need no
// escaping: they are scanned 8 bytes at a time and copied in one append.
func AppendEscaped(dst []byte, s string) []byte {
	i := 0
	for i+8 <= len(s) && plain8(load8(s, i)) {
		i += 8
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	if i == len(s) {
		return append(dst, s...)
	}
	return appendEscapedFrom(dst, s, i)
}

// plainByte marks the ASCII bytes written as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendEscapedFrom is AppendEscaped once s[:i] is known to need no escaping.
func appendEscapedFrom(b []byte, s string, i int) []byte {
	start := 0
	for i < len(s) {
		if i+8 <= len(s) && plain8(load8(s, i)) {
			i += 8
			continue
		}
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case 0:
				b = append(b, "\uFFFD"...)
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// load8 reads 8 bytes of s at i as a little-endian word (one load once compiled).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plain8 reports whether none of the 8 bytes in x needs attention: no control
// byte, quote, backslash or non-ASCII byte (the SWAR "has less than" and
// "has zero byte" tests, exact for existence).
func plain8(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	ctl := (x - lo*0x20) & ^x & hi
	q := x ^ (lo * '"')
	bs := x ^ (lo * '\\')
	quote := (q - lo) & ^q & hi
	slash := (bs - lo) & ^bs & hi
	return (ctl | quote | slash | x&hi) == 0
}
