// The official profiler's real output for the profiles conformance test: @sentry/node and
// @sentry/profiling-node 11.1.0 (the newest 11.x of the profiler, which pins that @sentry/node)
// in continuous mode, profiling a traced request whose handler is CPU-bound, sent to SENTRY_DSN (the test's capture sink).
// TRACE_LIFECYCLE "static" sends the span as a transaction (contexts.profile); unset or
// "stream", as span v2 (the SDK's default).
const Sentry = require("@sentry/node");
const { nodeProfilingIntegration } = require("@sentry/profiling-node");

Sentry.init({
  dsn: process.env.SENTRY_DSN,
  integrations: [nodeProfilingIntegration()],
  tracesSampleRate: 1.0,
  profileSessionSampleRate: 1.0,
  profileLifecycle: "manual",
  traceLifecycle: process.env.TRACE_LIFECYCLE === "static" ? "static" : "stream",
  release: "shop@1.0.0",
  environment: "conformance",
});

function fib(x) {
  return x < 2 ? x : fib(x - 1) + fib(x - 2);
}

const http = require("http");

// The traced request: GET /work on a node:http server of this process, whose handler
// burns 1.5 s of CPU; @sentry/node's http integration makes its http.server span.
const server = http.createServer((req, res) => {
  const end = Date.now() + 1500;
  while (Date.now() < end) fib(20);
  res.end("done");
});

function get(port) {
  return new Promise((resolve, reject) => {
    http.get({ port, path: "/work" }, (res) => res.resume().on("end", resolve)).on("error", reject);
  });
}

(async () => {
  Sentry.profiler.startProfiler();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  await get(server.address().port);
  server.close();
  Sentry.profiler.stopProfiler();
  await Sentry.flush(5000);
  await new Promise((r) => setTimeout(r, 500));
  await Sentry.flush(5000);
  process.exit(0);
})();
