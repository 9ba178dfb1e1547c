package inlinehttp

import (
	"bufio"
	"context"
	"net"
	"sync"
	"syscall"
	"time"
)

// pool is one host's idle connections, the most recently used last.
type pool struct {
	t      *Transport
	addr   string
	direct bool // false: a proxy serves the host, the fallback does

	mu    sync.Mutex
	idle  []*conn
	sweep *time.Timer // closes what stays idle past the timeout; armed while idle holds any
	armed bool
}

// conn is one keep-alive connection and its buffers.
type conn struct {
	conn      net.Conn
	raw       syscall.RawConn // for the idle check; nil: never reused
	br        *bufio.Reader
	wbuf      []byte
	idleSince time.Time
}

// get takes the most recently used idle connection the server has not
// closed, or dials a new one.
func (p *pool) get(ctx context.Context) (*conn, error) {
	opts := &p.t.opts
	now := time.Now()
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if now.Sub(c.idleSince) <= opts.IdleTimeout && c.alive() {
			return c, nil
		}
		c.close()
	}
	nc, err := opts.Dial(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	c := &conn{conn: nc, br: bufio.NewReaderSize(nc, opts.ReadBufferSize)}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	return c, nil
}

// put keeps c for the next request, closing the oldest idle connection when
// the pool has no room for another. Those left idle past the timeout are
// the sweep's (sweepStale).
func (p *pool) put(c *conn) {
	if c.raw == nil || c.br.Buffered() > 0 {
		c.close() // never checked, or the server sent more than its answer
		return
	}
	if err := c.conn.SetDeadline(time.Time{}); err != nil {
		c.close()
		return
	}
	c.idleSince = time.Now()
	var full *conn
	p.mu.Lock()
	if len(p.idle) >= p.t.opts.MaxIdlePerHost {
		full = p.idle[0]
		p.idle = p.idle[1:]
	}
	p.idle = append(p.idle, c)
	if !p.armed {
		p.armed = true
		p.armSweepLocked(p.t.opts.IdleTimeout)
	}
	p.mu.Unlock()
	if full != nil {
		full.close()
	}
}

// armSweepLocked runs sweepStale after d: idle connections are closed once
// past the timeout even when no request comes to find them (the server has
// closed them by then, most likely, and each holds a socket).
func (p *pool) armSweepLocked(d time.Duration) {
	if p.sweep == nil {
		p.sweep = time.AfterFunc(d, p.sweepStale)
		return
	}
	p.sweep.Reset(d)
}

// sweepStale closes the idle connections past the timeout, and arms itself
// again for the oldest left.
func (p *pool) sweepStale() {
	timeout := p.t.opts.IdleTimeout
	now := time.Now()
	var stale []*conn
	p.mu.Lock()
	for len(p.idle) > 0 && now.Sub(p.idle[0].idleSince) >= timeout {
		stale = append(stale, p.idle[0])
		p.idle = p.idle[1:]
	}
	if len(p.idle) > 0 {
		p.armSweepLocked(timeout - now.Sub(p.idle[0].idleSince))
	} else {
		p.armed = false
	}
	p.mu.Unlock()
	for _, s := range stale {
		s.close()
	}
}

// closeIdle closes every idle connection.
func (p *pool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	if p.sweep != nil {
		p.sweep.Stop()
	}
	p.armed = false
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// interrupt makes the connection's pending and future reads and writes
// fail at once (the request's context ended).
func (c *conn) interrupt() { _ = c.conn.SetDeadline(aLongTimeAgo) }

var aLongTimeAgo = time.Unix(1, 0)

func (c *conn) close() { _ = c.conn.Close() }

// alive reports whether an idle connection can carry a request: the server
// has neither closed it (a read would see the end of the stream or a reset)
// nor written to it (an answer to no request: a 408, say). One non-blocking
// peek at the socket, as net/http's readLoop learns the same while idle.
func (c *conn) alive() bool {
	ok := false
	err := c.raw.Read(func(fd uintptr) bool {
		ok = peekEmpty(fd)
		return true
	})
	return err == nil && ok
}
