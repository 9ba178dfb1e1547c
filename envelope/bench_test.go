package envelope

import (
	"fmt"
	"testing"
)

// benchLogs returns n log JSONs of about 400 bytes each, like the exporter writes.
func benchLogs(n int) [][]byte {
	logs := make([][]byte, n)
	for i := range logs {
		logs[i] = fmt.Appendf(nil, `{"timestamp":1746456149.0191,"trace_id":"624f66e93a04469f9992c7e9f1485056",`+
			`"span_id":"b0e6f15b45c36b12","level":"info","severity_number":9,"body":"User %d has logged in!",`+
			`"attributes":{"sentry.environment":{"value":"production","type":"string"},`+
			`"sentry.release":{"value":"1.0.0","type":"string"},"server.address":{"value":"host-1","type":"string"},`+
			`"db.response.returned_rows":{"value":%d,"type":"integer"},"latency":{"value":1.23,"type":"double"}}}`, i, i)
	}
	return logs
}

// benchLogEnvelope returns an envelope with one container of 100 logs.
func benchLogEnvelope() *Envelope {
	return &Envelope{
		Header: Header{SentAt: sentAt, SDK: &SDKInfo{Name: "sentry.go.otelcol", Version: "0.1.0"}},
		Items: []Item{{
			Type: ItemTypeLog, ContentType: ContentTypeLogContainer, ItemCount: 100,
			Payload: AppendContainer(nil, benchLogs(100)),
		}},
	}
}

func BenchmarkAppendTo(b *testing.B) {
	e := benchLogEnvelope()
	dst := make([]byte, 0, e.EncodedLen())
	b.SetBytes(int64(e.EncodedLen()))
	b.ReportAllocs()
	for b.Loop() {
		dst = e.AppendTo(dst[:0])
	}
}

func BenchmarkAppendContainer(b *testing.B) {
	logs := benchLogs(100)
	dst := make([]byte, 0, ContainerLen(logs))
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendContainer(dst[:0], logs)
	}
}

func BenchmarkChunk(b *testing.B) {
	logs := benchLogs(1000)
	b.ReportAllocs()
	for b.Loop() {
		Chunk(logs, 100, 16*1024)
	}
}
