'use strict';
// @sentry/node 11.12 at its defaults (traceLifecycle "stream"), tracing every request.
const Sentry = require('@sentry/node');

Sentry.init({
  dsn: process.env.SENTRY_DSN,
  release: process.env.SHOP_RELEASE,
  environment: process.env.SHOP_ENVIRONMENT,
  tracesSampleRate: 1,
});
globalThis.flushTelemetry = () => Sentry.close(5000);
globalThis.dbSpan = (name, attributes, fn) => Sentry.startSpan({ name, op: 'db', attributes }, fn);
globalThis.shopMetrics = {
  count: (name, value, attributes) => Sentry.metrics.count(name, value, { attributes }),
  gauge: (name, value, attributes) => Sentry.metrics.gauge(name, value, { attributes }),
  distribution: (name, value, unit, attributes) => Sentry.metrics.distribution(name, value, { unit, attributes }),
};
