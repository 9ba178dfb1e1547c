// The Spotlight check's assertions (scripts/spotlight-check.sh): what `spotlight tail all
// --format json` printed (Spotlight's own parser and formatter) against what otlpgen sent
// (its --summary-file), with the fields as the official SDKs fill them for otlpgen's three
// services (cmd/otlpgen/gen.go).
//
//   node check.mjs marker URL           post one marker event (readiness of the tail)
//   node check.mjs complete TAIL GEN    exit 0 once as many items are shown as were sent
//   node check.mjs check TAIL GEN STREAM  every assertion; prints the counts, exits 1 on a failure
//
// STREAM is what the sidecar streamed to its UI (stream.mjs): the profile chunks, which the
// tail does not print, and the transactions' contexts.profile, which the UI joins them by.
import { readFileSync } from "node:fs";

const MARKER = "spotlight-check marker";

// otlpgen's services, as an SDK in each language reports them.
const SERVICES = {
  checkout: {
    platform: "go", release: "1.4.2",
    routes: ["GET /cart/{id}", "POST /checkout", "GET /healthz"],
    // sentry-go: the type is reflect's ("*net.OpError"); no filename for an absolute path
    exception: { type: "*net.OpError", value: "dial tcp 10.0.3.7:5432: connect: connection refused" },
    message: "dial tcp 10.0.3.7:5432: connect: connection refused", // the outermost exception's
    frame: { function: "(*Server).handleCart", lineno: 41, filename: undefined },
  },
  inventory: {
    platform: "java", release: "2.11.0",
    routes: ["GET /items/{sku}", "POST /items/{sku}/reserve"],
    // sentry-java: the simple class name (module apart); the root cause first
    exception: { type: "SQLTransientConnectionException", value: "HikariPool-1 - Connection is not available, request timed out after 30000ms." },
    message: "Stock for SKU-1182 is negative",
    frame: { function: "service", lineno: 885, filename: "FrameworkServlet.java" },
  },
  payments: {
    platform: "python", release: "0.9.7",
    routes: ["POST /charge", "GET /charges/{charge_id}"],
    // sentry-python: the class name (module apart)
    exception: { type: "CardDeclined", value: "insufficient funds" },
    message: "insufficient funds",
    frame: { function: "charge", lineno: 57, filename: "views.py" },
  },
};
const LEVELS = { debug: 5, info: 9, warn: 13, error: 17 };

function shown(file) {
  const out = { trace: [], error: [], log: [] };
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue; // Spotlight's own log lines
    const item = JSON.parse(line);
    if (item.message === MARKER) continue;
    out[item.type]?.push(item);
  }
  return out;
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "marker") {
  const id = crypto.randomUUID().replaceAll("-", "");
  const body = `{"event_id":"${id}"}\n{"type":"event"}\n` +
    `{"event_id":"${id}","level":"info","message":"${MARKER}","platform":"other"}\n`;
  try {
    await fetch(args[0], { method: "POST", headers: { "Content-Type": "application/x-sentry-envelope" }, body });
  } catch {} // not up yet: the caller tries again
  process.exit(0);
}
const got = shown(args[0]);
const sent = JSON.parse(readFileSync(args[1], "utf8"));
if (mode === "complete") {
  const done = got.trace.length >= sent.traces && got.error.length >= sent.exceptions && got.log.length >= sent.logs &&
    streamed(args[2]).chunks.length >= (sent.profile_chunks ?? 0);
  process.exit(done ? 0 : 1);
}

// streamed reads the UI's stream: its profile chunks, and the profiler each transaction names.
function streamed(file) {
  const out = { chunks: [], profilerOf: new Map() };
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return out;
  }
  for (const line of text.split("\n")) {
    if (!line.startsWith("[")) continue;
    const [, items] = JSON.parse(line);
    for (const [header, payload] of items) {
      if (header.type === "profile_chunk") out.chunks.push({ header, payload });
      if (header.type === "transaction") out.profilerOf.set(payload.contexts?.trace?.trace_id, payload.contexts?.profile?.profiler_id);
    }
  }
  return out;
}

const failures = [];
function expect(ok, what) {
  if (!ok && failures.length < 30) failures.push(what);
}
function unique(items, what) {
  const ids = new Set(items.map((i) => i.event_id));
  expect(ids.size === items.length, `${what}: ${items.length - ids.size} shown twice`);
}

