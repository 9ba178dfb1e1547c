package conformance

import (
	"os"
	"testing"
)

func TestSpanStreamDump(t *testing.T) {
	needNode(t)
	dir := os.Getenv("SPANSTREAM_DUMP")
	if dir == "" {
		t.Skip()
	}
	for name, envs := range map[string][]captured{"sentry": runSentryNode(t), "otel": runOTelNode(t)} {
		var b []byte
		for _, e := range envs {
			b = append(b, e.raw...)
			b = append(b, "\n=====\n"...)
		}
		os.WriteFile(dir+"/"+name+".txt", b, 0o644)
	}
}
