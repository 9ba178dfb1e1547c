package send

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/account/accounttest"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// The answers a hostile or broken server (or a proxy in front of Sentry) can
// give, each against the send stage of several projects over real TCP
// (rawserver_test.go). A real socket cannot live in a synctest bubble, so
// these rows run on the real clock: the stage's own timeouts are set small
// where the row needs them to end an attempt, `timeout` is set long (a row
// whose answer must end by itself would otherwise end at it, and pass), and
// every wait is require.Eventually's, bounded by settleWithin.
//
// Each row ends the same way: every item offered counted once, sent or
// dropped with the reason the row's answer means; the memory budget within
// its maximum while it runs and back to zero; the heap's growth while it
// runs within the budget and what the row's answers may hold (heapFor);
// and, after shutdown, no goroutine of the stage or of its HTTP client left.

// settleWithin bounds a row: every item counted by then. Far more than any
// row takes (a few seconds under the race detector on a loaded machine), far
// less than hostileTimeout, so that an attempt ended only by `timeout` fails
// the row.
const settleWithin = 40 * time.Second

// hostileTimeout is the rows' `timeout`.
const hostileTimeout = 5 * time.Minute

// hostileConfig: 3 projects, 4 requests each at most, an 8 MiB budget, quick
// retries that give up after 400 ms.
func hostileConfig() Config {
	cfg := testConfig()
	cfg.Client.Timeout = hostileTimeout
	cfg.Client.Compression = configcompression.TypeZstd // the default (factory.go)
	cfg.Retry.InitialInterval, cfg.Retry.MaxInterval, cfg.Retry.MaxElapsedTime = 50*time.Millisecond, 200*time.Millisecond, 400*time.Millisecond
	cfg.MaxConcurrentRequests, cfg.MaxRequestsInFlight, cfg.MaxBytes, cfg.MaxProjects = 4, 16, 8<<20, 4
	cfg.DrainTimeout = 2 * time.Second
	return cfg
}

const hostileProjects = 3

// hostileOverhead is what a row holds beyond the budget whatever the
// answers: the test's own payloads and the server's reads, net/http's
// connections. The heap's growth may reach twice what is live (GOGC=100).
const hostileOverhead = 4 << 20

// hostileRow is one answer and what must come of it.
type hostileRow struct {
	name      string
	answer    rawAnswer
	h2        func(*sendtest.HTTP2Stream, *rawServer) // the answer over HTTP/2 (an HTTP/2 client's rows)
	rcvBuf    int                                     // the server's receive buffer (0: the system's)
	configure func(*Config)                           // beyond hostileConfig
	logs      bool                                    // offer ~1 MiB log containers, not transactions
	sndBuf    int                                     // the client's send buffer (0: the system's)
	// keepsAlive: the row's answers leave connections open to be reused
	// (otherwise every connection must be closed once every item is counted).
	keepsAlive bool
	// fates are those the row's items may have: "sent", or a reason they
	// are dropped with.
	fates  []string
	server func(t *testing.T, s *rawServer, envelopes int)
	// heapFor is what the row's answers may make the test hold beyond
	// hostileOverhead.
	heapFor int64
}

// The answers' bytes.
const (
	tooLarge    = "HTTP/1.1 413 Content Too Large\r\nX-Sentry-Error: envelope exceeded size limits\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	okAnswer    = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 41\r\n\r\n{\"id\":\"0123456789abcdef0123456789abcdef\"}"
	earlyHints  = "HTTP/1.1 103 Early Hints\r\nLink: </assets/app.css>; rel=preload; as=style\r\n"
	maxHeaderNH = 10 << 20 // net/http's default limit on an answer's header bytes
)

// The answers' larger bytes, built once: the server's own allocations
// would count in the heap's growth (and a header of 10 MiB is written in
// chunks, writeHeaderOf, so that it is not live all along).
var (
	bigHint       = []byte(earlyHints + "Link: </" + strings.Repeat("x", 8<<10) + ">; rel=preload\r\n\r\n")
	closingAnswer = []byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/html\r\nContent-Length: 65536\r\n\r\n" +
		strings.Repeat("<p>ok</p>\n", 6553) + "......")
)

// TestHostileAnswers runs the rows in each client configuration
// (hostileclients_test.go).
func TestHostileAnswers(t *testing.T) {
	for _, client := range hostileClients() {
		t.Run(client.name, func(t *testing.T) {
			for _, row := range rowsFor(client) {
				t.Run(row.name, func(t *testing.T) { runHostile(t, client, row) })
			}
		})
	}
}

