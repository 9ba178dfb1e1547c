// The official profiler's real output for the profiles conformance test: @sentry/node and
// @sentry/profiling-node 11.1.0 (the newest 11.x of the profiler, which pins that @sentry/node)
// in continuous mode, profiling a CPU-bound span, sent to SENTRY_DSN (the test's capture sink).
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

(async () => {
  Sentry.profiler.startProfiler();
  await Sentry.startSpan({ name: "GET /work", op: "http.server" }, async () => {
    const end = Date.now() + 1500;
    while (Date.now() < end) fib(20);
  });
  Sentry.profiler.stopProfiler();
  await Sentry.flush(5000);
  await new Promise((r) => setTimeout(r, 500));
  await Sentry.flush(5000);
  process.exit(0);
})();
