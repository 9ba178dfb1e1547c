package main

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// maxBodySize bounds a request body before and after decompression: Relay's default
// max_envelope_size (200 MiB).
const maxBodySize = 200 << 20

// handlerConfig is what the flags set on the handler.
type handlerConfig struct {
	// Delay is added before every answer (a slow Sentry, for load tests).
	Delay time.Duration
	// Hang reads and checks every envelope but never answers: the connection
	// stays open until the client gives up or Stop is closed (a hung Sentry).
	Hang bool
	// HangProjects hangs only the requests to these project ids, as Hang does.
	HangProjects map[string]bool
	// Stop, when closed, ends every held request (the sink is stopping).
	Stop <-chan struct{}
	// RateLimit, when set, is an X-Sentry-Rate-Limits value such as
	// "60::organization" or "30:transaction;span:key".
	RateLimit string
	// RateLimitStatus says what RateLimit does: 429 rejects the envelopes whose
	// items it covers (with the header and Retry-After) and accepts the others,
	// as Relay does; 200 accepts every envelope and announces the limit on each.
	RateLimitStatus int
	// OldRelay decodes Content-Encoding as a Relay that predates zstd support:
	// an encoding it does not know (zstd) is taken for identity, so such a body
	// fails to parse and is answered 400.
	OldRelay bool
	// Limits are the size limits envelopes are validated against.
	Limits envelope.Limits
	// Log receives one line per accepted envelope; nil for none.
	Log func(line []byte)
	// Record receives every accepted envelope (--record-file); nil for none.
	Record func(project string, env *envelope.Envelope)
	// Schedule, when set, says when the sink is down (--hang-at, --hang-for,
	// --flap): requests are held until the window ends.
	Schedule *schedule
	// Answers, when set, fails some requests (--fail-ratio, --chaos).
	Answers *answerer
}

// handler is a Sentry-compatible envelope endpoint: POST /api/<project>/envelope/.
type handler struct {
	cfg   handlerConfig
	stats *stats
	// retryAfter is the Retry-After value sent with a 429: the longest retry_after in RateLimit.
	retryAfter string
	bufs       sync.Pool
}

func newHandler(cfg handlerConfig, st *stats) *handler {
	if cfg.RateLimitStatus == 0 {
		cfg.RateLimitStatus = http.StatusTooManyRequests
	}
	h := &handler{cfg: cfg, stats: st}
	h.bufs.New = func() any { return new(bytes.Buffer) }
	if cfg.RateLimit != "" {
		h.retryAfter = strconv.Itoa(longestRetryAfter(cfg.RateLimit))
	}
	return h
}

// longestRetryAfter returns the largest retry_after (seconds, rounded up) of an
// X-Sentry-Rate-Limits value, at least 1.
func longestRetryAfter(v string) int {
	longest := 1
	for group := range strings.SplitSeq(v, ",") {
		secs, _, _ := strings.Cut(strings.TrimSpace(group), ":")
		if f, err := strconv.ParseFloat(secs, 64); err == nil && !math.IsNaN(f) && f > 0 {
			longest = max(longest, int(math.Ceil(f)))
		}
	}
	return longest
}

// rateLimited reports whether the limits in header reject env, as Relay
// decides for the envelopes the exporter sends (one data category each, maybe
// with a client report): rejected when a data item's category is limited, or,
// for an envelope of client reports only, when the internal category is (only
// an all-category limit does that). keepReports says whether the client
// reports of a rejected envelope are still ingested, as Relay ingests the
// items that are not limited and answers 429 all the same.
func rateLimited(env *envelope.Envelope, header string, now time.Time) (limited, keepReports bool) {
	limits, _ := ratelimit.Parse(header, now)
	reportsLimited := limits.ItemActive(envelope.ItemTypeClientReport, now)
	data, reports := false, false
	for i := range env.Items {
		typ := env.Items[i].Type
		if typ == envelope.ItemTypeClientReport {
			reports = true
			continue
		}
		data = true
		if limits.ItemActive(typ, now) {
			limited = true
		}
	}
	if !data {
		return reportsLimited, false
	}
	return limited, limited && reports && !reportsLimited
}

// projectFromPath returns <project> of /api/<project>/envelope/ (trailing slash optional).
func projectFromPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/api/")
	if !ok {
		return "", false
	}
	project, tail, ok := strings.Cut(rest, "/")
	if !ok || project == "" || (tail != "envelope/" && tail != "envelope") {
		return "", false
	}
	return project, true
}