func hostileRows() []hostileRow {
	return slices.Concat(hostileHeaders(), hostileInterim(), hostileWhileWriting(), hostileConnections())
}

// hostileHeaders are answers whose headers are too large, or nearly.
func hostileHeaders() []hostileRow {
	return []hostileRow{
		{
			// One header of 10 MiB: past the limit on an answer's header
			// bytes (maxAnswerHeader; net/http's own is 10 MiB), so no answer
			// (network_error), retried, then counted.
			name: "a 10 MiB header",
			answer: func(c *rawConn, req *http.Request) bool {
				c.readEnvelope(req)
				c.writeHeaderOf(maxHeaderNH)
				return false
			},
			fates:  []string{account.ReasonNetworkError.Wire()},
			server: retried,
		},
		{
			// A 200 whose header is just under net/http's own limit: with it,
			// the client held ~20 MiB per request in flight, outside the
			// budget (the row's heap grew by 200 MiB), and every envelope was
			// "stored". Past the stage's limit (maxAnswerHeader): no answer.
			name: "a 200 with a header just under 10 MiB",
			answer: func(c *rawConn, req *http.Request) bool {
				c.readEnvelope(req)
				return c.writeHeaderOf(maxHeaderNH - 4096)
			},
			fates:  []string{account.ReasonNetworkError.Wire()},
			server: retried,
		},
	}
}

// hostileInterim are interim answers (1xx) that never end, or switch protocols.
func hostileInterim() []hostileRow {
	return []hostileRow{
		{
			// 1xx answers for ever, 103 Early Hints with a Link header of 8 KiB
			// and 100 Continue in turn: the attempt must end on its own.
			name: "endless 1xx",
			answer: func(c *rawConn, req *http.Request) bool {
				go func() { _, _ = io.Copy(io.Discard, req.Body) }()
				for !c.stopped() {
					if !c.writeBytes(bigHint) || !c.write("HTTP/1.1 100 Continue\r\n\r\n") {
						break
					}
				}
				return false
			},
			fates:  []string{account.ReasonNetworkError.Wire()},
			server: retried,
		},
		{
			// 101 Switching Protocols to a POST that asked for no upgrade, and
			// then silence: not a success (send_error), and the connection,
			// now another protocol's, must never carry another request.
			name: "101 Switching Protocols",
			answer: func(c *rawConn, req *http.Request) bool {
				c.readEnvelope(req)
				c.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
				if n, _ := io.Copy(io.Discard, c.Conn); n > 0 {
					c.srv.invalid.Add(1) // bytes on a switched connection: a request reused it
				}
				return false
			},
			fates:  []string{account.ReasonSendError.Wire()},
			server: oncePerEnvelope,
		},
	}
}

// hostileWhileWriting are answers that come while the body is still being written.
func hostileWhileWriting() []hostileRow {
	return []hostileRow{
		{
			// A 413 as soon as the head of a ~1 MiB envelope and 64 KiB of its
			// body are in, while the client is still writing the rest (its
			// send buffer and the server's receive buffer are 16 KiB); then,
			// as net/http's server or nginx do, the rest of the body is read
			// and the connection closed. net/http delivers the answer: the
			// envelope is split, and its halves (under 768 KiB) stored.
			name:   "413 while a 1 MiB body is being written, then a lingering close",
			rcvBuf: 16 << 10, sndBuf: 16 << 10, logs: true, keepsAlive: true,
			configure: bigContainers,
			answer: func(c *rawConn, req *http.Request) bool {
				if req.ContentLength <= 768<<10 {
					c.readEnvelope(req)
					return c.write(okAnswer)
				}
				_, _ = io.CopyN(io.Discard, req.Body, 64<<10)
				c.write(tooLarge)
				_, _ = io.Copy(io.Discard, req.Body)
				return false
			},
			fates: []string{"sent"},
			server: func(t *testing.T, s *rawServer, envelopes int) {
				assert.Equal(t, int64(3*envelopes), s.requests.Load(), "each container once, then its halves")
			},
			heapFor: 8 << 20, // the server's reads of 1 MiB bodies
		},
		{
			// The same 413, then a close with the rest of the body unread: the
			// kernel answers the client's next bytes with an RST. net/http
			// mostly returns the write's "connection reset by peer", not the
			// 413 it may have read (15 times in 20 in a plain RoundTrip): no
			// answer, retried; when the 413 does come through, the container
			// is split and its halves stored. Either way, every item counted.
			name:   "413 while a 1 MiB body is being written, then a reset",
			rcvBuf: 16 << 10, sndBuf: 16 << 10, logs: true, keepsAlive: true,
			configure: bigContainers,
			answer: func(c *rawConn, req *http.Request) bool {
				if req.ContentLength <= 768<<10 {
					c.readEnvelope(req)
					return c.write(okAnswer)
				}
				_, _ = io.CopyN(io.Discard, req.Body, 64<<10)
				c.write(tooLarge)
				return false
			},
			fates:   []string{"sent", account.ReasonNetworkError.Wire()},
			heapFor: 8 << 20,
		},
	}
}

