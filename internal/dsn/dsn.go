package dsn

import (
	"errors"
	"net/url"
	"strings"

	sentry "github.com/getsentry/sentry-go"

	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
)

// sentryVersion is the protocol version in X-Sentry-Auth.
const sentryVersion = "7"

// DSN is what the exporter keeps of a parsed DSN. It holds the public key, so
// it must never be logged, put in an error or in a metric; only ProjectID may.
type DSN struct {
	ProjectID   string
	PublicKey   string // the DSC's public_key; never logged
	AuthHeader  string // X-Sentry-Auth value; never logged
	envelopeURL string // never carries userinfo: the key travels in X-Sentry-Auth
}

// Error says why a DSN is refused. It never holds the DSN, which carries the
// key (sentry-go's own error quotes it).
type Error struct {
	// Problem is what is wrong, as a phrase ("it has no public key").
	Problem string
}

// Error names the `dsn` key; a caller whose DSN comes from another key (a
// routing::dsns entry) names that key with Problem.
func (e *Error) Error() string { return "`dsn` is not a valid Sentry DSN: " + e.Problem }

// Parse parses a Sentry DSN with sentry-go and checks what Relay needs:
// http(s), a public key, a numeric project id. Its error is an *Error.
func Parse(raw string) (*DSN, error) {
	d, err := sentry.NewDsn(raw)
	if err != nil {
		return nil, &Error{Problem: dsnProblem(err)}
	}
	project := d.GetProjectID()
	for _, r := range project {
		if r < '0' || r > '9' {
			return nil, &Error{Problem: "the project id (last path segment) must be numeric"}
		}
	}
	u := d.GetAPIURL()
	return &DSN{
		ProjectID:   project,
		PublicKey:   d.GetPublicKey(),
		AuthHeader:  authHeader(d.GetPublicKey(), d.GetSecretKey()),
		envelopeURL: u.String(),
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
	b.WriteString(sdkinfo.Name)
	b.WriteString("/")
	b.WriteString(sdkinfo.Version)
	b.WriteString(", sentry_key=")
	b.WriteString(publicKey)
	if secretKey != "" {
		b.WriteString(", sentry_secret=")
		b.WriteString(secretKey)
	}
	return b.String()
}

// ParseEndpoint checks an `endpoint` override: an http(s) URL without query.
func ParseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("`endpoint` must be an http or https URL")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("`endpoint` must not have a query or fragment")
	}
	return u, nil
}

// EnvelopeURL derives the one URL envelopes are POSTed to: the DSN's own, or
// `endpoint` (scheme, host, path prefix) + /api/<project>/envelope/.
func EnvelopeURL(d *DSN, endpoint string) (string, error) {
	if endpoint == "" {
		return d.envelopeURL, nil
	}
	u, err := ParseEndpoint(endpoint)
	if err != nil {
		return "", err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/" + d.ProjectID + "/envelope/"
	return u.String(), nil
}
