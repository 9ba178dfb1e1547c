// Package selfsigned lets the local sinks serve HTTPS (HTTP/2 and HTTP/1.1)
// with a certificate made at start, so that `make compare` can measure the
// exporters over TLS as they talk to Sentry: the sink writes the certificate
// to a file, and the collector's exporters trust it with `tls::ca_file`.
package selfsigned

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"time"
)

// Config is a server TLS config with a new self-signed ECDSA P-256
// certificate for 127.0.0.1, ::1 and localhost, valid for a day; the
// certificate is written to certFile as PEM for clients to trust.
func Config(certFile string) (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "localhost"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own issuer, so that a client may trust it as a CA
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// Serve serves srv on ln: HTTPS when srv has a TLS config (Config's), plain
// HTTP otherwise.
func Serve(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// Scheme is the URL scheme srv is served with by Serve.
func Scheme(srv *http.Server) string {
	if srv.TLSConfig != nil {
		return "https"
	}
	return "http"
}