// hostileConnections are connections closed, dripped or reset.
func hostileConnections() []hostileRow {
	return []hostileRow{
		{
			// Every answer a 200 with Connection: close and a 64 KiB body (more
			// than the stage reads of an answer), then a FIN: each envelope
			// is sent once, on a connection of its own. No `timeout`, whose
			// end would close what the stage left open.
			name:      "Connection: close on every answer",
			configure: func(c *Config) { c.Client.Timeout = 0 },
			answer: func(c *rawConn, req *http.Request) bool {
				c.readEnvelope(req)
				c.writeBytes(closingAnswer)
				return false
			},
			fates: []string{"sent"},
			server: func(t *testing.T, s *rawServer, envelopes int) {
				oncePerEnvelope(t, s, envelopes)
				assert.Equal(t, int64(envelopes), s.connections.Load(), "a connection per envelope: none reused after its Connection: close")
			},
		},
		{
			// A 200 whose body of 1,000 bytes comes at one byte a second: the
			// status is in, so the envelope is stored; reading the rest is cut
			// after maxAnswerRead, not held for `timeout`.
			name: "a body dripped at 1 byte/s",
			answer: func(c *rawConn, req *http.Request) bool {
				c.readEnvelope(req)
				if !c.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n") {
					return false
				}
				for range 1000 {
					select {
					case <-c.srv.done:
						return false
					case <-time.After(time.Second):
					}
					if !c.write("{") {
						return false
					}
				}
				return true
			},
			fates:  []string{"sent"},
			server: oncePerEnvelope,
		},
		{
			// The status line and part of a header, then an RST: no answer
			// (network_error), retried, then counted.
			name: "a reset mid-answer",
			answer: func(c *rawConn, req *http.Request) bool {
				c.readEnvelope(req)
				c.write("HTTP/1.1 200 OK\r\nContent-Type: applica")
				c.reset()
				return false
			},
			fates:  []string{account.ReasonNetworkError.Wire()},
			server: retried,
		},
	}
}

// oncePerEnvelope: the server read every envelope whole, once (a 101's
// connection carried nothing more).
func oncePerEnvelope(t *testing.T, s *rawServer, envelopes int) {
	assert.Equal(t, int64(envelopes), s.requests.Load(), "one request per envelope: none retried")
	assert.Zero(t, s.invalid.Load(), "every body an envelope, and no bytes after a 101")
}

// retried: every envelope was tried more than once before it was counted.
func retried(t *testing.T, s *rawServer, envelopes int) {
	assert.Greater(t, s.requests.Load(), int64(envelopes), "retried before counted")
	assert.Zero(t, s.invalid.Load(), "every body read whole an envelope")
}

// hostileStage is a started stage with a lane per project on srv.
type hostileStage struct {
	stage *Stage
	lanes []*Lane
	tel   *accounttest.Telemetry
	enc   *encode.Encoder // for the log containers
}

// newHostileStage starts the stage with its client configured by client;
// sndBuf > 0 sets its connections' send buffer (through the transport
// confighttp built), so that a large body is still being written when the
// server answers. It returns what to stop after the row.
func newHostileStage(t *testing.T, srv *rawServer, cfg Config, sndBuf int, client hostileClient) (*hostileStage, func()) {
	h := &hostileStage{tel: accounttest.New(t)}
	set := Settings{
		Telemetry: componenttest.NewNopTelemetrySettings(), Logger: zap.NewNop(), UserAgent: "test",
	}
	ext := map[component.ID]component.Component{}
	stop := client.setup(t, &clientSetup{cfg: &cfg, set: &set, ext: ext}, srv)
	if sndBuf > 0 {
		sendtest.Use(&cfg.Client)
		ext[sendtest.ID] = sendtest.Extension(func(base http.RoundTripper) http.RoundTripper {
			tr, ok := base.(*http.Transport)
			require.True(t, ok, "net/http's transport, unwrapped")
			d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
				return rc.Control(func(fd uintptr) {
					_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, sndBuf)
				})
			}}
			tr.DialContext = d.DialContext
			return tr
		})
	}
	host := sendtest.HostWith(ext)
	h.stage = New(cfg, set)
	for i := range hostileProjects {
		id := strconv.Itoa(i + 1)
		l, err := h.stage.NewLane(LaneOptions{
			URL: srv.url(id), Auth: "Sentry sentry_key=public",
			Limits: &ratelimit.State{}, Acct: account.NewAccountant(h.tel.Builder, id, nil),
		})
		require.NoError(t, err)
		h.lanes = append(h.lanes, l)
	}
	h.enc = encode.New(nil, "public", account.NewAccountant(h.tel.Builder, "encoder", nil))
	require.NoError(t, h.stage.Start(t.Context(), host))
	return h, stop
}