// Traces: one transaction per trace, its name, op, status and spans as an SDK's.
const traces = new Map();
const spans = {};
for (const t of got.trace) {
  const svc = SERVICES[t["service.name"]];
  const at = `transaction ${t.event_id} (${t.transaction})`;
  expect(svc, `${at}: unknown service ${t["service.name"]}`);
  if (!svc) continue;
  expect(!traces.has(t.trace_id), `${at}: a second transaction for trace ${t.trace_id}`);
  traces.set(t.trace_id, t);
  expect(svc.routes.includes(t.transaction), `${at}: name is not one of ${svc.routes}`);
  expect(t.op === "http.server", `${at}: op ${t.op}, want http.server`);
  expect(t.status === "ok" || t.status === "internal_error", `${at}: status ${t.status}`);
  expect(t.span_count === 2 || t.span_count === 3, `${at}: ${t.span_count} child spans, want 2 or 3`);
  expect(t.platform === svc.platform && t.release === svc.release && t.environment === "demo",
    `${at}: platform/release/environment ${t.platform}/${t.release}/${t.environment}`);
  expect(t.server_name === `${t["service.name"]}-7c9f` && t.sdk === "sentry.otelcol.exporter", `${at}: server_name/sdk ${t.server_name}/${t.sdk}`);
  expect(!t.parent_span_id, `${at}: a root transaction has no parent span`);
  spans[t["service.name"]] = (spans[t["service.name"]] ?? 0) + 1 + (t.span_count ?? 0);
}
unique(got.trace, "transactions");

// Errors: one per exception, linked to its shown trace, typed and framed as an SDK's.
const errorsOf = new Map();
const exceptions = {};
for (const e of got.error) {
  const at = `error ${e.event_id}`;
  const t = traces.get(e.trace_id);
  expect(t, `${at}: its trace ${e.trace_id} is not shown`);
  if (!t) continue;
  const svc = SERVICES[t["service.name"]];
  errorsOf.set(e.trace_id, [...(errorsOf.get(e.trace_id) ?? []), e]);
  exceptions[t["service.name"]] = (exceptions[t["service.name"]] ?? 0) + 1;
  expect(e.level === "error", `${at}: level ${e.level}`);
  expect(e.transaction === t.transaction && e.platform === svc.platform && e.release === svc.release,
    `${at}: transaction/platform/release ${e.transaction}/${e.platform}/${e.release}, its trace's ${t.transaction}/${svc.platform}/${svc.release}`);
  expect(e.exception_type === svc.exception.type && e.exception_value === svc.exception.value,
    `${at}: exception ${e.exception_type}: ${e.exception_value}, want ${svc.exception.type}: ${svc.exception.value}`);
  for (const [k, v] of Object.entries(svc.frame)) {
    expect(e[k] === v, `${at}: frame's ${k} ${e[k]}, want ${v}`);
  }
}
unique(got.error, "errors");
for (const [id, t] of traces) {
  const errs = errorsOf.get(id) ?? [];
  const failed = t.status === "internal_error";
  // a failed trace: the exception on its server span, and the exception log on its db span
  expect(errs.length === (failed ? 2 : 0), `trace ${id} (${t.status}): ${errs.length} errors, want ${failed ? 2 : 0}`);
  if (failed) {
    const fromLog = errs.filter((e) => e.message?.formatted === `${t.transaction} failed: ${SERVICES[t["service.name"]].message}`);
    expect(fromLog.length === 1, `trace ${id}: ${fromLog.length} errors with the exception log's message, want 1`);
  }
}

// Logs: each linked to a shown trace, its level and attributes as an SDK's.
const logsOf = new Map();
const logs = {};
for (const l of got.log) {
  const t = traces.get(l.trace_id);
  const at = `log "${l.message}"`;
  expect(t, `${at}: its trace ${l.trace_id} is not shown`);
  if (!t) continue;
  const svc = SERVICES[t["service.name"]];
  logsOf.set(l.trace_id, (logsOf.get(l.trace_id) ?? 0) + 1);
  logs[t["service.name"]] = (logs[t["service.name"]] ?? 0) + 1;
  expect(LEVELS[l.level] === l.severity_number, `${at}: level ${l.level}, severity_number ${l.severity_number}`);
  expect(l["service.name"] === t["service.name"] && l["sentry.release"] === svc.release && l["sentry.environment"] === "demo",
    `${at}: service/release/environment ${l["service.name"]}/${l["sentry.release"]}/${l["sentry.environment"]}`);
  // The host is server.address; a record that names its own (an upstream's, otlpgen's error logs)
  // keeps it, and the host goes as host.name.
  const host = l["host.name"] ?? l["server.address"];
  expect(l["sentry.sdk.name"] === "sentry.otelcol.exporter" && host === `${t["service.name"]}-7c9f` &&
    (l["host.name"] === undefined || l.message.includes(`upstream ${l["server.address"]} `)),
    `${at}: sentry.sdk.name/server.address/host.name ${l["sentry.sdk.name"]}/${l["server.address"]}/${l["host.name"]}`);
  const isException = l["exception.type"] !== undefined;
  // otlpgen's logs carry their call site (code.*) and the request's method and route (cmd/otlpgen/gen.go logRecord)
  expect(isException ? l.level === "error" && typeof l["code.function.name"] === "string" :
    typeof l["code.function.name"] === "string" && Number.isInteger(l["code.line.number"]) &&
    typeof l["http.route"] === "string" && typeof l["http.request.method"] === "string",
    `${at}: its attributes are missing`);
}
for (const [id, t] of traces) {
  const want = t.status === "internal_error" ? 3 : 2;
  expect((logsOf.get(id) ?? 0) === want, `trace ${id}: ${logsOf.get(id) ?? 0} logs, want ${want}`);
}

