package traceindex

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/otel-sentry/sentryexporter/internal/translate"
)

// BenchmarkAddRequestShaped adds pushes of 100 request-shaped traces (10 span
// ids, a ~300-byte request object, as make compare's traffic has), new trace
// ids every push, over enough pushes for generations to turn over (one about
// every 140 pushes, when the requests reach traceIndexRequestBytes).
func BenchmarkAddRequestShaped(b *testing.B) {
	x := New()
	req := []byte(`{"url":"http://shop.internal/cart/8123","method":"GET","headers":[["User-Agent","` +
		strings.Repeat("Mozilla/5.0 ", 12) + `"]],"env":{"REMOTE_ADDR":"10.1.2.3"},"query_string":"page=2"}`)
	segs := make([]translate.Segment, 100)
	ids := make([]byte, 80)
	for i := range segs {
		segs[i] = translate.Segment{Name: "GET /cart/{id}", Source: "route", Head: true, Sampled: true, SpanIDs: ids, Request: req, StatusCode: 200}
	}
	var facts []Facts
	var round uint64
	b.ReportAllocs()
	for b.Loop() {
		round++
		for i := range segs {
			binary.BigEndian.PutUint64(segs[i].TraceID[:8], round)
			binary.BigEndian.PutUint64(segs[i].TraceID[8:], uint64(i))
		}
		facts = x.Add(segs, facts)
	}
}
