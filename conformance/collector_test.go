package conformance

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The built collector (bin/otelcol-sentry, `make otelcol`) between the OTel SDK and the
// capture sink. Tests that need it skip when it is not built, unless
// COLLECTOR_REQUIRED is set (CI builds it, then runs them: make metrics-conformance).

const collectorBin = "../bin/otelcol-sentry"

// needCollector returns the built collector's path, or skips (fails under COLLECTOR_REQUIRED).
func needCollector(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(collectorBin)
	if err == nil {
		_, err = os.Stat(p)
	}
	if err == nil {
		return p
	}
	msg := "this check needs the built collector: run `make otelcol`"
	if os.Getenv("COLLECTOR_REQUIRED") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// collectorMetricsPipeline is the one pipeline: OTLP/HTTP in, this exporter out. No
// batch processor and no sending queue, so every export reaches the exporter at once
// and the collector's shutdown leaves nothing behind.
const collectorMetricsPipeline = `
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  sentry:
    dsn: %s
    sending_queue:
      enabled: false
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [sentry]
`

type collector struct {
	cmd     *exec.Cmd
	otlpURL string
	stderr  *strings.Builder
	done    chan error
}

// startCollector runs the built collector with config (a format of the OTLP port and the
// DSN) and waits until its OTLP receiver accepts connections.
func startCollector(t *testing.T, dsn, config string) *collector {
	t.Helper()
	bin := needCollector(t)
	port := freePort(t)
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, config, port, dsn), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &collector{
		cmd:     exec.Command(bin, "--config", file),
		otlpURL: fmt.Sprintf("http://127.0.0.1:%d", port),
		stderr:  &strings.Builder{},
		done:    make(chan error, 1),
	}
	c.cmd.Stdout, c.cmd.Stderr = c.stderr, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	c.waitReady(t, port)
	return c
}

// waitReady polls the receiver's port; a bound on start-up, not a timed assertion.
func (c *collector) waitReady(t *testing.T, port int) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for range 600 {
		select {
		case err := <-c.done:
			t.Fatalf("the collector exited: %v\n%s", err, c.stderr)
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			conn.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the collector's receiver did not listen on %s within 30 s\n%s", addr, c.stderr)
}

// stop ends the collector as an orchestrator does (SIGTERM): the exporter sends what it
// holds before it exits.
func (c *collector) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("the collector exited with %v\n%s", err, c.stderr)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the collector did not stop within a minute\n%s", c.stderr)
	}
	if s := c.stderr.String(); strings.Contains(s, "\terror\t") {
		t.Errorf("the collector logged errors:\n%s", s)
	}
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
