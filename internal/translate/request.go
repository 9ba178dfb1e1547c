package translate

import (
	"cmp"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The request interface and contexts.response of a server segment.
//
// A segment whose root is an HTTP server span (kind SERVER with an HTTP method,
// route or status code) gives its transactions, and the error events raised
// from span events inside it, a "request" object and contexts.response.status_code,
// as sentry-go's sentryhttp (interfaces.go newRequest) and @sentry/node
// (httpRequestToRequestData + requestDataIntegration) write them:
//
//	method        http.request.method | http.method
//	url           url.full | http.url without query, fragment and userinfo; else
//	              scheme://host[:port]path from url.scheme | http.scheme (default http),
//	              server.address | http.host | net.host.name | the Host header (no host: no url),
//	              server.port | net.host.port (left out when it is the scheme's default),
//	              url.path | http.target (without query)
//	query_string  url.query, else the query of http.target / url.path / url.full
//	headers       http.request.header.<name> (arrays joined with ","; names in
//	              canonical form, user-agent -> User-Agent), User-Agent from
//	              user_agent.original | http.user_agent and Host from the server
//	              address when the span has no such header
//	status_code   http.response.status_code | http.status_code -> contexts.response
//
// PII defaults follow sentry-go v0.50.0 (data_collection.go, legacy mode with
// SendDefaultPII false): header values and query parameters whose name contains
// a sensitive term (auth, token, secret, session, key, password, cookie, ...)
// become "[Filtered]" always; without SendDefaultPII the Cookie and Set-Cookie
// headers are left out and the names of IP-address headers (forwarded, -ip,
// remote-, via, -user) are filtered too. SendDefaultPII adds the Cookie header
// and "cookies" (sensitive cookie names filtered), unfiltered IP-address
// headers, and env.REMOTE_ADDR / env.REMOTE_PORT from client.address |
// http.client_ip | net.sock.peer.addr | net.peer.ip and client.port |
// net.sock.peer.port.

const filtered = "[Filtered]"

// sensitiveTerms are sentry-go's defaultSensitiveTerms plus "cookie", which
// @sentry/core's SENSITIVE_KEY_SNIPPETS adds.
var sensitiveTerms = [...]string{
	"auth", "bearer", "credentials", "csrf", "identity", "jwt", "key", "passwd",
	"password", "pwd", "saml", "secret", "session", "sid", "sso", "token", "xsrf", "cookie",
}

// ipTerms are sentry-go's extendedSensitiveTerms: IP addresses and user ids
// carried in headers, filtered unless SendDefaultPII.
var ipTerms = [...]string{"forwarded", "-ip", "remote-", "via", "-user"}

// maxHeaders bounds the headers written; maxHeaderValue bounds each value.
const (
	maxHeaders     = 64
	maxHeaderValue = 2048
)

// reqAttrs are the attributes of a server span the request is built from.
type reqAttrs struct {
	method, urlFull, scheme, host, hostOld, hostName, path, target, query string
	userAgent, client, clientPort, hostHeader                             string
	port                                                                  int64
	code                                                                  int64
	hasUA, hasHost, hasCookie                                             bool
}

const headerPrefix = "http.request.header."

func (a *reqAttrs) scan(m pcommon.Map) {
	for k, v := range m.All() {
		switch k {
		case "http.request.method", "http.method":
			a.method = str(v)
		case "url.full", "http.url":
			a.urlFull = str(v)
		case "url.scheme", "http.scheme":
			a.scheme = str(v)
		case "server.address":
			a.host = str(v)
		case "http.host":
			a.hostOld = str(v)
		case "net.host.name":
			a.hostName = str(v)
		case "server.port", "net.host.port":
			a.port = intOf(v)
		case "url.path":
			a.path = str(v)
		case "http.target":
			a.target = str(v)
		case "url.query":
			a.query = str(v)
		case "user_agent.original", "http.user_agent":
			a.userAgent = str(v)
		case "client.address", "http.client_ip", "net.sock.peer.addr", "net.peer.ip":
			if a.client == "" || k == "client.address" {
				a.client = str(v)
			}
		case "client.port", "net.sock.peer.port":
			a.clientPort = v.AsString()
		case "http.response.status_code", "http.status_code":
			a.code = intOf(v)
		default:
			if len(k) > len(headerPrefix) && strings.HasPrefix(k, headerPrefix) {
				switch strings.ToLower(k[len(headerPrefix):]) {
				case "user-agent":
					a.hasUA = true
				case "host":
					a.hasHost, a.hostHeader = true, headerValue(v)
				case "cookie":
					a.hasCookie = true
				}
			}
		}
	}
}

// anyHost is the request's host: server.address, http.host, net.host.name,
// else the Host header.
func (a *reqAttrs) anyHost() string { return cmp.Or(a.host, a.hostOld, a.hostName, a.hostHeader) }

// anyPath is the request's path, url.path else http.target, query included.
func (a *reqAttrs) anyPath() string { return cmp.Or(a.path, a.target) }

// hostURL is the URL of a request without url.full / http.url, query and
// fragment left out: scheme://host[:port]path, the scheme url.scheme |
// http.scheme, http by default. The request object (writeRequest) and span
// v2's url.full (serverURL) both build it so.
func (a *reqAttrs) hostURL(host, path string) name {
	scheme := cmp.Or(a.scheme, "http")
	pre := "http://"
	switch scheme {
	case "https":
		pre = "https://"
	case "http":
	default:
		pre = scheme + "://" // rare: allocates
	}
	return name{pre, hostPort(host, scheme, a.port), stripQuery(path)}
}

// serverRequest reports whether a span gets a request object.
func serverRequest(sp ptrace.Span, sem *semInfo) bool {
	return sp.Kind() == ptrace.SpanKindServer && sem.http
}

// segmentRequest renders the request object of segment seg once, into
// s.frag, and returns it with the response status code. ok is false when the
// segment root is not an HTTP server span.
func (s *state) segmentRequest(seg int32) (req frag, code int, ok bool) {
	sg := &s.segs[seg]
	if !sg.reqDone {
		sg.reqDone = true
		root := &s.spans[sg.root]
		if serverRequest(root.sp, &root.sem) {
			a := s.frag.len()
			sg.code = s.writeRequest(&s.frag, root.sp.Attributes())
			sg.req = frag{a, s.frag.len()}
			sg.hasReq = true
		}
	}
	return sg.req, sg.code, sg.hasReq
}

// writeRequest writes the request object and returns the status code (0 when
// there is none).
func (s *state) writeRequest(w *jw, m pcommon.Map) int {
	var a reqAttrs
	a.scan(m)
	pii := s.t.o.SendDefaultPII
	limit := s.t.o.MaxValueBytes
	n := 0
	w.byte('{')
	w.optStrField(&n, "method", a.method, 32)

	host, path := a.anyHost(), a.anyPath()
	if a.urlFull != "" {
		w.strField(&n, "url", stripURL(a.urlFull), limit)
	} else if host != "" { // no host: no url, as @sentry/core's getAbsoluteUrl
		w.key(&n, "url")
		w.name(a.hostURL(host, path), limit)
	}
	q := a.query
	if q == "" {
		for _, u := range [...]string{path, a.urlFull} {
			if _, after, ok := strings.Cut(u, "?"); ok {
				q = after
				if j := strings.IndexByte(q, '#'); j >= 0 {
					q = q[:j]
				}
				break
			}
		}
	}
	if q != "" {
		w.key(&n, "query_string")
		w.str(filterQuery(q, pii), limit)
	}
	if pii && a.hasCookie {
		if c, ok := m.Get(headerPrefix + "cookie"); ok {
			w.key(&n, "cookies")
			w.str(filterCookies(headerValue(c)), maxHeaderValue)
		}
	}

	h := 0
	for k, v := range m.All() {
		if h >= maxHeaders || len(k) <= len(headerPrefix) || !strings.HasPrefix(k, headerPrefix) {
			continue
		}
		name := k[len(headerPrefix):]
		lower := strings.ToLower(name) // allocates only for names with upper case
		if (lower == "cookie" || lower == "set-cookie") && !pii {
			continue
		}
		if h == 0 {
			w.key(&n, "headers")
			w.byte('{')
		}
		w.comma(&h)
		headerName(w, name)
		w.byte(':')
		switch {
		case lower == "cookie" || lower == "set-cookie":
			w.str(filterCookies(headerValue(v)), maxHeaderValue)
		case sensitive(lower, pii):
			w.raw(`"` + filtered + `"`)
		default:
			w.str(headerValue(v), maxHeaderValue)
		}
	}
	extra := func(name, v string) {
		if v == "" {
			return
		}
		if h == 0 {
			w.key(&n, "headers")
			w.byte('{')
		}
		w.comma(&h)
		w.raw(`"` + name + `":`)
		w.str(v, maxHeaderValue)
	}
	if !a.hasHost && host != "" {
		extra("Host", hostPort(host, a.scheme, a.port))
	}
	if !a.hasUA {
		extra("User-Agent", a.userAgent)
	}
	if h > 0 {
		w.byte('}')
	}
	if pii && a.client != "" {
		w.key(&n, "env")
		m := 0
		w.byte('{')
		w.strField(&m, "REMOTE_ADDR", a.client, 256)
		w.optStrField(&m, "REMOTE_PORT", a.clientPort, 16)
		w.byte('}')
	}
	w.byte('}')
	if a.code < 100 || a.code > 999 {
		return 0
	}
	return int(a.code)
}

// hostPort is host with ":port" unless the port is the scheme's default or the
// host already has one.
func hostPort(host, scheme string, port int64) string {
	if port <= 0 || strings.Contains(host, ":") || defaultPort(scheme, port) {
		return host
	}
	return host + ":" + strconv.FormatInt(port, 10) // rare: allocates
}

func defaultPort(scheme string, port int64) bool {
	return (port == 80 && (scheme == "http" || scheme == "")) || (port == 443 && scheme == "https")
}

// headerValue is one header's value: arrays (the OTel form) joined with ",".
func headerValue(v pcommon.Value) string {
	if v.Type() != pcommon.ValueTypeSlice {
		return v.AsString()
	}
	sl := v.Slice()
	switch sl.Len() {
	case 0:
		return ""
	case 1:
		return sl.At(0).AsString()
	}
	var b strings.Builder
	for i := range sl.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(sl.At(i).AsString())
	}
	return b.String()
}

