// Package inlinehttp is an HTTP/1.1 client transport for plain-http
// endpoints that does each exchange inline, on the goroutine that calls
// RoundTrip: it writes the request line, the headers and the body in one
// write, and reads the answer's head with net/http's own parser
// (http.ReadResponse), on a keep-alive connection of its pool.
//
// net/http's transport gives every connection two goroutines (readLoop and
// writeLoop) and hands each request and its answer between them and the
// caller through channels: three goroutine switches per request, each a
// thread wake-up in a process that is not saturated. For a sender that
// makes one small POST per envelope (Sentry's protocol) those hand-offs are
// most of the client's cost (docs/performance.md); here there are none.
//
// It must not serve what it does not fully handle: https, a host a proxy
// serves, a request whose body length is unknown or whose headers are not
// valid go to the fallback transport (net/http's). It never retries a request
// (a POST may have been stored): a connection the server closed while idle is
// found before the request is written, as net/http finds it, and never used.
package inlinehttp
