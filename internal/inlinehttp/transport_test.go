package inlinehttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawServer answers each request on a connection with what answer returns
// for it (the raw bytes after the head), then does what after says.
type rawServer struct {
	ln      net.Listener
	mu      sync.Mutex
	heads   []string // each request's head and body, as read
	accepts atomic.Int32
	// answered counts the answers written, each one's connection already closed
	// when the answer said it would be
	answered atomic.Int32
	wg       sync.WaitGroup
}

type serve func(r *http.Request, body []byte, w *bufio.Writer) (keep bool)

func newRawServer(t *testing.T, answer serve) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepts.Add(1)
			s.wg.Go(func() { s.conn(c, answer) })
		}
	})
	t.Cleanup(func() { _ = ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) conn(c net.Conn, answer serve) {
	defer c.Close()
	br, bw := bufio.NewReader(c), bufio.NewWriter(c)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.heads = append(s.heads, r.Method+" "+r.RequestURI+" host="+r.Host+" "+string(b))
		s.mu.Unlock()
		keep := answer(r, b, bw)
		_ = bw.Flush()
		if !keep {
			_ = c.Close()
			s.answered.Add(1)
			return
		}
		s.answered.Add(1)
	}
}

// waitAnswered waits until the server has written n answers and closed the
// connections it meant to close: the client's answer can arrive before the
// server's close.
func (s *rawServer) waitAnswered(t *testing.T, n int32) {
	t.Helper()
	require.Eventually(t, func() bool { return s.answered.Load() >= n }, 10*time.Second, time.Millisecond,
		"the server wrote fewer than %d answers", n)
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/api/1/envelope/" }

func ok200(_ *http.Request, _ []byte, w *bufio.Writer) bool {
	_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
	return true
}

type countingFallback struct{ n atomic.Int32 }

func (f *countingFallback) RoundTrip(req *http.Request) (*http.Response, error) {
	f.n.Add(1)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &http.Response{StatusCode: 299, Body: http.NoBody, Request: req}, nil
}

func newTransport(t *testing.T, o Options) (*Transport, *countingFallback) {
	t.Helper()
	fb := &countingFallback{}
	if o.Fallback == nil {
		o.Fallback = fb
	}
	tr := New(o)
	require.NotNil(t, tr)
	t.Cleanup(tr.CloseIdleConnections)
	return tr, fb
}

func post(ctx context.Context, t *testing.T, tr http.RoundTripper, u, body string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("X-Sentry-Auth", "Sentry sentry_key=public")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	b, rerr := io.ReadAll(resp.Body)
	return resp, b, errors.Join(rerr, resp.Body.Close())
}

// The answers a Sentry or a proxy in front of it may give, and whether the
// connection then carries the next request.
func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer serve
		status int
		body   string
		reused bool // the second request goes on the first's connection
	}{
		{name: "content-length", answer: ok200, status: 200, body: "{}", reused: true},
		{name: "chunked", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
			return true
		}, status: 200, body: "{}", reused: true},
		{name: "no body", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
			return true
		}, status: 200, reused: true},
		{name: "429 with limits", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 429 Too Many Requests\r\nX-Sentry-Rate-Limits: 60:transaction:key\r\nContent-Length: 0\r\n\r\n")
			return true
		}, status: 429, reused: true},
		{name: "103 then 200", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
			return true
		}, status: 200, body: "{}", reused: true},
		{name: "connection close", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy")
			return false
		}, status: 503, body: "busy"},
		{name: "HTTP/1.0", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}")
			return false
		}, status: 200, body: "{}"},
		{name: "body to the close", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 500 Internal Server Error\r\n\r\noops")
			return false
		}, status: 500, body: "oops"},
		{name: "closed while idle, without saying so", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
			return false // a keep-alive answer, then the server closes: found before the next request
		}, status: 200, body: "{}"},
		{name: "more than its answer", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 408 Request Timeout\r\n\r\n")
			return true // the stray answer must not become the next request's
		}, status: 200, body: "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, tc.answer)
			tr, fb := newTransport(t, Options{})
			for i := range 2 {
				resp, b, err := post(t.Context(), t, tr, srv.url(), "envelope")
				require.NoError(t, err, "request %d", i)
				assert.Equal(t, tc.status, resp.StatusCode)
				assert.Equal(t, tc.body, string(b))
				srv.waitAnswered(t, int32(i+1)) // the server's close reaches the socket before the next request
			}
			want := int32(2)
			if tc.reused {
				want = 1
			}
			assert.Equal(t, want, srv.accepts.Load(), "connections")
			assert.Zero(t, fb.n.Load(), "the fallback served nothing")
			assert.Len(t, srv.heads, 2)
		})
	}
}