// Profile chunks: each one as Spotlight's UI takes it (type profile_chunk, version "2", its
// samples, stacks, frames and thread_metadata), joined to transactions by profiler_id: each
// chunk's profiler is named by a shown transaction, and every profiler a transaction names
// sent chunks (a transaction never names a profiler that sends nothing).
const stream = streamed(args[2]);
const profilers = new Map();
for (const { header, payload: c } of stream.chunks) {
  const at = `profile chunk ${c.chunk_id}`;
  expect(c.version === "2" && header.platform === c.platform, `${at}: version ${c.version}, platform ${c.platform} (item header ${header.platform})`);
  const p = c.profile ?? {};
  expect(Array.isArray(p.samples) && p.samples.length >= 2 && Array.isArray(p.stacks) && Array.isArray(p.frames) &&
    typeof p.thread_metadata === "object", `${at}: samples/stacks/frames/thread_metadata missing`);
  for (const smp of p.samples ?? []) {
    expect(typeof smp.thread_id === "string" && p.thread_metadata?.[smp.thread_id] && p.stacks?.[smp.stack_id] &&
      typeof smp.timestamp === "number", `${at}: a sample with thread ${smp.thread_id}, stack ${smp.stack_id}`);
  }
  profilers.set(c.profiler_id, (profilers.get(c.profiler_id) ?? 0) + 1);
}
const named = new Map(); // profiler_id → transactions naming it
for (const [traceID, id] of stream.profilerOf) {
  if (!id) continue;
  named.set(id, (named.get(id) ?? 0) + 1);
  expect(profilers.has(id), `transaction of trace ${traceID} names profiler ${id}, which sent no chunk`);
}
for (const id of profilers.keys()) {
  expect(named.has(id), `profiler ${id}: no shown transaction names it, so the UI shows its chunks nowhere`);
}
expect(stream.chunks.length === (sent.profile_chunks ?? 0), `${stream.chunks.length} profile chunks streamed, ${sent.profile_chunks} sent`);
unique(stream.chunks.map((c) => ({ event_id: c.payload.chunk_id })), "profile chunks");

// Against otlpgen's totals, per service too.
expect(got.trace.length === sent.traces, `${got.trace.length} traces shown, ${sent.traces} sent`);
expect(got.error.length === sent.exceptions, `${got.error.length} errors shown, ${sent.exceptions} exceptions sent`);
expect(got.log.length === sent.logs, `${got.log.length} logs shown, ${sent.logs} sent`);
for (const [name, by] of Object.entries(sent.by_service)) {
  expect((spans[name] ?? 0) === by.spans, `${name}: ${spans[name] ?? 0} spans shown, ${by.spans} sent`);
  expect((exceptions[name] ?? 0) === by.exceptions, `${name}: ${exceptions[name] ?? 0} errors shown, ${by.exceptions} sent`);
  expect((logs[name] ?? 0) === by.logs, `${name}: ${logs[name] ?? 0} logs shown, ${by.logs} sent`);
}

console.log(`shown by Spotlight / sent by otlpgen: traces ${got.trace.length}/${sent.traces}, ` +
  `spans ${Object.values(spans).reduce((a, b) => a + b, 0)}/${sent.spans}, ` +
  `errors ${got.error.length}/${sent.exceptions} exceptions, logs ${got.log.length}/${sent.logs}, ` +
  `profile chunks ${stream.chunks.length}/${sent.profile_chunks} (${profilers.size} profilers, named by ` +
  `${[...named.values()].reduce((a, b) => a + b, 0)} transactions)`);
if (failures.length > 0) {
  console.log(`FAIL:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
console.log("OK: every trace, error, log and profile chunk shown once, each error and log linked to its trace, each chunk to transactions of its process, fields as the SDKs fill them");
