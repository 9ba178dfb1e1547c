package envelope

import "time"

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
