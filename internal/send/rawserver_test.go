package send

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// rawServer is a TCP server on 127.0.0.1 that plays a hostile or broken
// Sentry (or a proxy in front of it): it reads each request's head with
// net/http's parser, and from there its answer writes whatever bytes it
// likes on the connection, however slowly, or resets it. Nothing of
// net/http's server stands between the answer and the socket.
type rawServer struct {
	ln     net.Listener
	answer rawAnswer
	wg     sync.WaitGroup
	done   chan struct{} // closed by close: answers that never end stop

	mu    sync.Mutex
	conns map[net.Conn]struct{} // open

	connections atomic.Int64 // accepted
	requests    atomic.Int64 // request heads read
	invalid     atomic.Int64 // bodies read whole that were no envelope
	mostBody    atomic.Int64 // the most body bytes an HTTP/2 answer wrote

	// serveConn, if set, serves each accepted connection instead of the
	// raw HTTP/1.1 loop (serveHTTP2); caFile is then the file its
	// certificate is in, and the server's URLs are https.
	serveConn func(c net.Conn)
	caFile    string
}

// rawAnswer answers one request on c, whose head was read (its body, if
// any, is still to be read from req.Body). It returns false when the
// connection is to end; the server then closes it, unless the answer did.
type rawAnswer func(c *rawConn, req *http.Request) bool

// rawConn is one accepted connection as an answer sees it.
type rawConn struct {
	net.Conn
	srv *rawServer
}

// serveRaw starts a raw server whose accepted sockets have a receive buffer
// of rcvBuf bytes (0: the system's), closed when the test ends.
func serveRaw(t *testing.T, rcvBuf int, answer rawAnswer) *rawServer {
	t.Helper()
	lc := net.ListenConfig{}
	if rcvBuf > 0 {
		// Set on the listening socket, so that accepted ones start with it
		// (and advertise a window scaled to it).
		lc.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvBuf)
			})
			return errors.Join(err, serr)
		}
	}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawServer{ln: ln, answer: answer, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

// url is the envelope URL of project id on s.
func (s *rawServer) url(id string) string {
	scheme := "http://"
	if s.caFile != "" {
		scheme = "https://"
	}
	return scheme + s.ln.Addr().String() + "/api/" + id + "/envelope/"
}

func (s *rawServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.connections.Add(1)
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(c) })
	}
}

// serve reads request heads on c and answers each until the answer or the
// client ends the connection.
func (s *rawServer) serve(c net.Conn) {
	defer func() {
		_ = c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	if s.serveConn != nil {
		s.serveConn(c)
		return
	}
	br := bufio.NewReader(c)
	rc := &rawConn{Conn: c, srv: s}
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		s.requests.Add(1)
		if !s.answer(rc, req) {
			return
		}
	}
}

// open is how many connections are open on the server's side now.
func (s *rawServer) open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// close stops accepting, ends every connection and waits for the answers.
func (s *rawServer) close() {
	select {
	case <-s.done:
		return
	default:
	}
	close(s.done)
	_ = s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// readEnvelope reads req's body whole and checks that it is an envelope
// (the stage sends them uncompressed here, or zstd / gzip); a body cut short
// is left to the answer's write to notice.
func (c *rawConn) readEnvelope(req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	if body, err = decode(req.Header.Get("Content-Encoding"), body); err == nil {
		_, err = envelope.Parse(body)
	}
	if err != nil {
		c.srv.invalid.Add(1)
	}
}

// write writes s whole; false once the connection is gone.
func (c *rawConn) write(s string) bool {
	_, err := io.WriteString(c.Conn, s)
	return err == nil
}

// writeBytes writes b whole; false once the connection is gone.
func (c *rawConn) writeBytes(b []byte) bool {
	_, err := c.Write(b)
	return err == nil
}

// padding is what writeHeaderOf writes a header's value of.
var padding = bytes.Repeat([]byte("a"), 64<<10)

// writeHeaderOf answers 200 with one header whose value is n bytes, written
// in chunks; false once the connection is gone.
func (c *rawConn) writeHeaderOf(n int) bool {
	if !c.write("HTTP/1.1 200 OK\r\nX-Pad: ") {
		return false
	}
	for ; n > 0; n -= len(padding) {
		if !c.writeBytes(padding[:min(n, len(padding))]) {
			return false
		}
	}
	return c.write("\r\nContent-Length: 2\r\n\r\n{}")
}

// reset ends the connection with a TCP RST (SO_LINGER 0), not a FIN.
func (c *rawConn) reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// stopped reports whether the server is closing.
func (c *rawConn) stopped() bool {
	select {
	case <-c.srv.done:
		return true
	default:
		return false
	}
}

// noteBody keeps n in mostBody if it is the most so far.
func (s *rawServer) noteBody(n int64) {
	for {
		m := s.mostBody.Load()
		if n <= m || s.mostBody.CompareAndSwap(m, n) {
			return
		}
	}
}