func runHostile(t *testing.T, client hostileClient, row hostileRow) {
	before := goleak.IgnoreCurrent()
	var srv *rawServer
	if row.h2 != nil {
		srv = serveHTTP2(t, row.h2)
	} else {
		srv = serveRaw(t, row.rcvBuf, row.answer)
	}
	cfg := hostileConfig()
	if row.configure != nil {
		row.configure(&cfg)
	}
	h, stop := newHostileStage(t, srv, cfg, row.sndBuf, client)
	sampled := sendtest.SampleMemory(h.stage.mem)

	offered, envelopes := h.offerAll(t, row.logs)

	require.Eventually(t, func() bool { return h.counted(t, offered) }, settleWithin, 10*time.Millisecond,
		"every item counted within %v", settleWithin)
	fates := h.fates(t)
	assert.Equal(t, offered, byItem(fates), "every item counted once")
	for k := range fates {
		assert.Contains(t, row.fates, fateOf(k), "%s: a fate the answer does not mean", k)
	}
	assert.Zero(t, h.stage.mem.Held(), "nothing held once every item is counted")
	if !row.keepsAlive {
		assert.Eventually(t, func() bool { return srv.open() == 0 && clientConns() == 0 }, settleWithin, 10*time.Millisecond,
			"every connection closed on both sides once its answer was read, before shutdown")
	}

	h.stage.Shutdown(t.Context())
	held, heap, base := sampled()
	assert.LessOrEqual(t, held, cfg.MaxBytes, "within the budget throughout")
	// The heap may reach twice what is live (GOGC=100): the test's own
	// live heap at the start, the budget, and what the row may hold more.
	assert.LessOrEqual(t, heap, 2*(base+cfg.MaxBytes+hostileOverhead)+row.heapFor,
		"the heap within the budget and what the answers may hold")
	t.Logf("peak held %d KiB, heap %d KiB at the start, peak %d KiB; %d envelopes, %d requests, %d connections; %v",
		held>>10, base>>10, heap>>10, envelopes, srv.requests.Load(), srv.connections.Load(), fates)
	if row.server != nil {
		row.server(t, srv, envelopes)
	}
	srv.close()
	if stop != nil {
		stop()
	}
	goleak.VerifyNone(t, before)
}

// offerAll offers each project its pushes: two, or one of logs (3 MiB
// queued, as much again in flight: within the budget). It returns the items
// offered, by "category=…,project=…", and the number of envelopes.
func (h *hostileStage) offerAll(t *testing.T, logs bool) (offered map[string]int64, envelopes int) {
	offered = map[string]int64{}
	pushes := 2
	if logs {
		pushes = 1
	}
	for i, l := range h.lanes {
		project := strconv.Itoa(i + 1)
		for push := range pushes {
			out := h.pushOf(t, logs, i*100+push*10)
			for k := range out {
				envelopes++
				addCounts(offered, project, out[k].Counts)
			}
			l.Offer(t.Context(), out, nil)
		}
	}
	return offered, envelopes
}

// addCounts adds c to m, by "category=…,project=…".
func addCounts(m map[string]int64, project string, c account.Counts) {
	for cat, n := range c {
		if n > 0 {
			m["category="+string(account.Category(cat).Wire())+",project="+project] += n
		}
	}
}

// pushOf is one push: 4 transactions of 20 spans (~8 KiB each), or 1 log
// container of 48 records of ~22 KiB (~1 MiB); ids from first.
func (h *hostileStage) pushOf(t *testing.T, logs bool, first int) []encode.Outgoing {
	if !logs {
		out := make([]encode.Outgoing, 4)
		for i := range out {
			out[i] = hostileTransaction(first + i)
		}
		return out
	}
	records := make([][]byte, 48)
	for i := range records {
		records[i] = hostileLogRecord(first + i)
	}
	out := h.enc.AppendLogs(t.Context(), nil, records, &encode.Arena{})
	require.Len(t, out, 1)
	return out
}

