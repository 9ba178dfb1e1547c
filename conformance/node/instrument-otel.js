'use strict';
// The OpenTelemetry JS SDK as its documentation starts it: NodeSDK with the
// HTTP instrumentation; the OTLP/HTTP exporter, resource, sampler and batching
// are its defaults, configured by the OTEL_* environment (spanstream_test.go).
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');

const sdk = new NodeSDK({ instrumentations: [new HttpInstrumentation()] });
sdk.start();
globalThis.flushTelemetry = () => sdk.shutdown();

const { trace, SpanKind } = require('@opentelemetry/api');

const tracer = trace.getTracer('shop');
globalThis.dbSpan = (name, attributes, fn) =>
  tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
