package send

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/account/accounttest"
	"github.com/otel-sentry/sentryexporter/internal/cputime"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/sdkinfo"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// BenchmarkOneEnvelope is one envelope's way from built envelope to settled
// answer: Lane.Offer of a 10-span transaction, its detaching, the hand-over
// to a worker, the zstd compression, one keep-alive POST through the client
// newClient builds with confighttp to a local server that answers at once,
// the answer and its rate-limit headers, and the accounting, one envelope at
// a time. The peer, bare_nethttp, posts the same compressed bytes with a
// plain net/http client to the same kind of server; bare_nethttp_zstd
// compresses them first, as the stage does. All report cpu-ns/op: the
// process's CPU time (client and server) per envelope, which a loaded
// machine disturbs less than the wall time.
func BenchmarkOneEnvelope(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(benchSentry))
	b.Cleanup(srv.Close)
	out := benchTransaction()

	// The collector at its defaults: no-op tracer, otelhttp's metrics dropped.
	b.Run("stage", func(b *testing.B) { benchStage(b, srv.URL, out, componenttest.NewNopTelemetrySettings()) })
	// Metrics level detailed: otelhttp's metrics recorded.
	b.Run("stage_instrumented", func(b *testing.B) {
		benchStage(b, srv.URL, out, accounttest.New(b).NewTelemetrySettings())
	})
	b.Run("bare_nethttp", func(b *testing.B) { benchBare(b, srv.URL, out, false) })
	// The bare post compressing the envelope first (one zstd EncodeAll into
	// a reused buffer): what the stage adds beyond compression.
	b.Run("bare_nethttp_zstd", func(b *testing.B) { benchBare(b, srv.URL, out, true) })
}

// benchBare posts out's compressed bytes with a plain net/http client; with
// compress, it compresses the envelope for every post.
func benchBare(b *testing.B, srvURL string, out encode.Outgoing, compress bool) {
	wire := benchWire(out)
	out.Env.Header.SentAt = time.Now()
	raw := out.Env.AppendTo(nil)
	comp := NewCompressors(0)
	client := &http.Client{Transport: &http.Transport{}}
	b.Cleanup(client.CloseIdleConnections)
	url := srvURL + "/api/1/envelope/"
	benchLoop(b, func() {
		if compress {
			wire = comp.Compress(EncodingZstd, raw, wire[:0])
		}
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(wire))
		req.Header.Set("Content-Type", envelope.ContentType)
		req.Header.Set("Content-Encoding", "zstd")
		req.Header.Set("X-Sentry-Auth", "Sentry sentry_key=public")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	})
}