// counted: every item offered is counted, sent or dropped.
func (h *hostileStage) counted(t *testing.T, offered map[string]int64) bool {
	got := byItem(h.fates(t))
	for k, n := range offered {
		if got[k] < n {
			return false
		}
	}
	return true
}

// clientConns is how many connections net/http's client transports hold
// now, open or idle (one read loop each, HTTP/1 or HTTP/2).
func clientConns() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("net/http.(*persistConn).readLoop(")) +
				bytes.Count(buf[:n], []byte("net/http.(*http2ClientConn).readLoop("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// byItem sums fates by "category=…,project=…", whatever the fate.
func byItem(fates map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, n := range fates {
		_, key, _ := strings.Cut(k, ":")
		key, _, _ = strings.Cut(key, ",reason=")
		out[key] += n
	}
	return out
}

// fateOf is the fate of a key of fates: "sent", or the reason.
func fateOf(key string) string {
	if strings.HasPrefix(key, "sent:") {
		return "sent"
	}
	_, reason, _ := strings.Cut(key, ",reason=")
	return reason
}

// bigContainers: the body on the wire is the envelope's 1 MiB
// (uncompressed), and the budget has room for each project's container with
// every copy of it in flight, or its halves, within the project's share
// (4 MiB): the row is about the answer, not the budget's edge.
func bigContainers(c *Config) {
	c.Client.Compression = ""
	c.MaxBytes = 16 << 20
}

// fates are the items sent ("sent:category=…,project=…") and dropped
// ("dropped:category=…,project=…,reason=…"), the encoder's own drops left out.
func (h *hostileStage) fates(t *testing.T) map[string]int64 {
	out := map[string]int64{}
	for prefix, name := range map[string]string{"sent:": "sent_items", "dropped:": "dropped_items"} {
		for k, n := range h.tel.Sums(t, "otelcol_exporter_sentry_"+name) {
			if n > 0 && !strings.Contains(k, "project=encoder") {
				out[prefix+k] = n
			}
		}
	}
	return out
}

// hostileTransaction is a transaction of 20 spans, as an SDK sends one
// (~8 KiB).
func hostileTransaction(id int) encode.Outgoing {
	traceID := randomHex(16)
	var spans strings.Builder
	for i := range 20 {
		if i > 0 {
			spans.WriteByte(',')
		}
		fmt.Fprintf(&spans, `{"span_id":%q,"parent_span_id":%q,"trace_id":%q,"op":"db.sql.query",`+
			`"description":"SELECT o.id, o.status, o.total FROM orders o WHERE o.customer_id = $1 AND o.created_at > $2 ORDER BY o.created_at DESC LIMIT 50",`+
			`"start_timestamp":1764748800.%03d,"timestamp":1764748800.%03d,"status":"ok","data":{"db.system":"postgresql","db.name":"shop","server.address":"10.0.3.17"}}`,
			randomHex(8), randomHex(8), traceID, i, i+3)
	}
	payload := fmt.Sprintf(`{"type":"transaction","transaction":"GET /api/orders","transaction_info":{"source":"route"},`+
		`"start_timestamp":1764748800.000,"timestamp":1764748800.250,"contexts":{"trace":{"trace_id":%q,"span_id":%q,"op":"http.server","status":"ok"}},`+
		`"spans":[%s]}`, traceID, randomHex(8), spans.String())
	return encode.Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{EventID: fmt.Sprintf("%032x", id)},
			Items:  []envelope.Item{{Type: envelope.ItemTypeTransaction, Payload: []byte(payload)}},
		},
		Gate:   gate.GateTransaction,
		Counts: account.Counts{account.CatTransaction: 1, account.CatSpan: 21},
	}
}

// hostileLogRecord is a log record whose body is a dumped payload of ~22 KiB
// (random, so that it does not compress).
func hostileLogRecord(id int) []byte {
	dump := make([]byte, 16<<10)
	_, _ = rand.Read(dump)
	return fmt.Appendf(nil, `{"timestamp":1764748800.%03d,"trace_id":%q,"level":"warn","body":"upstream answered 502: %s",`+
		`"attributes":{"sentry.environment":{"type":"string","value":"production"},"http.route":{"type":"string","value":"/api/orders"},"n":{"type":"integer","value":%d}}}`,
		id%1000, randomHex(16), base64.StdEncoding.EncodeToString(dump), id)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
