package send

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	mathbig "math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// http2Rows are the hostile answers over HTTP/2 (TLS, "h2" negotiated),
// frames written by sendtest.ServeHTTP2, nothing of net/http's server
// between them and the connection.
func http2Rows() []hostileRow {
	return []hostileRow{
		{
			// One header of 10 MiB in a HEADERS frame and CONTINUATIONs:
			// past the header list the client announces (maxAnswerHeader +
			// 320 B), so the client ends the connection: no answer.
			name: "h2: a 10 MiB header",
			h2: func(s *sendtest.HTTP2Stream, _ *rawServer) {
				_ = s.WriteHeaders(200, "x-pad", maxHeaderNH, 2, false)
				_, _ = s.WriteData(2)
			},
			fates:  []string{account.ReasonNetworkError.Wire()},
			server: retried,
		},
		{
			// A 200 whose header is just under net/http's default header
			// list (10 MiB): with it, each answer was held whole, and every
			// envelope "stored".
			name: "h2: a 200 with a header just under 10 MiB",
			h2: func(s *sendtest.HTTP2Stream, _ *rawServer) {
				_ = s.WriteHeaders(200, "x-pad", maxHeaderNH-4096, 2, false)
				_, _ = s.WriteData(2)
			},
			fates:  []string{account.ReasonNetworkError.Wire()},
			server: retried,
		},
		{
			// 103 Early Hints with 8 KiB of header, for ever: the client
			// resets the stream once the 1xx headers pass its limit.
			name: "h2: endless 1xx", keepsAlive: true,
			h2: func(s *sendtest.HTTP2Stream, _ *rawServer) {
				for {
					if s.WriteHeaders(103, "link", 8<<10, -1, false) != nil {
						return // the stream reset, or the connection gone
					}
				}
			},
			fates:  []string{account.ReasonNetworkError.Wire()},
			server: retried,
		},
		http2BodyRow(),
	}
}

// http2BodyRow: a body larger than any window, as fast as the windows let it come.
func http2BodyRow() hostileRow {
	return hostileRow{
		// A 200 and then 64 MiB of body as fast as the client's windows
		// let it come: what the client may be made to buffer of it is
		// the stream's window (maxAnswerStreamBuffer), not 4 MiB a
		// stream and 1 GiB a connection; the stage reads 16 KiB and
		// resets the stream. Stored.
		name: "h2: a 64 MiB body", keepsAlive: true,
		h2: func(s *sendtest.HTTP2Stream, srv *rawServer) {
			if s.WriteHeaders(200, "", 0, 64<<20, false) == nil {
				n, _ := s.WriteData(64 << 20)
				srv.noteBody(int64(n))
			}
		},
		fates: []string{"sent"},
		server: func(t *testing.T, s *rawServer, envelopes int) {
			assert.Equal(t, int64(envelopes), s.requests.Load(), "one request per envelope: none retried")
			// The window, and what the stage's read of at most
			// maxResponseRead gave back (net/http returns a stream's
			// window once half of it is read), before the reset.
			assert.LessOrEqual(t, s.mostBody.Load(), int64(maxAnswerStreamBuffer+maxResponseRead),
				"an answer's body sent before the client reset it: at most its window and what was read")
		},
	}
}

// serveHTTP2 starts a server like serveRaw's that speaks HTTP/2 over TLS
// with a certificate of its own, trusted through the file at s.caFile.
func serveHTTP2(t *testing.T, answer func(*sendtest.HTTP2Stream, *rawServer)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	cfg := selfSignedTLS(t, caFile)
	s := &rawServer{ln: ln, done: make(chan struct{}), conns: map[net.Conn]struct{}{}, caFile: caFile}
	s.serveConn = func(c net.Conn) {
		tc := tls.Server(c, cfg)
		if tc.HandshakeContext(t.Context()) != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
			s.invalid.Add(1)
			return
		}
		sendtest.ServeHTTP2(tc, func(st *sendtest.HTTP2Stream) { answer(st, s) }, func() { s.requests.Add(1) })
	}
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

// selfSignedTLS is a server config with a new certificate for 127.0.0.1,
// written to caFile for the client to trust, offering only HTTP/2.
func selfSignedTLS(t *testing.T, caFile string) *tls.Config {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: mathbig.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"h2"}, MinVersion: tls.VersionTLS12,
	}
}