// The request as written: method, path and query, host, the request's
// headers with the configured ones over them, the body, its length.
func TestRequestAsWritten(t *testing.T) {
	var got *http.Request
	var gotBody []byte
	srv := newRawServer(t, func(r *http.Request, b []byte, w *bufio.Writer) bool {
		got, gotBody = r, b
		return ok200(r, b, w)
	})
	tr, _ := newTransport(t, Options{Headers: http.Header{
		"X-Tenant": {"a"}, "User-Agent": {"configured"}, "host": {"relay.internal"},
	}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url()+"?sentry_key=k", bytes.NewReader([]byte("{}\n{\"type\":\"event\"}\n{}")))
	require.NoError(t, err)
	req.Header.Set("Content-Encoding", "zstd")
	req.Header.Set("User-Agent", "sentry.otel/1")
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())

	require.NotNil(t, got)
	assert.Equal(t, "/api/1/envelope/?sentry_key=k", got.RequestURI)
	assert.Equal(t, "relay.internal", got.Host)
	assert.Equal(t, "zstd", got.Header.Get("Content-Encoding"))
	assert.Equal(t, []string{"configured"}, got.Header.Values("User-Agent"))
	assert.Equal(t, "a", got.Header.Get("X-Tenant"))
	assert.Equal(t, int64(len(gotBody)), got.ContentLength)
	assert.Equal(t, "{}\n{\"type\":\"event\"}\n{}", string(gotBody))
}

// What goes to the fallback (net/http): https, a proxied host, a body of
// unknown length, headers it will not write, Expect, Close.
func TestFallback(t *testing.T) {
	srv := newRawServer(t, ok200)
	proxied := func(r *http.Request) (*url.URL, error) {
		if r.URL.Hostname() == "proxied.example" {
			return url.Parse("http://proxy:3128")
		}
		return nil, nil
	}
	for _, tc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"https", func() *http.Request {
			return mustReq(t, "https://o1.ingest.sentry.io/api/1/envelope/", strings.NewReader("x"))
		}},
		{"proxied host", func() *http.Request {
			return mustReq(t, "http://proxied.example/api/1/envelope/", strings.NewReader("x"))
		}},
		{"unknown length", func() *http.Request {
			r := mustReq(t, srv.url(), io.NopCloser(strings.NewReader("x")))
			r.ContentLength = -1
			return r
		}},
		{"zero length with a body", func() *http.Request { return mustReq(t, srv.url(), io.NopCloser(strings.NewReader("x"))) }},
		{"header value with a newline", func() *http.Request {
			r := mustReq(t, srv.url(), strings.NewReader("x"))
			r.Header["X-Evil"] = []string{"a\r\nX-Injected: 1"}
			return r
		}},
		{"bad header name", func() *http.Request {
			r := mustReq(t, srv.url(), strings.NewReader("x"))
			r.Header["Bad Name"] = []string{"1"}
			return r
		}},
		{"expect", func() *http.Request {
			r := mustReq(t, srv.url(), strings.NewReader("x"))
			r.Header.Set("Expect", "100-continue")
			return r
		}},
		{"close", func() *http.Request {
			r := mustReq(t, srv.url(), strings.NewReader("x"))
			r.Close = true
			return r
		}},
		{"chunked", func() *http.Request {
			r := mustReq(t, srv.url(), strings.NewReader("x"))
			r.TransferEncoding = []string{"chunked"}
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, fb := newTransport(t, Options{Proxy: proxied})
			resp, err := tr.RoundTrip(tc.req())
			require.NoError(t, err)
			assert.Equal(t, 299, resp.StatusCode)
			assert.Equal(t, int32(1), fb.n.Load())
			assert.Zero(t, srv.accepts.Load())
		})
	}
}

