package translate

import (
	"cmp"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// queryString is the request's query: url.query, else the query of the URL
// the request's url is built from (url.full | http.url when there is one,
// else the path), everything after its first `?` without the fragment. The
// request object's query_string and span v2's url.full both take it, so that
// they agree.
func (a *reqAttrs) queryString() string {
	if a.query != "" {
		return a.query
	}
	u := cmp.Or(a.urlFull, a.anyPath())
	_, q, ok := strings.Cut(u, "?")
	if !ok {
		return ""
	}
	if j := strings.IndexByte(q, '#'); j >= 0 {
		q = q[:j]
	}
	return q
}

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