// headerNameChar reports whether c is in [A-Za-z0-9-_.].
func headerNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// headerName writes a header name in Go's canonical form (user-agent ->
// User-Agent), as sentry-go's request headers are; a name with characters
// outside [A-Za-z0-9-_.] is written as it is, escaped.
func headerName(w *jw, name string) {
	for i := 0; i < len(name); i++ {
		if !headerNameChar(name[i]) || i >= 256 {
			w.str(name, 256)
			return
		}
	}
	b := w.b
	b = append(b, '"')
	up := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case up && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case !up && c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
		up = c == '-'
	}
	b = append(b, '"')
	w.b = b
}

// sensitive reports whether a header, query parameter or cookie name has its
// value filtered: whether it contains a term, ignoring ASCII case.
func sensitive(name string, pii bool) bool {
	if containsTerm(name, &sensitiveByFirst) {
		return true
	}
	return !pii && containsTerm(name, &ipByFirst)
}

// termTable lists terms by their first byte, so a name is scanned once.
type termTable [256][]string

var sensitiveByFirst, ipByFirst = termsByFirst(sensitiveTerms[:]), termsByFirst(ipTerms[:])

func termsByFirst(terms []string) (t termTable) {
	for _, term := range terms {
		t[term[0]] = append(t[term[0]], term)
	}
	return t
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// containsTerm reports whether s contains one of the (lower-case) terms of t,
// ignoring ASCII case.
func containsTerm(s string, t *termTable) bool {
	for i := 0; i < len(s); i++ {
		for _, term := range t[lowerASCII(s[i])] {
			if len(s)-i >= len(term) && hasPrefixFold(s[i:], term) {
				return true
			}
		}
	}
	return false
}

func hasPrefixFold(s, lowerPrefix string) bool {
	for j := 1; j < len(lowerPrefix); j++ {
		if lowerASCII(s[j]) != lowerPrefix[j] {
			return false
		}
	}
	return true
}

// filterQuery replaces the values of sensitive query parameters with
// [Filtered], keeping the order and encoding of everything else.
func filterQuery(q string, pii bool) string {
	if !anySensitivePart(q, '&', pii) {
		return q
	}
	return filterPairs(q, "&", pii)
}

// filterCookies replaces the values of sensitive cookies with [Filtered].
func filterCookies(c string) string {
	if !anySensitivePart(c, ';', true) {
		return c
	}
	return filterPairs(c, ";", true)
}

// anySensitivePart reports whether a name of the name=value parts of s
// (separated by sep) is sensitive. It does not allocate.
func anySensitivePart(s string, sep byte, pii bool) bool {
	for s != "" {
		part := s
		if i := strings.IndexByte(s, sep); i >= 0 {
			part, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if i := strings.IndexByte(part, '='); i >= 0 {
			part = part[:i]
		}
		if sensitive(part, pii) {
			return true
		}
	}
	return false
}

func filterPairs(s, sep string, pii bool) string {
	parts := strings.Split(s, sep)
	for i, part := range parts {
		k, _, hasValue := strings.Cut(part, "=")
		if hasValue && sensitive(k, pii) {
			parts[i] = k + "=" + filtered
		}
	}
	return strings.Join(parts, sep)
}