func mustReq(t *testing.T, u string, body io.Reader) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, body)
	require.NoError(t, err)
	return r
}

// A request's context bounds it: a server that never answers, one that
// stops in the middle of its body, one that never accepts the data.
func TestContextBoundsTheExchange(t *testing.T) {
	var hang chan struct{} // each subtest's, closed before its server stops
	for _, tc := range []struct {
		name       string
		answer     serve
		cancel     bool // cancelled rather than past its deadline
		noDeadline bool // and with no deadline at all: only the cancellation can end it
	}{
		{name: "no answer", answer: func(*http.Request, []byte, *bufio.Writer) bool { <-hang; return false }},
		{name: "no answer, cancelled", answer: func(*http.Request, []byte, *bufio.Writer) bool { <-hang; return false }, cancel: true},
		{name: "no answer, cancelled, no deadline", answer: func(*http.Request, []byte, *bufio.Writer) bool { <-hang; return false }, cancel: true, noDeadline: true},
		{name: "half a body, cancelled, no deadline", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}")
			_ = w.Flush()
			<-hang
			return false
		}, cancel: true, noDeadline: true},
		{name: "half a body", answer: func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}")
			_ = w.Flush()
			<-hang
			return false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hang = make(chan struct{})
			srv := newRawServer(t, tc.answer)
			t.Cleanup(func() { close(hang) })
			tr, _ := newTransport(t, Options{})
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			if tc.noDeadline {
				ctx, cancel = context.WithCancel(t.Context())
			}
			defer cancel()
			want := context.DeadlineExceeded
			if tc.cancel {
				time.AfterFunc(100*time.Millisecond, cancel)
				want = context.Canceled
			}
			done := make(chan error, 1)
			go func() {
				_, _, err := post(ctx, t, tr, srv.url(), "envelope")
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.ErrorIs(t, err, want)
			case <-time.After(5 * time.Second):
				t.Fatal("the exchange outlived its context by 5 s")
			}
		})
	}
}

// A Close from another goroutine (the stage's timer on the answer's read)
// ends a Read in progress and closes the connection.
func TestCloseEndsARead(t *testing.T) {
	hang := make(chan struct{})
	srv := newRawServer(t, func(_ *http.Request, _ []byte, w *bufio.Writer) bool {
		_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
		_ = w.Flush()
		<-hang
		return false
	})
	t.Cleanup(func() { close(hang) }) // before the server's cleanup waits
	tr, _ := newTransport(t, Options{})
	resp, err := tr.RoundTrip(mustReq(t, srv.url(), strings.NewReader("x")))
	require.NoError(t, err)
	time.AfterFunc(50*time.Millisecond, func() { _ = resp.Body.Close() })
	b, err := io.ReadAll(resp.Body)
	require.Error(t, err, "read %q", b)
	// the next request goes on a connection of its own
	resp, err = tr.RoundTrip(mustReq(t, srv.url(), strings.NewReader("x")))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, int32(2), srv.accepts.Load())
}