// checkAuth checks X-Sentry-Auth (or the sentry_key/sentry_version query parameters):
// sentry_version=7 and a sentry_key. It returns the HTTP status and detail of a failure, or 0.
func checkAuth(r *http.Request) (int, string) {
	var version, key string
	if auth := r.Header.Get("X-Sentry-Auth"); auth != "" {
		rest, ok := strings.CutPrefix(auth, "Sentry ")
		if !ok {
			return http.StatusUnauthorized, "X-Sentry-Auth does not start with \"Sentry \""
		}
		for kv := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			switch k {
			case "sentry_version":
				version = v
			case "sentry_key":
				key = v
			}
		}
	} else {
		q := r.URL.Query()
		version, key = q.Get("sentry_version"), q.Get("sentry_key")
	}
	switch {
	case key == "" && version == "":
		return http.StatusUnauthorized, "missing authorization information"
	case key == "":
		return http.StatusUnauthorized, "missing sentry_key"
	case version != "7":
		return http.StatusBadRequest, fmt.Sprintf("unsupported protocol version %q", version)
	}
	return 0, ""
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Schedule.active() {
		h.stats.origin(h.cfg.Schedule.start(time.Now()))
	}
	status := h.serve(w, r)
	h.stats.request(status)
	if status == statusAborted {
		// Held until the client left or the sink stopped: end the connection
		// without an answer. A handler that returns without writing answers
		// 200, which told a client whose request was held at the sink's stop
		// that it was stored.
		panic(http.ErrAbortHandler)
	}
}

// answer writes a JSON body with the given status.
func answer(w http.ResponseWriter, status int, body any) int {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return status
}

func detail(w http.ResponseWriter, status int, msg string, causes ...string) int {
	w.Header().Set("X-Sentry-Error", msg)
	body := map[string]any{"detail": msg}
	if len(causes) > 0 {
		body["causes"] = causes
	}
	return answer(w, status, body)
}

// serve handles one request and returns the status it answered with.
func (h *handler) serve(w http.ResponseWriter, r *http.Request) int {
	project, ok := projectFromPath(r.URL.Path)
	if !ok {
		return detail(w, http.StatusNotFound, "not found")
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return detail(w, http.StatusMethodNotAllowed, "method not allowed")
	}
	if status, msg := checkAuth(r); status != 0 {
		return detail(w, status, msg)
	}

	buf := h.bufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 4<<20 { // do not keep huge buffers around
			buf.Reset()
			h.bufs.Put(buf)
		}
	}()
	buf.Reset()
	wire, data, status, msg := readBody(w, r, buf, h.cfg.OldRelay)
	if status != 0 {
		h.stats.invalid(msg)
		return detail(w, status, msg)
	}

	env, err := envelope.Parse(data)
	if err != nil {
		h.stats.invalid(err.Error())
		return detail(w, http.StatusBadRequest, "invalid event envelope", err.Error())
	}
	if err := envelope.Validate(env, h.cfg.Limits); err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, envelope.ErrTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		causes := strings.Split(err.Error(), "\n")
		h.stats.invalid(causes[0])
		return detail(w, status, "invalid event envelope", causes...)
	}
	if err := checkProfileChunks(data); err != nil {
		causes := strings.Split(err.Error(), "\n")
		h.stats.invalid(causes[0])
		return detail(w, http.StatusBadRequest, "invalid event envelope", causes...)
	}

	if h.cfg.Hang || h.cfg.HangProjects[project] {
		h.stats.held(1)
		select {
		case <-r.Context().Done():
		case <-h.cfg.Stop:
		}
		h.stats.held(-1)
		h.stats.aborted()
		return statusAborted
	}
	if until := h.cfg.Schedule.downUntil(time.Now()); !until.IsZero() && !h.hold(r, until) {
		h.stats.aborted()
		return statusAborted
	}
	if h.cfg.Delay > 0 {
		t := time.NewTimer(h.cfg.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			h.stats.aborted()
			return statusAborted
		}
	}

	if f := h.cfg.Answers.draw(); f.reset || f.status != 0 {
		return h.fail(w, project, env, f)
	}

	if h.cfg.RateLimit != "" {
		if h.cfg.RateLimitStatus != http.StatusTooManyRequests {
			w.Header().Set("X-Sentry-Rate-Limits", h.cfg.RateLimit)
		} else if limited, keepReports := rateLimited(env, h.cfg.RateLimit, time.Now()); limited {
			w.Header().Set("X-Sentry-Rate-Limits", h.cfg.RateLimit)
			w.Header().Set("Retry-After", h.retryAfter)
			var reports *envSummary
			if keepReports {
				sum := summarize(env)
				reports = &sum
			}
			h.stats.rateLimited(project, env, reports)
			return detail(w, http.StatusTooManyRequests, "event submission rejected due to rate limiting")
		}
	}

	sum := summarize(env)
	h.stats.accepted(project, r.Header.Get("Content-Encoding"), wire, len(data), &sum)
	if h.cfg.Log != nil {
		h.cfg.Log(sum.line(project, env.Header.EventID))
	}
	if h.cfg.Record != nil {
		h.cfg.Record(project, env)
	}
	if env.Header.EventID != "" {
		return answer(w, http.StatusOK, map[string]string{"id": env.Header.EventID})
	}
	return answer(w, http.StatusOK, map[string]string{})
}

