package sentryexporter // import "github.com/otel-sentry/sentryexporter"

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	sentry "github.com/getsentry/sentry-go"
)

// sentryVersion is the protocol version in X-Sentry-Auth.
const sentryVersion = "7"

// dsn is what the exporter keeps of a parsed DSN. It holds the public key, so
// it must never be logged, put in an error or in a metric; only projectID may.
type dsn struct {
	projectID   string
	publicKey   string
	envelopeURL string // never carries userinfo: the key travels in X-Sentry-Auth
	authHeader  string // X-Sentry-Auth value
}

// parseDSN parses a Sentry DSN with sentry-go and checks what Relay needs:
// http(s), a public key, a numeric project id. Its errors name `dsn` and
// never repeat the input, which carries the key (sentry-go's own error quotes it).
func parseDSN(raw string) (*dsn, error) {
	d, err := sentry.NewDsn(raw)
	if err != nil {
		return nil, fmt.Errorf("`dsn` is not a valid Sentry DSN: %s", dsnProblem(err))
	}
	project := d.GetProjectID()
	for _, r := range project {
		if r < '0' || r > '9' {
			return nil, errors.New("`dsn` is not a valid Sentry DSN: the project id (last path segment) must be numeric")
		}
	}
	u := d.GetAPIURL()
	return &dsn{
		projectID:   project,
		publicKey:   d.GetPublicKey(),
		envelopeURL: u.String(),
		authHeader:  authHeader(d.GetPublicKey(), d.GetSecretKey()),
	}, nil
}

// dsnProblem turns sentry-go's parse error into a phrase without the input.
func dsnProblem(err error) string {
	var pe *sentry.DsnParseError
	if !errors.As(err, &pe) {
		return "it does not parse"
	}
	switch msg := pe.Message; {
	case msg == "invalid scheme":
		return "the scheme must be http or https"
	case msg == "empty username":
		return "it has no public key"
	case msg == "empty host":
		return "it has no host"
	case msg == "invalid port":
		return "the port is not a number"
	case msg == "empty project id":
		return "it has no project id"
	case strings.HasPrefix(msg, "invalid url"):
		return "it is not a URL" // the wrapped url.Error quotes the whole DSN: never repeat it
	default:
		return "it does not parse"
	}
}

// authHeader builds X-Sentry-Auth; sentry_secret only when the DSN has one.
func authHeader(publicKey, secretKey string) string {
	var b strings.Builder
	b.WriteString("Sentry sentry_version=")
	b.WriteString(sentryVersion)
	b.WriteString(", sentry_client=")
	b.WriteString(sdkName)
	b.WriteString("/")
	b.WriteString(sdkVersion)
	b.WriteString(", sentry_key=")
	b.WriteString(publicKey)
	if secretKey != "" {
		b.WriteString(", sentry_secret=")
		b.WriteString(secretKey)
	}
	return b.String()
}

// parseEndpoint checks an `endpoint` override: an http(s) URL without query.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("`endpoint` must be an http or https URL")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("`endpoint` must not have a query or fragment")
	}
	return u, nil
}

// envelopeURL derives the one URL envelopes are POSTed to: the DSN's own, or
// `endpoint` (scheme, host, path prefix) + /api/<project>/envelope/.
func envelopeURL(d *dsn, endpoint string) (string, error) {
	if endpoint == "" {
		return d.envelopeURL, nil
	}
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return "", err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/" + d.projectID + "/envelope/"
	return u.String(), nil
}
