package send

import (
	"bytes"
	"sync/atomic"
)

// requestBody is an envelope sent as encoded (compression left to
// confighttp, or none); closed tells when the transport is done with it.
// One per request, so that a late Close of an earlier request can never
// mark a later one's buffers free.
type requestBody struct {
	bytes.Reader
	closed atomic.Bool
}

func (b *requestBody) Close() error {
	b.closed.Store(true)
	return nil
}
