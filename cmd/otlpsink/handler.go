package main

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// maxBody bounds a body before and after decompression.
const maxBody = 64 << 20

type handler struct {
	stats *stats
	zstd  *zstd.Decoder
}

func newHandler(st *stats) *handler {
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	return &handler{stats: st, zstd: d}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/traces" && r.URL.Path != "/v1/logs" && r.URL.Path != "/v1/metrics" && r.URL.Path != profilesPath) {
		http.NotFound(w, r)
		return
	}
	wire, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		h.fail(w, "reading the body: %v", err)
		return
	}
	body, err := h.decode(strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))), wire)
	if err != nil {
		h.fail(w, "%v", err)
		return
	}
	n, resp, err := count(r.URL.Path, body)
	if err != nil {
		h.fail(w, "%v", err)
		return
	}
	h.stats.accepted(n, len(wire), len(body))
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// count reads one OTLP/HTTP protobuf request of the signal path names and returns what
// it carried and the answer.
func count(path string, body []byte) (items, []byte, error) {
	switch path {
	case "/v1/traces":
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			return items{}, nil, fmt.Errorf("traces: %w", err)
		}
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		return items{spans: req.Traces().SpanCount()}, resp, nil
	case "/v1/logs":
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			return items{}, nil, fmt.Errorf("logs: %w", err)
		}
		resp, _ := plogotlp.NewExportResponse().MarshalProto()
		return items{logs: req.Logs().LogRecordCount()}, resp, nil
	case profilesPath:
		req := pprofileotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			return items{}, nil, fmt.Errorf("profiles: %w", err)
		}
		resp, _ := pprofileotlp.NewExportResponse().MarshalProto()
		return items{samples: profileSamples(req)}, resp, nil
	default:
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			return items{}, nil, fmt.Errorf("metrics: %w", err)
		}
		resp, _ := pmetricotlp.NewExportResponse().MarshalProto()
		return items{points: req.Metrics().DataPointCount()}, resp, nil
	}
}

// profilesPath is where OTLP/HTTP exporters post profiles (the signal is in development).
const profilesPath = "/v1development/profiles"

// profileSamples counts a request's samples as Sentry does: one per timestamp, one for a
// sample without timestamps.
func profileSamples(req pprofileotlp.ExportRequest) int {
	n := 0
	for _, rp := range req.Profiles().ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				for _, s := range p.Samples().All() {
					n += max(s.TimestampsUnixNano().Len(), 1)
				}
			}
		}
	}
	return n
}

func (h *handler) decode(enc string, wire []byte) ([]byte, error) {
	switch enc {
	case "", "identity":
		return wire, nil
	case "zstd":
		return h.zstd.DecodeAll(wire, nil)
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			return nil, err
		}
		return readAllLimited(zr)
	case "deflate":
		zr, err := zlib.NewReader(bytes.NewReader(wire))
		if err != nil {
			return nil, err
		}
		return readAllLimited(zr)
	default:
		return nil, fmt.Errorf("unsupported content encoding %q", enc)
	}
}

func readAllLimited(r io.ReadCloser) ([]byte, error) {
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err == nil && len(b) > maxBody {
		err = fmt.Errorf("decoded body over %d bytes", maxBody)
	}
	return b, err
}

// fail counts an invalid request and answers it 400 Bad Request.
func (h *handler) fail(w http.ResponseWriter, format string, args ...any) {
	h.stats.invalid()
	http.Error(w, fmt.Sprintf(format, args...), http.StatusBadRequest)
}
