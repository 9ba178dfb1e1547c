package envelope

import (
	"strconv"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
)

// Discard is one entry of a client report's `discarded_events`: how many items of a data
// category were dropped, and why (a discard reason such as "ratelimit_backoff").
type Discard struct {
	Reason   string
	Category string
	Quantity uint64
}

// AppendClientReport appends a client report payload
// {"timestamp":"...","discarded_events":[{"reason":...,"category":...,"quantity":N},...]}.
// The timestamp is RFC 3339 UTC and is left out when ts is zero. `discarded_events` is always
// written, even when empty, because Relay cannot parse a report without it
// (relay-event-schema/src/protocol/client_report.rs).
func AppendClientReport(dst []byte, ts time.Time, discarded []Discard) []byte {
	dst = append(dst, '{')
	if !ts.IsZero() {
		dst = append(dst, `"timestamp":`...)
		dst = appendTime(dst, ts)
		dst = append(dst, ',')
	}
	dst = append(dst, `"discarded_events":[`...)
	for i, d := range discarded {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"reason":`...)
		dst = jsonstr.Append(dst, d.Reason)
		dst = append(dst, `,"category":`...)
		dst = jsonstr.Append(dst, d.Category)
		dst = append(dst, `,"quantity":`...)
		dst = strconv.AppendUint(dst, d.Quantity, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']', '}')
}
