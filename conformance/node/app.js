'use strict';
// The program: a plain node:http shop. It is instrumented from outside with
// `node --require ./instrument-sentry.js app.js` (@sentry/node 11.12 at its
// defaults: span streaming) or `--import ./instrument-otel.js` (the
// OpenTelemetry JS SDK, OTLP/HTTP exporter at its defaults). The HTTP server
// and client spans come from each one's HTTP instrumentation; the database
// span from globalThis.dbSpan, which each instrument file defines with its
// own SDK's documented API (Sentry.startSpan, tracer.startActiveSpan); the
// metrics from globalThis.shopMetrics, with each SDK's metrics API
// (Sentry.metrics, an OTel Meter): metrics_node_test.go compares those.
//
// The test (spanstream_test.go) reads the port from the first stdout line,
// sends the requests, and closes stdin: the program then flushes and exits.
const http = require('node:http');

function query(text, operation, collection) {
  // What a database instrumentation records: a client span named after the
  // operation and the table, the query text as an attribute.
  return globalThis.dbSpan(`${operation} ${collection}`, {
    'db.system.name': 'postgresql',
    'db.operation.name': operation,
    'db.collection.name': collection,
    'db.query.text': text,
  }, () => new Promise((resolve) => setTimeout(resolve, 2)));
}

function get(port, path, headers) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
  });
}

let port = 0;

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  switch (url.pathname) {
    case '/users': {
      await query('SELECT id, name FROM users WHERE id = $1', 'SELECT', 'users');
      // inside the request's server span: a counter, a gauge and a distribution
      globalThis.shopMetrics.count('shop.orders', 3, { 'shop.region': 'eu-west', 'shop.express': true, 'shop.items': 3 });
      globalThis.shopMetrics.gauge('shop.queue.depth', 12.5, { 'shop.region': 'eu-west' });
      globalThis.shopMetrics.distribution('shop.checkout.duration', 120, 'millisecond', { 'shop.region': 'eu-west' });
      await get(port, '/inventory?item=42');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"users":[]}');
      return;
    }
    case '/inventory': {
      await query('UPDATE stock SET n = n - 1 WHERE item = $1', 'UPDATE', 'stock');
      res.writeHead(200);
      res.end('ok');
      return;
    }
    case '/fail': {
      res.writeHead(500);
      res.end('boom');
      return;
    }
    default:
      res.writeHead(404);
      res.end();
  }
});

server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  process.stdout.write(`${port}\n`);
  process.stdin.resume();
  process.stdin.on('end', async () => {
    server.close();
    await globalThis.flushTelemetry();
    process.exit(0);
  });
});