// benchSentry answers like Sentry: the body read, 200 and the event id.
func benchSentry(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"0123456789abcdef0123456789abcdef"}`)
}

// benchStage runs the stage's benchmark against the server at url, its
// HTTP client built with the telemetry settings clientTel.
func benchStage(b *testing.B, url string, out encode.Outgoing, clientTel component.TelemetrySettings) {
	tel := accounttest.New(b)
	cfg := testConfig()
	cfg.Client.Compression = configcompression.TypeZstd
	cfg.Retry = configretry.NewDefaultBackOffConfig()
	cfg.MaxConcurrentRequests = 128
	stage := New(cfg, Settings{
		Telemetry: clientTel, Logger: zap.NewNop(), UserAgent: "bench",
	})
	reports := &account.ClientReports{} // on by default: one look per envelope
	lane, err := stage.NewLane(LaneOptions{
		URL: url + "/api/1/envelope/", Auth: "Sentry sentry_key=public",
		Limits: &ratelimit.State{}, Acct: account.NewAccountant(tel.Builder, "1", reports), Reports: reports,
	})
	require.NoError(b, err)
	require.NoError(b, stage.Start(b.Context(), componenttest.NewNopHost()))
	b.Cleanup(func() { stage.Shutdown(context.WithoutCancel(b.Context())) })

	items := make([]envelope.Item, 1)
	batch := make([]encode.Outgoing, 1)
	benchLoop(b, func() {
		// Offer's detaching points the envelope's items at its copy: a push
		// builds new ones each time, the benchmark resets its own.
		items[0] = out.Env.Items[0]
		batch[0] = out
		batch[0].Env.Items = items
		lane.Offer(b.Context(), batch, nil)
		// settled, and its worker parked again
		lane.waitUntil(func() bool { return lane.jobs == 0 && lane.workers == lane.parked })
	})
	sent := tel.Sums(b, "otelcol_exporter_sentry_sent_items")["category=transaction,project=1"]
	require.GreaterOrEqual(b, sent, int64(b.N), "every envelope delivered")
}

// benchLoop runs op b.N times and reports the process's CPU time per op.
func benchLoop(b *testing.B, op func()) { benchPosts(b, 1, op) }

// benchPosts runs op, which makes posts requests, b.N times; with more than
// one post per op it reports the wall and CPU time per post too.
func benchPosts(b *testing.B, posts int, op func()) {
	op() // the connections, the worker, the pools
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, wall0 := cputime.Process(), time.Now()
	for b.Loop() {
		op()
	}
	b.StopTimer()
	cpu, wall := cputime.Process()-cpu0, time.Since(wall0)
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	if posts > 1 {
		b.ReportMetric(float64(wall)/float64(b.N*posts), "ns/post")
		b.ReportMetric(float64(cpu)/float64(b.N*posts), "cpu-ns/post")
	}
}

// benchTransaction is a transaction of 10 spans as the translator writes
// one for make compare's traces (a server root, db and http.client
// children), about 6 KB of JSON and 1.5 KB compressed.
func benchTransaction() encode.Outgoing {
	var p strings.Builder
	p.WriteString(`{"type":"transaction","event_id":"0123456789abcdef0123456789abcdef","platform":"go","transaction":"GET /checkout/{id}",` +
		`"transaction_info":{"source":"route"},"start_timestamp":1733140000.123456,"timestamp":1733140000.223456,` +
		`"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","op":"http.server","status":"ok",` +
		`"data":{"http.request.method":"GET","url.path":"/checkout/42","http.response.status_code":200}},` +
		`"otel":{"resource":{"service.name":"checkout","service.version":"1.4.2","telemetry.sdk.language":"go"}}},` +
		`"tags":{"service.name":"checkout"},"sdk":{"name":"sentry.opentelemetry.collector","version":"0.1.0"},"spans":[`)
	for i := range 9 {
		if i > 0 {
			p.WriteByte(',')
		}
		op, desc := "db", "SELECT * FROM orders WHERE id = $1"
		if i%3 == 1 {
			op, desc = "http.client", "GET http://inventory:8080/items/42"
		}
		fmt.Fprintf(&p, `{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"%016x","parent_span_id":"b7ad6b7169203331",`+
			`"op":%q,"description":%q,"start_timestamp":1733140000.%06d,"timestamp":1733140000.%06d,"status":"ok",`+
			`"data":{"db.system":"postgresql","server.address":"db-%d.internal","thread.name":"worker-%d"}}`,
			0xa000+i, op, desc, 130000+i*1000, 135000+i*1000, i, i)
	}
	p.WriteString(`]}`)
	return encode.Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{
				EventID: "0123456789abcdef0123456789abcdef", SDK: sdkinfo.Envelope(),
				Trace: &envelope.TraceContext{TraceID: "0af7651916cd43dd8448eb211c80319c", PublicKey: "public", Transaction: "GET /checkout/{id}", Sampled: "true"},
			},
			Items: []envelope.Item{{Type: envelope.ItemTypeTransaction, Payload: []byte(p.String())}},
		},
		Gate:   gate.GateTransaction,
		Counts: account.Counts{account.CatTransaction: 1, account.CatSpan: 10},
	}
}

// benchWire is out's body as the stage sends it: the envelope, zstd-compressed.
func benchWire(out encode.Outgoing) []byte {
	out.Env.Header.SentAt = time.Now()
	return NewCompressors(0).Compress(EncodingZstd, out.Env.AppendTo(nil), nil)
}

// BenchmarkPostTLS is the protocol choice to Sentry over TLS: one keep-alive
// POST of an envelope's compressed bytes with a plain net/http client over
// HTTP/1.1 (a connection per request in flight) and over HTTP/2 (one
// connection, multiplexed), with 1, 10 and 100 requests in flight.
// cpu-ns/op counts client and server: the server is net/http's too, on the
// same protocol, so the difference between the two is the protocol's.
func BenchmarkPostTLS(b *testing.B) {
	wire := benchWire(benchTransaction())
	for _, proto := range []string{"h1", "h2"} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(benchSentry))
		srv.EnableHTTP2 = proto == "h2"
		srv.StartTLS()
		b.Cleanup(srv.Close)
		for _, inFlight := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("%s/in_flight=%d", proto, inFlight), func(b *testing.B) {
				tr := srv.Client().Transport.(*http.Transport).Clone()
				tr.ForceAttemptHTTP2 = proto == "h2"
				tr.MaxIdleConnsPerHost = inFlight
				client := &http.Client{Transport: tr}
				b.Cleanup(client.CloseIdleConnections)
				post := func() { postTLS(b, client, srv.URL+"/api/1/envelope/", wire, map[string]int{"h1": 1, "h2": 2}[proto]) }
				benchPosts(b, inFlight, func() { inParallel(inFlight, post) })
			})
		}
	}
}

// postTLS posts wire to url with client and reads the answer, which must
// come over HTTP/major.
func postTLS(b *testing.B, client *http.Client, url string, wire []byte, major int) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(wire))
	req.Header.Set("Content-Type", envelope.ContentType)
	req.Header.Set("Content-Encoding", "zstd")
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	if resp.ProtoMajor != major {
		b.Errorf("answered over %s", resp.Proto)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// inParallel runs op n times, all at once, and returns when all ended.
func inParallel(n int, op func()) {
	if n == 1 {
		op()
		return
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(op)
	}
	wg.Wait()
}
