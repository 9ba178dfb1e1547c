package send

import (
	"bytes"
	"io"
	"sync"
	"time"
)

const (
	// maxResponseRead is how much of an answer is read so the connection can be
	// reused (sentry-go drains 16 KiB); the rest is discarded with the connection.
	maxResponseRead = 16 << 10
	// maxAnswerRead bounds the time spent reading an answer's body once its
	// status is in: a body that dribbles or never ends cannot hold a worker
	// (and the envelope's outcome, already known from the status) for the
	// whole client timeout.
	maxAnswerRead = time.Second
	// maxErrorSnippet is how much of an error body goes into a log line.
	maxErrorSnippet = 256
	// maxAnswerHeader bounds an answer's header bytes (1xx answers
	// included; HTTP/2's header list, and a proxy's answer to CONNECT,
	// too: answerlimits.go). net/http's default, 10 MiB, let a proxy that answers 200
	// with a header just under it make the client hold some 20 MiB per
	// request in flight, outside the memory budget (TestHostileAnswers).
	// Relay's answers carry a few hundred bytes, and nginx in front of an
	// upstream refuses more than its proxy_buffer_size (4 or 8 KiB) by
	// default.
	maxAnswerHeader = 64 << 10
)

// answerReader closes an answer's body when reading it takes too long (a body
// that dribbles or never ends), ending the read. One timer, reused.
type answerReader struct {
	t    *time.Timer
	mu   sync.Mutex
	body io.Closer
	head [maxErrorSnippet]byte // the start of the answer (drain)
	rest io.LimitedReader      // the remainder, read and discarded
}

// drain reads at most maxResponseRead bytes of body, closes it, and returns
// the first maxErrorSnippet bytes (in c's buffer: valid until c is reused).
func (c *answerReader) drain(body io.ReadCloser) []byte {
	defer body.Close()
	n, _ := io.ReadFull(body, c.head[:])
	c.rest = io.LimitedReader{R: body, N: maxResponseRead - int64(n)}
	_, _ = io.Copy(io.Discard, &c.rest)
	c.rest.R = nil
	return bytes.TrimSpace(c.head[:n])
}

func newAnswerReader() *answerReader {
	c := &answerReader{}
	c.t = time.AfterFunc(time.Hour, c.fire)
	c.t.Stop()
	return c
}

func (c *answerReader) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.body != nil {
		_ = c.body.Close()
	}
}

// arm closes body after d unless disarm comes first.
func (c *answerReader) arm(body io.Closer, d time.Duration) {
	c.mu.Lock()
	c.body = body
	c.mu.Unlock()
	c.t.Reset(d)
}

func (c *answerReader) disarm() {
	c.t.Stop()
	c.mu.Lock()
	c.body = nil
	c.mu.Unlock()
}