// Idle connections: at most MaxIdlePerHost kept, none older than
// IdleTimeout used, those left idle past it closed without a request to find
// them, all closed by CloseIdleConnections (and the fallback's).
func TestIdleConnections(t *testing.T) {
	release := make(chan struct{})
	var inHandler sync.WaitGroup
	srv := newRawServer(t, func(r *http.Request, b []byte, w *bufio.Writer) bool {
		if string(b) == "wait" {
			inHandler.Done()
			<-release
		}
		return ok200(r, b, w)
	})
	fb := &closingFallback{}
	tr, _ := newTransport(t, Options{MaxIdlePerHost: 2, IdleTimeout: 500 * time.Millisecond, Fallback: fb})

	// three at once: three connections, two kept
	inHandler.Add(3)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			_, _, err := post(t.Context(), t, tr, srv.url(), "wait")
			assert.NoError(t, err)
		})
	}
	inHandler.Wait()
	close(release)
	wg.Wait()
	p := tr.pools[srv.ln.Addr().String()]
	require.NotNil(t, p)
	assert.Equal(t, 2, idleCount(p))
	assert.Equal(t, int32(3), srv.accepts.Load())

	// reused while fresh
	_, _, err := post(t.Context(), t, tr, srv.url(), "x")
	require.NoError(t, err)
	assert.Equal(t, int32(3), srv.accepts.Load())

	// past the idle timeout: dialed anew, the stale ones closed (the margins, 500 ms
	// before, 300 and 700 ms after, are for a loaded machine under the race detector)
	time.Sleep(800 * time.Millisecond)
	_, _, err = post(t.Context(), t, tr, srv.url(), "x")
	require.NoError(t, err)
	assert.Equal(t, int32(4), srv.accepts.Load())
	assert.Equal(t, 1, idleCount(p))

	// with no request to find them, the sweep closes them past the timeout
	time.Sleep(1200 * time.Millisecond)
	assert.Zero(t, idleCount(p), "swept")
	_, _, err = post(t.Context(), t, tr, srv.url(), "x")
	require.NoError(t, err)
	assert.Equal(t, int32(5), srv.accepts.Load())

	tr.CloseIdleConnections()
	assert.Zero(t, idleCount(p))
	assert.True(t, fb.closed.Load())
}

func idleCount(p *pool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

type closingFallback struct {
	countingFallback
	closed atomic.Bool
}

func (f *closingFallback) CloseIdleConnections() { f.closed.Store(true) }

// A dial that fails is the request's error; nothing is kept.
func TestDialError(t *testing.T) {
	tr, _ := newTransport(t, Options{Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("connection refused")
	}})
	_, _, err := post(t.Context(), t, tr, "http://relay:3000/api/1/envelope/", "x")
	require.ErrorContains(t, err, "connection refused")
}

// Against net/http's own server, many requests at once on a few
// connections: every answer to its own request.
func TestConcurrentAgainstNetHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	tr, _ := newTransport(t, Options{MaxIdlePerHost: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				want := strings.Repeat(string(rune('a'+g)), 100+i)
				_, b, err := post(t.Context(), t, tr, srv.URL+"/api/1/envelope/", want)
				if !assert.NoError(t, err) || !assert.Equal(t, want, string(b)) {
					return
				}
			}
		})
	}
	wg.Wait()
	srv.CloseClientConnections()
}

// A server that answers before it read the whole body (a 413) and closes:
// the write fails, and the answer, still readable, is the request's outcome;
// with no answer to read, the write's error is.
func TestAnswerBeforeTheBodyWasRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		status int
	}{
		{"413 then closed", "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n", 413},
		{"nothing", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newTransport(t, Options{Dial: func(context.Context, string, string) (net.Conn, error) {
				return &brokenWrite{answer: strings.NewReader(tc.answer)}, nil
			}})
			resp, err := tr.RoundTrip(mustReq(t, "http://relay:3000/api/1/envelope/", strings.NewReader("x")))
			if tc.status == 0 {
				require.ErrorIs(t, err, syscall.EPIPE)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.True(t, resp.Close, "the connection is not reused")
			require.NoError(t, resp.Body.Close())
		})
	}
}

// brokenWrite is a connection whose peer stopped reading: every write
// fails; reads give what the peer had sent.
type brokenWrite struct {
	net.Conn
	answer io.Reader
}

func (*brokenWrite) Write([]byte) (int, error)    { return 0, syscall.EPIPE }
func (c *brokenWrite) Read(p []byte) (int, error) { return c.answer.Read(p) }
func (*brokenWrite) Close() error                 { return nil }
func (*brokenWrite) SetDeadline(time.Time) error  { return nil }
