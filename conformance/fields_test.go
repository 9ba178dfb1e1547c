package conformance

import (
	"fmt"
	"strings"
)

// Readers of the fields the checks compare, tolerant of every valid shape.

// attrs is a log record's attributes as "type value" by key.
func attrs(l *logRecord) map[string]string {
	out := map[string]string{}
	m, _ := get(l.item, "attributes").(map[string]any)
	for k, v := range m {
		out[k] = str(v, "type") + " " + str(v, "value")
	}
	return out
}

// appFrames lists the exception's frames in the program's own file, caller first.
func appFrames(exc any) string {
	var out []string
	for _, f := range list(exc, "stacktrace", "frames") {
		if strings.HasSuffix(str(f, "abs_path"), "/app_test.go") {
			out = append(out, fmt.Sprintf("%s %s:%s in_app=%s", str(f, "module"), str(f, "function"), str(f, "lineno"), str(f, "in_app")))
		}
	}
	return strings.Join(out, " <- ")
}

// leakedSecrets names the secrets the client sent (Authorization, Cookie)
// whose values appear anywhere in the event: request headers, cookies, or
// span data such as http.request.header.authorization. sentry-go sends
// Authorization as "[Filtered]" and drops Cookie.
func leakedSecrets(ev map[string]any) string {
	b, _ := marshal(ev)
	var out []string
	if strings.Contains(string(b), "secret-token") {
		out = append(out, "Authorization value")
	}
	if strings.Contains(string(b), "secret-session") {
		out = append(out, "Cookie value")
	}
	return strings.Join(out, ", ")
}

// clientIP finds the client's address wherever an event may carry it:
// request.env.REMOTE_ADDR, user.ip_address, and the span attributes that hold
// it (client.address, network.peer.address, net.sock.peer.addr, http.client_ip)
// in the trace context's data.
func clientIP(ev map[string]any) string {
	var found []string
	for _, path := range [][]string{
		{"request", "env", "REMOTE_ADDR"},
		{"user", "ip_address"},
		{"contexts", "trace", "data", "client.address"},
		{"contexts", "trace", "data", "network.peer.address"},
		{"contexts", "trace", "data", "net.sock.peer.addr"},
		{"contexts", "trace", "data", "http.client_ip"},
	} {
		if v := str(ev, path...); v != "" {
			found = append(found, strings.Join(path, ".")+"="+v)
		}
	}
	return strings.Join(found, ", ")
}

func queryString(ev map[string]any) string {
	// query_string may be a string or a list of pairs; both are valid.
	if l := list(ev, "request", "query_string"); l != nil {
		var parts []string
		for _, p := range l {
			parts = append(parts, str(p, "0")+"="+str(p, "1"))
		}
		return strings.Join(parts, "&")
	}
	return str(ev, "request", "query_string")
}

// header reads a request header case-insensitively (headers may also be a list of pairs).
func header(ev map[string]any, name string) string {
	if m, ok := get(ev, "request", "headers").(map[string]any); ok {
		for k, v := range m {
			if strings.EqualFold(k, name) {
				return str(v)
			}
		}
	}
	for _, p := range list(ev, "request", "headers") {
		if strings.EqualFold(str(p, "0"), name) {
			return str(p, "1")
		}
	}
	return ""
}

// processSecrets names the secrets-prone resource attributes an event carries
// anywhere (contexts.otel.resource, span data): the command line and the
// process owner, which the OTel SDK's process detector records and sentry-go
// never sends.
func processSecrets(ev map[string]any) string {
	b, _ := marshal(ev)
	var out []string
	for _, k := range []string{"process.command_args", "process.command_line", "process.owner"} {
		if strings.Contains(string(b), `"`+k+`"`) {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}
