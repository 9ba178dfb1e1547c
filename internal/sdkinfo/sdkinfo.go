// Package sdkinfo is who this exporter says it is on the wire: the SDK name
// and version in every envelope's `sdk` header, in X-Sentry-Auth's
// sentry_client, in every event's `sdk` and in the User-Agent.
//
// Its one job is that one identity, so that no two places spell it
// differently. It must not hold anything else.
package sdkinfo

import "github.com/otel-sentry/sentryexporter/envelope"

const (
	// Name is the SDK name Sentry shows for data sent by this exporter.
	Name = "sentry.otelcol.exporter"
	// Version is this exporter's release, stated here once: the User-Agent,
	// X-Sentry-Auth and every sdk header take it; builder-config.yaml's
	// dist.version, CHANGELOG.md's top entry and the README's install
	// section are held to it by TestVersionStatedOnce.
	Version = "0.1.0"
)

// Envelope returns the envelope `sdk` header. Every envelope may share the
// one value it points to: nothing writes to it.
func Envelope() *envelope.SDKInfo { return envelopeSDK }

var envelopeSDK = &envelope.SDKInfo{Name: Name, Version: Version}
