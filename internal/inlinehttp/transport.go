package inlinehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Options configure a Transport.
type Options struct {
	// Fallback serves what this transport does not: https, proxied hosts,
	// bodies of unknown length, headers it will not write.
	Fallback http.RoundTripper
	// Proxy picks the proxy of a request (http.ProxyFromEnvironment, say);
	// a host it gives a proxy for goes to Fallback. Nil: no proxy.
	Proxy func(*http.Request) (*url.URL, error)
	// MaxIdlePerHost is how many idle connections to one host are kept
	// (net/http's MaxIdleConnsPerHost); 0 keeps 2, as net/http does.
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle for longer (0: 90 s).
	IdleTimeout time.Duration
	// ReadBufferSize is the size of each connection's read buffer (0: 4 KiB).
	ReadBufferSize int
	// Headers are set on every request, over the request's own (a "Host"
	// header sets the request's host), as confighttp's `headers` are.
	Headers http.Header
	// Dial opens a connection (0 values: net.Dialer's 30 s timeout and
	// keep-alive, as http.DefaultTransport's).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Transport is an http.RoundTripper; see the package's doc. Its zero value
// is not usable: use New.
type Transport struct {
	opts Options
	host string // the Host header's override, from Options.Headers

	mu    sync.Mutex
	pools map[string]*pool // by host:port
}

// New returns a Transport. It returns nil when this platform cannot check
// an idle connection before reusing it (see alive.go): use Fallback then.
func New(o Options) *Transport {
	if !supported {
		return nil
	}
	if o.MaxIdlePerHost <= 0 {
		o.MaxIdlePerHost = 2
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 90 * time.Second
	}
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = 4 << 10
	}
	if o.Dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		o.Dial = d.DialContext
	}
	t := &Transport{opts: o, pools: map[string]*pool{}}
	h := http.Header{}
	for k, vs := range o.Headers {
		if http.CanonicalHeaderKey(k) == "Host" {
			if len(vs) > 0 {
				t.host = vs[0]
			}
			continue
		}
		h[http.CanonicalHeaderKey(k)] = vs
	}
	t.opts.Headers = h
	return t
}

// HeadersValid reports whether every header in h is one this transport
// writes (a valid field name, values without CR, LF or NUL).
func HeadersValid(h http.Header) bool {
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return false
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return false
			}
		}
	}
	return true
}

// RoundTrip sends req and reads the head of its answer on the caller's
// goroutine. The answer's body reads from the connection; closing it once
// read to its end gives the connection back to the pool, closing it before
// closes the connection. req's context bounds the dial, the exchange and the
// body's reading.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.poolFor(req)
	if p == nil || !t.writable(req) {
		return t.opts.Fallback.RoundTrip(req)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	c, err := p.get(ctx)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	// The context's end ends whatever the connection is doing.
	stop := context.AfterFunc(ctx, c.interrupt)
	if dl, ok := ctx.Deadline(); ok {
		_ = c.conn.SetDeadline(dl)
	}
	resp, err := t.exchange(c, req)
	if err != nil {
		stop()
		c.close()
		return nil, withContextError(ctx, err)
	}
	b := &body{src: resp.Body, ctx: ctx, c: c, p: p, stop: stop, reusable: !resp.Close}
	if resp.Body == http.NoBody {
		b.eof.Store(true) // nothing to read: reusable once closed
	}
	resp.Body = b
	return resp, nil
}

