package inlinehttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPost is one keep-alive POST of a 1 KB envelope body and its
// answer, one at a time, to a net/http server in the same process: through
// this transport, and through net/http's (the peer). cpu-ns/op is the
// process's CPU (client and server) per post.
func BenchmarkPost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"0123456789abcdef0123456789abcdef"}`)
	}))
	b.Cleanup(srv.Close)
	nethttp := &http.Transport{MaxIdleConnsPerHost: 4}
	b.Cleanup(nethttp.CloseIdleConnections)
	inline := New(Options{Fallback: nethttp})
	b.Cleanup(inline.CloseIdleConnections)
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"inline", inline}, {"nethttp", nethttp}} {
		b.Run(tc.name, func(b *testing.B) { benchPost(b, tc.rt, srv.URL+"/api/1/envelope/") })
	}
}

func benchPost(b *testing.B, rt http.RoundTripper, url string) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 64)
	post := func() {
		ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, io.NopCloser(bytes.NewReader(body)))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/x-sentry-envelope")
		req.Header.Set("Content-Encoding", "zstd")
		req.Header.Set("X-Sentry-Auth", "Sentry sentry_key=public")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	post()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		post()
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
