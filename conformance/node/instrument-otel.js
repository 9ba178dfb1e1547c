'use strict';
// The OpenTelemetry JS SDK as its documentation starts it: NodeSDK with the
// HTTP instrumentation; the OTLP/HTTP exporter, resource, sampler and batching
// are its defaults, configured by the OTEL_* environment (spanstream_test.go).
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');

const sdk = new NodeSDK({ instrumentations: [new HttpInstrumentation()] });
sdk.start();
globalThis.flushTelemetry = () => sdk.shutdown();

const { trace, metrics, SpanKind } = require('@opentelemetry/api');

const tracer = trace.getTracer('shop');
globalThis.dbSpan = (name, attributes, fn) =>
  tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });

// Instruments as the semantic conventions advise (a Counter, a Gauge, a
// Histogram), created once; units in UCUM.
const meter = metrics.getMeter('shop');
const ucum = { millisecond: 'ms' };
const instruments = new Map();
const instrument = (kind, name, unit) => {
  const key = `${kind} ${name}`;
  if (!instruments.has(key)) {
    const make = { count: 'createCounter', gauge: 'createGauge', distribution: 'createHistogram' }[kind];
    instruments.set(key, meter[make](name, unit ? { unit: ucum[unit] ?? unit } : {}));
  }
  return instruments.get(key);
};
globalThis.shopMetrics = {
  count: (name, value, attributes) => instrument('count', name).add(value, attributes),
  gauge: (name, value, attributes) => instrument('gauge', name).record(value, attributes),
  distribution: (name, value, unit, attributes) => instrument('distribution', name, unit).record(value, attributes),
};
