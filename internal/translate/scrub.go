package translate

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Span attributes under the SDKs' PII defaults.
//
// The request object (request.go) filters what it shows, so the span
// attributes it comes from (contexts.trace.data, spans[].data and span v2
// attributes) must not carry the same values unfiltered. Without
// SendDefaultPII:
//   - http.request.header.cookie / set-cookie and http.response.header.set-cookie
//     are left out;
//   - client.address, http.client_ip, net.sock.peer.addr, net.peer.ip (IP
//     addresses) and enduser.id, user.id, user.email, user.name,
//     user.ip_address (user data) are left out;
//   - on server spans, network.peer.address and network.peer.port are left
//     out too: there the peer is the client (otelhttp records the client's IP
//     there as well as in client.address). On client spans the peer is the
//     server called, which sentry-go and the JS SDK record on outgoing spans
//     (server.address), so it is kept;
//
// and either way:
//   - http.request.header.* / http.response.header.* whose name contains a
//     sensitive term (sensitive) have the value "[Filtered]";
//   - url.query, and the query of url.full, http.url and http.target, have
//     the values of sensitive parameters "[Filtered]", and url.full and
//     http.url lose their userinfo (user:password@);
//   - with SendDefaultPII, the cookie headers have sensitive cookies "[Filtered]".
//
// Log attributes and exception event attributes are what the program chose
// to record and are written as they are.

type scrubAction uint8

const (
	scrubKeep scrubAction = iota
	scrubDrop
	scrubValue    // the value becomes "[Filtered]"
	scrubQuery    // sensitive parameters of the URL's query become "[Filtered]"
	scrubQueryAll // the value is a query: sensitive parameters become "[Filtered]"
	scrubCookie   // sensitive cookies become "[Filtered]"
)

// scrubFor says what happens to span attribute k. It is called for every
// span attribute, so it rejects most keys on their first byte. server says the
// attributes are a server span's.
func scrubFor(k string, pii, server bool) scrubAction {
	if len(k) < 7 {
		return scrubKeep
	}
	switch k[0] {
	case 'h', 'u', 'c', 'n', 'e':
	default:
		return scrubKeep
	}
	switch k {
	case "url.query":
		return scrubQueryAll
	case "url.full", "http.url", "http.target":
		return scrubQuery
	case "client.address", "http.client_ip", "net.sock.peer.addr", "net.peer.ip",
		"enduser.id", "user.id", "user.email", "user.name", "user.ip_address":
		if pii {
			return scrubKeep
		}
		return scrubDrop
	case "network.peer.address", "network.peer.port":
		if pii || !server {
			return scrubKeep
		}
		return scrubDrop
	}
	var name string
	switch {
	case strings.HasPrefix(k, "http.request.header."):
		name = k[len("http.request.header."):]
	case strings.HasPrefix(k, "http.response.header."):
		name = k[len("http.response.header."):]
	default:
		return scrubKeep
	}
	lower := strings.ToLower(name)
	if lower == "cookie" || lower == "set-cookie" {
		if pii {
			return scrubCookie
		}
		return scrubDrop
	}
	if sensitive(lower, pii) {
		return scrubValue
	}
	return scrubKeep
}

// writeScrubbed writes the value of attribute k under action act (not
// scrubKeep or scrubDrop), plain or typed.
func (s *state) writeScrubbed(w *jw, v pcommon.Value, act scrubAction, typed bool, l *limits) {
	var out string
	switch act {
	case scrubValue:
		out = filtered
	case scrubCookie:
		out = filterCookies(headerValue(v))
	case scrubQuery, scrubQueryAll:
		if v.Type() != pcommon.ValueTypeStr {
			if typed {
				s.typedT(w, v, v.Type(), l)
			} else {
				plain(w, v, l, 1)
			}
			return
		}
		out = stripUserinfo(v.Str())
		base := out
		if j := strings.IndexByte(base, '#'); j >= 0 {
			base = base[:j]
		}
		q, pre := base, ""
		if i := strings.IndexByte(base, '?'); i >= 0 {
			q, pre = base[i+1:], base[:i+1]
		} else if act == scrubQuery {
			q = "" // a URL or path without a query
		}
		if fq := filterQuery(q, s.t.o.SendDefaultPII); fq != q {
			out = pre + fq + out[len(base):] // allocates only when something is filtered
		}
	}
	if typed {
		w.raw(`{"type":"string","value":`)
		w.str(out, l.value)
		w.byte('}')
		return
	}
	w.str(out, l.value)
}

// stripUserinfo drops the user:password@ of a URL.
func stripUserinfo(u string) string {
	if strings.IndexByte(u, '@') < 0 {
		return u
	}
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	auth := u[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		return u[:i+3] + u[i+4+at:] // rare: allocates
	}
	return u
}
