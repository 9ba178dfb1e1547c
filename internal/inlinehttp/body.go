package inlinehttp

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
)

// body is an answer's body: read to its end and closed, its connection goes
// back to the pool; closed before its end, or after a read error, the
// connection is closed. Close may come from another goroutine during a Read
// (a timer bounding the read): it closes the connection, which ends the Read.
type body struct {
	src      io.ReadCloser // net/http's body reader on the connection
	ctx      context.Context
	c        *conn
	p        *pool
	stop     func() bool // the context's AfterFunc
	reusable bool        // the answer did not ask to close the connection

	eof    atomic.Bool
	failed atomic.Bool
	closed atomic.Bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.src.Read(p)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		b.eof.Store(true)
	default:
		b.failed.Store(true)
		err = withContextError(b.ctx, err)
	}
	return n, err
}

func (b *body) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	interrupted := !b.stop() // the context ended: its AfterFunc ran or runs
	if !b.eof.Load() || b.failed.Load() || !b.reusable || interrupted {
		b.c.close() // first: it ends a Read in progress
		_ = b.src.Close()
		return nil
	}
	_ = b.src.Close() // at its end: nothing left to read
	b.p.put(b.c)
	return nil
}