// hold keeps a request unanswered until the down window ends; false when the
// client gave up or the sink is stopping first.
func (h *handler) hold(r *http.Request, until time.Time) bool {
	h.stats.held(1)
	defer h.stats.held(-1)
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-h.cfg.Stop:
	}
	return false
}

// fail answers a request as the answerer decided, storing none of its data: a
// reset, a 429 with the drawn X-Sentry-Rate-Limits (and Retry-After: 1), or
// another status. A 429 ingests the client reports riding on the envelope
// unless its limits cover every category, as Relay does.
func (h *handler) fail(w http.ResponseWriter, project string, env *envelope.Envelope, f fault) int {
	switch {
	case f.reset:
		if resetConn(w) {
			return statusReset
		}
		return detail(w, http.StatusServiceUnavailable, "connection reset (could not hijack)")
	case f.status == http.StatusTooManyRequests:
		now := time.Now()
		if f.limits != "" {
			w.Header().Set("X-Sentry-Rate-Limits", f.limits)
		}
		w.Header().Set("Retry-After", "1")
		var reports *envSummary
		if limits, _ := ratelimit.Parse(f.limits, now); !limits.ItemActive(envelope.ItemTypeClientReport, now) {
			sum := summarize(env)
			reports = &sum
		}
		h.stats.rateLimited(project, env, reports)
		return detail(w, http.StatusTooManyRequests, "event submission rejected due to rate limiting")
	}
	return detail(w, f.status, "service unavailable (sentrysink --fail-ratio or --chaos)")
}

// readBody reads the request body into buf, decompressing it by Content-Encoding. It
// returns the wire size and the envelope bytes, or a status and message for a failure.
func readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer, oldRelay bool) (wire int, data []byte, status int, msg string) {
	body := http.MaxBytesReader(w, r.Body, maxBodySize)
	enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding")))
	if oldRelay && enc != "gzip" && enc != "x-gzip" && enc != "deflate" && enc != "br" {
		enc = "" // HttpEncoding::parse of Relays before zstd: anything else is identity
	}
	switch enc {
	case "", "identity", "utf-8":
		if _, err := buf.ReadFrom(body); err != nil {
			return 0, nil, bodyError(err), "reading the body: " + err.Error()
		}
		return buf.Len(), buf.Bytes(), 0, ""
	case "gzip", "x-gzip", "deflate", "zstd":
	default:
		return 0, nil, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content encoding %q", enc)
	}
	// Compressed: keep the wire bytes in buf's tail-free prefix, decompress into a new buffer.
	if _, err := buf.ReadFrom(body); err != nil {
		return 0, nil, bodyError(err), "reading the body: " + err.Error()
	}
	wire = buf.Len()
	var zr io.ReadCloser
	var err error
	switch enc {
	case "deflate":
		zr, err = zlib.NewReader(bytes.NewReader(buf.Bytes()))
	case "zstd":
		var d *zstd.Decoder
		if d, err = zstd.NewReader(bytes.NewReader(buf.Bytes()), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBodySize)); err == nil {
			zr = d.IOReadCloser()
		}
	default:
		zr, err = gzip.NewReader(bytes.NewReader(buf.Bytes()))
	}
	if err != nil {
		return wire, nil, http.StatusBadRequest, fmt.Sprintf("failed to decode %s payload: %v", enc, err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, maxBodySize+1))
	if err != nil {
		return wire, nil, http.StatusBadRequest, fmt.Sprintf("failed to decode %s payload: %v", enc, err)
	}
	if len(out) > maxBodySize {
		return wire, nil, http.StatusRequestEntityTooLarge, "decompressed body exceeds max_envelope_size"
	}
	return wire, out, 0, ""
}

func bodyError(err error) int {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