// exchange writes req on c and reads its answer's head.
func (t *Transport) exchange(c *conn, req *http.Request) (*http.Response, error) {
	buf, err := t.appendRequest(c.wbuf[:0], req)
	closeBody(req)
	if err != nil {
		return nil, err
	}
	c.wbuf = buf
	_, werr := c.conn.Write(buf)
	if cap(c.wbuf) > maxKeptWriteBuffer {
		c.wbuf = nil
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if werr != nil {
			// A server may answer before it read the whole body (a 413) and
			// close: the answer, when it can still be read, is the request's
			// outcome, as net/http gives it; the connection is not reused.
			if err != nil {
				return nil, werr
			}
			resp.Close = true
		} else if err != nil {
			return nil, err
		}
		// 1xx answers other than 101 come before the final one (an
		// envelope POST never asks for 100-continue; 103 may come).
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// maxKeptWriteBuffer: a connection keeps its write buffer between requests
// up to this size, so one huge envelope does not pin its copy.
const maxKeptWriteBuffer = 1 << 20

// appendRequest appends req's request line, headers and body to buf.
func (t *Transport) appendRequest(buf []byte, req *http.Request) ([]byte, error) {
	host := req.Host
	if t.host != "" {
		host = t.host
	}
	if host == "" {
		host = req.URL.Host
	}
	buf = append(buf, req.Method...)
	buf = append(buf, ' ')
	buf = append(buf, req.URL.RequestURI()...)
	buf = append(buf, " HTTP/1.1\r\nHost: "...)
	buf = append(buf, host...)
	buf = append(buf, "\r\n"...)
	for k, vs := range req.Header {
		if _, over := t.opts.Headers[k]; over {
			continue
		}
		buf = appendHeader(buf, k, vs)
	}
	for k, vs := range t.opts.Headers {
		buf = appendHeader(buf, k, vs)
	}
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, req.ContentLength, 10)
	buf = append(buf, "\r\n\r\n"...)
	if req.ContentLength == 0 || req.Body == nil {
		return buf, nil
	}
	start := len(buf)
	buf = growTo(buf, start+int(req.ContentLength))
	if _, err := io.ReadFull(req.Body, buf[start:]); err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	return buf, nil
}

func appendHeader(buf []byte, k string, vs []string) []byte {
	for _, v := range vs {
		buf = append(buf, k...)
		buf = append(buf, ": "...)
		buf = append(buf, v...)
		buf = append(buf, "\r\n"...)
	}
	return buf
}

// growTo returns buf with length n, its content kept.
func growTo(buf []byte, n int) []byte {
	if cap(buf) < n {
		grown := make([]byte, len(buf), n)
		copy(grown, buf)
		buf = grown
	}
	return buf[:n]
}

// writable reports whether RoundTrip writes req itself: a known body
// length, headers it can write, no Transfer-Encoding or trailers, no
// 100-continue, and a keep-alive request (Close unset).
func (*Transport) writable(req *http.Request) bool {
	if req.ContentLength < 0 || req.ContentLength > 0 && req.Body == nil || req.Close ||
		len(req.TransferEncoding) > 0 || len(req.Trailer) > 0 || req.Method == "" || req.Method == http.MethodConnect {
		return false
	}
	if req.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody {
		return false // length unknown (net/http's own rule for a zero ContentLength)
	}
	if _, ok := req.Header["Expect"]; ok {
		return false
	}
	if !httpguts.ValidHostHeader(req.Host) || !HeadersValid(req.Header) {
		return false
	}
	return true
}

// poolFor is req's host's pool, nil when the fallback serves req: not
// http, a proxied host, or a transport closed for good.
func (t *Transport) poolFor(req *http.Request) *pool {
	u := req.URL
	if u == nil || u.Scheme != "http" || u.Host == "" {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	t.mu.Lock()
	p, ok := t.pools[addr]
	if !ok {
		p = &pool{t: t, addr: addr, direct: !t.proxied(req)}
		t.pools[addr] = p
	}
	t.mu.Unlock()
	if !p.direct {
		return nil
	}
	return p
}

// proxied reports whether a proxy serves req's host.
func (t *Transport) proxied(req *http.Request) bool {
	if t.opts.Proxy == nil {
		return false
	}
	proxy, err := t.opts.Proxy(req)
	return err != nil || proxy != nil
}

// CloseIdleConnections closes the idle connections of every host, and the
// fallback's.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	pools := make([]*pool, 0, len(t.pools))
	for _, p := range t.pools {
		pools = append(pools, p)
	}
	t.mu.Unlock()
	for _, p := range pools {
		p.closeIdle()
	}
	if ci, ok := t.opts.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// withContextError marks err, from the connection, with the context's end
// that caused it: the connection's deadline is the context's, and it is
// moved to the past when the context is cancelled, so a timeout on it is
// the context's doing even when the context's own timer has not fired yet.
func withContextError(ctx context.Context, err error) error {
	ctxErr := ctx.Err()
	if ctxErr == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		ctxErr = context.DeadlineExceeded
	}
	if ctxErr == nil {
		return err
	}
	return fmt.Errorf("%w: %w", ctxErr, err)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
