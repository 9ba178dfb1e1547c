package translate

import (
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
//	query_string  url.query, else the query of the URL the url came from: url.full |
//	              http.url when there is one, else url.path | http.target; everything
//	              after the first `?` (a second one is part of it), no fragment.
//	              Span v2's url.full carries the same query (serverURL)
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

// maxHeaders bounds the headers written; maxHeaderValue bounds each value.
const (
	maxHeaders     = 64
	maxHeaderValue = 2048
)

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
	if q := a.queryString(); q != "" {
		w.key(&n, "query_string")
		w.str(filterQuery(q, pii), limit)
	}
	if pii && a.hasCookie {
		if c, ok := m.Get(headerPrefix + "cookie"); ok {
			w.key(&n, "cookies")
			w.str(filterCookies(headerValue(c)), maxHeaderValue)
		}
	}
	h := headersObject{w: w, n: &n}
	h.writeAll(m, pii)
	if !a.hasHost && host != "" {
		h.extra("Host", hostPort(host, a.scheme, a.port))
	}
	if !a.hasUA {
		h.extra("User-Agent", a.userAgent)
	}
	h.close()
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

// headersObject writes the request's "headers" object: the key and the
// opening brace come with its first header, so a request without headers
// has no object.
type headersObject struct {
	w *jw
	n *int // the request object's member count
	h int  // headers written
}

func (o *headersObject) open() {
	if o.h == 0 {
		o.w.key(o.n, "headers")
		o.w.byte('{')
	}
	o.w.comma(&o.h)
}

// writeAll writes the span's http.request.header.* attributes, at most
// maxHeaders: the values of sensitive names and cookies filtered, and
// Cookie and Set-Cookie only with pii.
func (o *headersObject) writeAll(m pcommon.Map, pii bool) {
	w := o.w
	for k, v := range m.All() {
		if o.h >= maxHeaders || len(k) <= len(headerPrefix) || !strings.HasPrefix(k, headerPrefix) {
			continue
		}
		name := k[len(headerPrefix):]
		lower := strings.ToLower(name) // allocates only for names with upper case
		cookie := lower == "cookie" || lower == "set-cookie"
		if cookie && !pii {
			continue
		}
		o.open()
		headerName(w, name)
		w.byte(':')
		switch {
		case cookie:
			w.str(filterCookies(headerValue(v)), maxHeaderValue)
		case sensitive(lower, pii):
			w.raw(`"` + filtered + `"`)
		default:
			w.str(headerValue(v), maxHeaderValue)
		}
	}
}

// extra writes a header the span's attributes imply, when it has a value.
func (o *headersObject) extra(name, v string) {
	if v == "" {
		return
	}
	o.open()
	o.w.raw(`"` + name + `":`)
	o.w.str(v, maxHeaderValue)
}

func (o *headersObject) close() {
	if o.h > 0 {
		o.w.byte('}')
	}
}
