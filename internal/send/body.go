package send

import (
	"bytes"
	"sync/atomic"
)

// requestBody is an envelope sent as encoded (compression left to
// confighttp, or none), read from raw, a pooled buffer; closed tells when
// the transport is done with it. One per request, so that a late Close of
// an earlier request can never mark a later one's buffers free.
type requestBody struct {
	bytes.Reader
	raw    *[]byte
	closed atomic.Bool
}

func (b *requestBody) Close() error {
	b.closed.Store(true)
	return nil
}
