package main

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestRealisticAttributes: the traffic carries what real instrumentation sets (issue 33):
// the resource's telemetry.sdk.*, http.client spans' server.port, db spans' query text,
// and the call site and request of every log record. make compare measures on it.
func TestRealisticAttributes(t *testing.T) {
	g := newGenerator(3, 3, 2, 0.05)
	g.spansPerTrace = 10
	td, ld, _ := g.batch(600, time.Now())
	for _, rs := range td.ResourceSpans().All() {
		for _, k := range []string{"service.version", "deployment.environment.name", "host.name", "telemetry.sdk.language", "telemetry.sdk.name", "telemetry.sdk.version"} {
			if v, ok := rs.Resource().Attributes().Get(k); !ok || v.Str() == "" {
				t.Fatalf("resource without %s", k)
			}
		}
		for _, sp := range rs.ScopeSpans().At(0).Spans().All() {
			a := sp.Attributes()
			if _, ok := a.Get("url.full"); ok {
				mustHave(t, a, "server.address", "server.port", "http.response.status_code")
			}
			if q, ok := a.Get("db.query.text"); ok {
				mustHave(t, a, "db.system.name", "db.namespace", "db.operation.name")
				if sys, _ := a.Get("db.system.name"); sys.Str() != "redis" && len(q.Str()) < 85 {
					t.Fatalf("SQL query of %d characters, want about 90: %q", len(q.Str()), q.Str())
				}
			}
		}
	}
	for _, rl := range ld.ResourceLogs().All() {
		for _, lr := range rl.ScopeLogs().At(0).LogRecords().All() {
			mustHave(t, lr.Attributes(), "code.function.name", "code.file.path", "code.line.number")
			if len(lr.Body().Str()) < 30 {
				t.Fatalf("log body %q: shorter than an application writes", lr.Body().Str())
			}
		}
	}
}

func mustHave(t *testing.T, a pcommon.Map, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := a.Get(k); !ok {
			t.Fatalf("attributes %v without %s", a.AsRaw(), k)
		}
	}
}
