package conformance

import (
	"encoding/json"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// validate runs the project's strict model of what Relay accepts. It is
// applied to the exporter's envelopes only: it also holds the exporter's own
// writing contract (lowercase hex IDs, a bool `sampled`), which sentry-go's
// valid envelopes need not meet.
func validate(raw []byte) error {
	env, err := envelope.Parse(raw)
	if err != nil {
		return err
	}
	return envelope.Validate(env, envelope.RelayDefaults())
}

type jsonRaw = json.RawMessage

func unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func marshal(v any) ([]byte, error) { return json.Marshal(v) }
