package envelope

import "time"

// appendTime appends t in UTC as an RFC 3339 JSON string with microseconds, or nanoseconds
// when t has them, so that Parse gives back the same instant. It writes the digits itself
// (every envelope header has a sent_at; time.Time.AppendFormat costs several times more)
// and leaves the years RFC 3339 cannot write in four digits to AppendFormat.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		layout := "2006-01-02T15:04:05.000000Z07:00"
		if t.Nanosecond()%1000 != 0 {
			layout = "2006-01-02T15:04:05.000000000Z07:00"
		}
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, layout)
		return append(dst, '"')
	}
	hour, minute, sec := t.Clock()
	ns := t.Nanosecond()
	dst = append(dst, '"')
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, minute, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, sec, 2)
	dst = append(dst, '.')
	if ns%1000 == 0 {
		dst = appendDigits(dst, ns/1000, 6)
	} else {
		dst = appendDigits(dst, ns, 9)
	}
	return append(dst, 'Z', '"')
}

// appendDigits appends v (>= 0) as exactly width decimal digits, zero-padded.
func appendDigits(dst []byte, v, width int) []byte {
	n := len(dst)
	for range width {
		dst = append(dst, '0')
	}
	for i := len(dst) - 1; i >= n; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}
