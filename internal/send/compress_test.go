package send

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configcompression"
)

// The pooled encoders round-trip under concurrent use, and reused buffers
// never leak one body into another.
func TestCompressorsRoundTrip(t *testing.T) {
	c := NewCompressors(configcompression.DefaultCompressionLevel)
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			var buf []byte // reused, as the sender reuses its buffers
			for i := range 50 {
				body := bytes.Repeat([]byte{byte('a' + (g+i)%26), '{', '"', '}'}, 100+i*37)
				for _, enc := range []BodyEncoding{EncodingZstd, EncodingGzip} {
					buf = c.Compress(enc, body, buf[:0])
					out := buf
					var got []byte
					var err error
					if enc == EncodingZstd {
						got, err = dec.DecodeAll(out, nil)
					} else {
						var zr *gzip.Reader
						if zr, err = gzip.NewReader(bytes.NewReader(out)); err == nil {
							got, err = io.ReadAll(zr)
						}
					}
					if err != nil || !bytes.Equal(got, body) {
						t.Errorf("%s round trip: %v (%d bytes, want %d)", enc.ContentEncoding(), err, len(got), len(body))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
