// Package loadtest holds the programs of the real-SDK load checks (make sdktraffic,
// make scaleout; docs/sdk-traffic.md). It is a module of its own so that the
// exporter's go.mod does not take the OpenTelemetry SDK:
//
//   - sdkapp: several services instrumented with the OpenTelemetry Go SDK at its
//     defaults (batch span processor, batch log processor, OTLP/HTTP), serving
//     requests of one server span and nine sequential child spans, some of which
//     fail; it writes what it sent to a summary file.
//   - sdkcheck: compares that summary with what the local Sentry sink recorded and
//     with the collectors' own counters, and fails loudly on any difference.
package loadtest
