// Package conformance compares, field by field, what Sentry receives from one
// small web program instrumented with sentry-go and with the OpenTelemetry Go
// SDK sending OTLP through this exporter. Everything lives in its tests; it is
// its own module so that the SDKs it drives stay out of the exporter's go.mod.
package conformance
