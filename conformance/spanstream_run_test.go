package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otel-sentry/sentryexporter"
)

// The span-streaming check runs conformance/node/app.js, a plain node:http
// program, twice: under @sentry/node 11.12 at its defaults (traceLifecycle
// "stream") sending to a capture sink, and under the OpenTelemetry JS SDK
// (NodeSDK, HTTP instrumentation, OTLP/HTTP exporter at its defaults) sending
// to this exporter with traces_as: spans. It needs `npm ci` in conformance/node
// (.ci/run does it); without node_modules the test is skipped, unless
// SPANSTREAM_REQUIRED is set (CI), where it fails.

const nodeDir = "node"

func needNode(t *testing.T) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errMods := os.Stat(filepath.Join(nodeDir, "node_modules", "@sentry", "node"))
	if errNode == nil && errMods == nil {
		return
	}
	msg := "span-streaming conformance needs node and `npm ci` in conformance/node"
	if os.Getenv("SPANSTREAM_REQUIRED") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// nodeRequest is one request the test sends to the program.
type nodeRequest struct {
	path    string
	headers map[string]string
}

var nodeRequests = []nodeRequest{
	{"/users?id=7&token=secret", map[string]string{"User-Agent": "conformance/1.0", "Accept": "application/json"}},
	{"/fail", map[string]string{"User-Agent": "conformance/1.0"}},
}

const (
	nodeRelease     = "shop@1.0.0"
	nodeEnvironment = "conformance"
)

// runNode starts app.js with the instrument file, sends nodeRequests from
// outside any trace, then closes its stdin: it flushes and exits. It returns
// the port the program listened on.
func runNode(t *testing.T, instrument string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// instrument is one of this package's file names, never outside input.
	cmd := exec.CommandContext(ctx, "node", "--import", "./"+instrument, "app.js") //nolint:gosec // G204: see above
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err = cmd.Start(); err != nil {
		t.Fatal(err)
	}
	port, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		t.Fatalf("%s: no port: %v; stderr: %s", instrument, err, stderr.String())
	}
	base := "http://127.0.0.1:" + strings.TrimSpace(port)
	for _, r := range nodeRequests {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+r.path, http.NoBody)
		for k, v := range r.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", instrument, r.path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v; stderr: %s", instrument, err, stderr.String())
	}
	return strings.TrimSpace(port)
}

// nodeRun is what Sentry got from one run and the port the program listened on.
type nodeRun struct {
	envelopes []captured
	port      string
}

// runSentryNode runs the program under @sentry/node.
func runSentryNode(t *testing.T) nodeRun {
	sink := newCaptureSink(t)
	port := runNode(t, "instrument-sentry.js",
		"SENTRY_DSN="+sink.dsn(), "SHOP_RELEASE="+nodeRelease, "SHOP_ENVIRONMENT="+nodeEnvironment)
	return nodeRun{sinkEnvelopes(t, sink), port}
}

// runOTelNode runs the program under the OpenTelemetry JS SDK through this
// exporter (traces_as: spans).
func runOTelNode(t *testing.T) nodeRun {
	sink := newCaptureSink(t)
	exp := newSpansExporter(t, sink.dsn())
	port := runNode(t, "instrument-otel.js",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+exp.otlp.URL,
		"OTEL_SERVICE_NAME=shop",
		fmt.Sprintf("OTEL_RESOURCE_ATTRIBUTES=service.version=%s,deployment.environment.name=%s", nodeRelease, nodeEnvironment),
		"OTEL_LOGS_EXPORTER=none")
	exp.shutdown(t)
	return nodeRun{sinkEnvelopes(t, sink), port}
}

// newSpansExporter is newExporterUnderTest with traces_as: spans.
func newSpansExporter(t *testing.T, dsn string) *exporterUnderTest {
	t.Helper()
	return newExporterUnderTestWith(t, dsn, func(cfg *sentryexporter.Config) {
		cfg.TracesAs = sentryexporter.TracesAsSpans
	})
}
