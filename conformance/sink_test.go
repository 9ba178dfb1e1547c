package conformance

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// captured is one envelope as it arrived, decoded without the exporter's own
// envelope package so that the comparison does not trust the code it checks.
type captured struct {
	raw    []byte // the decompressed body
	header map[string]any
	items  []capturedItem
}

// capturedItem is one envelope item: its header, its raw payload bytes (what
// Sentry bills for logs) and the payload decoded as JSON.
type capturedItem struct {
	header  map[string]any
	raw     []byte
	payload map[string]any
}

func (it capturedItem) typ() string { s, _ := it.header["type"].(string); return s }

// captureSink plays Sentry's envelope endpoint for one project and keeps
// every envelope; it answers 200 to everything it can parse.
type captureSink struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	got []captured
	bad []string
}

func newCaptureSink(t *testing.T) *captureSink {
	s := &captureSink{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/1/envelope/", s.handle)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// dsn is the DSN of the sink's project 1 with the public key "key".
func (s *captureSink) dsn() string {
	return strings.Replace(s.srv.URL, "http://", "http://key@", 1) + "/1"
}

func (s *captureSink) handle(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	switch r.Header.Get("Content-Encoding") { // what Relay decodes: the exporter sends zstd, sentry-go gzip
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			s.reject(w, err)
			return
		}
		body = zr
	case "zstd":
		zr, err := zstd.NewReader(r.Body)
		if err != nil {
			s.reject(w, err)
			return
		}
		defer zr.Close()
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		s.reject(w, err)
		return
	}
	env, err := parseEnvelope(data)
	if err != nil {
		s.reject(w, err)
		return
	}
	env.raw = data
	s.mu.Lock()
	s.got = append(s.got, env)
	s.mu.Unlock()
	fmt.Fprint(w, `{}`)
}

func (s *captureSink) reject(w http.ResponseWriter, err error) {
	s.mu.Lock()
	s.bad = append(s.bad, err.Error())
	s.mu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func (s *captureSink) envelopes() ([]captured, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]captured(nil), s.got...), append([]string(nil), s.bad...)
}

// parseEnvelope reads Sentry's envelope format: a header line, then items of
// a header line and a payload of `length` bytes (or up to the next newline).
func parseEnvelope(data []byte) (captured, error) {
	var env captured
	line, rest := cutLine(data)
	if err := json.Unmarshal(line, &env.header); err != nil {
		return env, fmt.Errorf("envelope header: %w", err)
	}
	for len(bytes.TrimSpace(rest)) > 0 {
		var it capturedItem
		line, rest = cutLine(rest)
		if err := json.Unmarshal(line, &it.header); err != nil {
			return env, fmt.Errorf("item header: %w", err)
		}
		if l, ok := it.header["length"]; ok {
			n, err := strconv.Atoi(fmt.Sprint(l))
			if err != nil || n < 0 || n > len(rest) {
				return env, fmt.Errorf("item length %v of %d bytes left", l, len(rest))
			}
			it.raw, rest = rest[:n], rest[n:]
			if len(rest) > 0 && rest[0] == '\n' {
				rest = rest[1:]
			}
		} else {
			it.raw, rest = cutLine(rest)
		}
		if err := json.Unmarshal(it.raw, &it.payload); err != nil {
			return env, fmt.Errorf("%s payload: %w", it.typ(), err)
		}
		env.items = append(env.items, it)
	}
	return env, nil
}

func cutLine(b []byte) (line, rest []byte) {
	if before, after, ok := bytes.Cut(b, []byte{'\n'}); ok {
		return before, after
	}
	return b, nil
}
