package sdkinfo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// TestIdentity: one name and version, shared by every envelope header, and
// written as Sentry's `sdk` header object.
func TestIdentity(t *testing.T) {
	a := Envelope()
	assert.Same(t, a, Envelope(), "every envelope shares one header value")
	assert.Equal(t, envelope.SDKInfo{Name: Name, Version: Version}, *a)
	assert.Regexp(t, `^[a-z]+(\.[a-z]+)+$`, Name, "a dotted lower-case name, as Sentry's SDKs have")
	assert.Regexp(t, `^\d+\.\d+\.\d+$`, Version, "a release version")
	env := envelope.Envelope{Header: envelope.Header{SDK: a}}
	header, _, _ := strings.Cut(string(env.AppendTo(nil)), "\n")
	var got struct {
		SDK map[string]string `json:"sdk"`
	}
	require.NoError(t, json.Unmarshal([]byte(header), &got))
	assert.Equal(t, map[string]string{"name": Name, "version": Version}, got.SDK)
}
