package send

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.uber.org/zap"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/account/accounttest"
	"github.com/otel-sentry/sentryexporter/internal/encode"
	"github.com/otel-sentry/sentryexporter/internal/gate"
	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// heapCover is the stated factor: the heap the send stage grows by while
// Sentry misbehaves is at most heapCover times what the memory budget says
// it holds, what the in-process servers hold (their connections' buffers)
// included. The budget counts every copy of a body in flight as large as
// the envelope (incompressible data); these compress to about half, so the
// heap measures about half the budget (docs/memory.md).
const heapCover = 1.0

// heapRounds is how many envelopes of each kind each project is offered:
// enough to fill the budget's share of the 413 and 5xx projects, few enough
// that requests in flight are much of what is held.
const heapRounds = 2

// heapAnswers are the kinds of answer the heap test drives, one per project
// in turn.
var heapAnswers = []string{"hung", "slow", "split", "5xx"}

// TestHeapWithinBudget drives the send stage of 12 projects with envelopes
// near Relay's size limits (log containers of 100 records near 2 MiB, error
// events near 1 MiB) under each kind of answer that keeps bytes held: hung
// (never answered), slow to read (16 KiB/s), 413 then split (the halves
// hang), and 5xx (waiting to retry), until the budget is nearly full. Once
// the stage is still,
// the heap's growth (after a GC) must be within heapCover of what the
// budget holds: a byte held and not reserved fails it.
func TestHeapWithinBudget(t *testing.T) {
	const projects, maxBytes = 12, 96 << 20
	srv := newMisbehavingSentry(t)
	tel := accounttest.New(t)
	stage, lanes := newHeapStage(t, srv, tel, projects, maxBytes)
	enc := encode.New(nil, "public", account.NewAccountant(tel.Builder, "x", nil))
	srv.splitAbove = compressedSize(t, largeLogs(t, enc, 0)) * 3 / 4

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for round := range heapRounds {
		for i, l := range lanes {
			l.Offer(t.Context(), largeLogs(t, enc, round*projects+i), nil)
			l.Offer(t.Context(), []encode.Outgoing{largeEvent(round*projects + i)}, nil)
		}
	}
	srv.awaitStill(t)
	runtime.GC()
	runtime.ReadMemStats(&after)

	growth := float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
	held := float64(stage.mem.Held())
	var inFlight int64
	for _, l := range lanes {
		inFlight += l.InFlightBytes()
	}
	t.Logf("heap growth %.1f MiB, budget holds %.1f MiB (%.1f MiB of it for requests in flight, %d requests seen), heap / budget %.2f (stated factor %.2f)",
		growth/(1<<20), held/(1<<20), float64(inFlight)/(1<<20), srv.requests.Load(), growth/held, heapCover)
	require.LessOrEqual(t, held, float64(maxBytes), "the budget is hard")
	require.Positive(t, inFlight, "requests in flight")
	if growth > held*heapCover {
		t.Errorf("the heap grew by %.1f MiB, %.2f x the %.1f MiB the budget holds (stated factor %.2f): bytes held without being reserved",
			growth/(1<<20), growth/held, held/(1<<20), heapCover)
	}
}

// newHeapStage starts a stage of projects lanes on srv, within maxBytes,
// zstd-compressing; its requests hang until the test ends, and its 5xx wait
// an hour to retry. Shut down, and srv released, when the test ends.
func newHeapStage(t *testing.T, srv *misbehavingSentry, tel *accounttest.Telemetry, projects int, maxBytes int64) (*Stage, []*Lane) {
	cfg := testConfig()
	cfg.Client.Timeout = 0 // a hang lasts until the test ends
	cfg.Client.Compression = configcompression.TypeZstd
	cfg.Retry.InitialInterval, cfg.Retry.MaxElapsedTime = time.Hour, 2*time.Hour // 5xx: waiting to retry
	cfg.MaxBytes, cfg.MaxProjects = maxBytes, projects
	stage := New(cfg, Settings{
		Telemetry: componenttest.NewNopTelemetrySettings(), Logger: zap.NewNop(), UserAgent: "test",
	})
	lanes := make([]*Lane, projects)
	for i := range lanes {
		id := strconv.Itoa(i)
		l, err := stage.NewLane(LaneOptions{
			URL: srv.URL + "/api/" + id + "/envelope/", Auth: "Sentry sentry_key=public",
			Limits: &ratelimit.State{}, Acct: account.NewAccountant(tel.Builder, id, nil),
		})
		require.NoError(t, err)
		lanes[i] = l
	}
	require.NoError(t, stage.Start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() {
		srv.release()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Second)
		defer cancel()
		stage.BeginShutdown()
		stage.cancelRun()
		stage.Shutdown(ctx)
	})
	return stage, lanes
}

// misbehavingSentry answers project i as heapAnswers[i%4] says.
type misbehavingSentry struct {
	*httptest.Server
	splitAbove int64 // the 413 project's: a request larger is answered 413
	requests   atomic.Int64
	last       atomic.Int64 // unix nanos of the last request's arrival
	done       chan struct{}
	once       sync.Once
}

func newMisbehavingSentry(t *testing.T) *misbehavingSentry {
	s := &misbehavingSentry{done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(s.release)
	return s
}

func (s *misbehavingSentry) release() { s.once.Do(func() { close(s.done) }) }

func (s *misbehavingSentry) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.last.Store(time.Now().UnixNano())
	project, _ := strconv.Atoi(strings.Split(r.URL.Path, "/")[2])
	switch heapAnswers[project%len(heapAnswers)] {
	case "hung":
		<-s.done
	case "slow":
		s.readSlowly(r.Body)
	case "split":
		if r.ContentLength > s.splitAbove {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		<-s.done // the halves hang
	case "5xx":
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

// readSlowly reads body at 16 KiB/s until it ends or the test does.
func (s *misbehavingSentry) readSlowly(body io.Reader) {
	buf := make([]byte, 4<<10)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		if _, err := io.ReadFull(body, buf); err != nil {
			return
		}
	}
}

// awaitStill waits until no request came for a second (the queued
// envelopes of the hung projects wait behind their one probe, the 5xx ones
// wait to retry in an hour), for at most a minute.
func (s *misbehavingSentry) awaitStill(t *testing.T) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		if time.Since(time.Unix(0, s.last.Load())) > time.Second {
			return
		}
	}
	t.Log("requests still coming after a minute: measuring anyway")
}

// largeLogs is one log container of 100 records near Relay's per-container
// 2 MiB: each a request log with an id, a digest and a stack trace of its
// own, little of it repeated, so it compresses as badly as real ones can.
func largeLogs(t *testing.T, enc *encode.Encoder, n int) []encode.Outgoing {
	items := make([][]byte, 100)
	for i := range items {
		items[i] = fmt.Appendf(nil, `{"timestamp":1764700000.%06d,"trace_id":"%032x","level":"error","body":"request failed: %s","attributes":{"stack":{"type":"string","value":"%s"}}}`,
			i, n*100+i, digest(n, i, 8), stackTrace(n, i, 19<<10))
	}
	out := enc.AppendLogs(t.Context(), nil, items, &encode.Arena{})
	require.Len(t, out, 1)
	return out
}

// largeEvent is an error event near Relay's 1 MiB event limit, its stack
// trace most of it.
func largeEvent(n int) encode.Outgoing {
	payload := fmt.Appendf(nil, `{"event_id":"%032x","level":"error","exception":{"values":[{"type":"RuntimeError","value":"%s","stacktrace":{"frames":"%s"}}]}}`,
		n, digest(n, 0, 4), stackTrace(n, -1, 900<<10))
	return encode.Outgoing{
		Env: envelope.Envelope{
			Header: envelope.Header{EventID: fmt.Sprintf("%032x", n)},
			Items:  []envelope.Item{{Type: envelope.ItemTypeEvent, Payload: payload}},
		},
		Gate:   gate.GateError,
		Counts: account.Counts{account.CatError: 1},
	}
}

// stackTrace is about size bytes of frames, each with a hashed module path
// and an address, as a JVM or a minified JavaScript bundle writes them.
func stackTrace(n, i, size int) string {
	var b strings.Builder
	for f := 0; b.Len() < size; f++ {
		fmt.Fprintf(&b, `  at com.example.svc%d.%s.handle(Handler.java:%d) [0x%s]\n`, f%7, digest(n, i*1000+f, 6), 100+f, digest(i, f, 8))
	}
	return b.String()
}

func digest(a, b, n int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d", a, b))
	return hex.EncodeToString(sum[:n])
}

// compressedSize is what out's envelope weighs on the wire, zstd as the
// stage sends it.
func compressedSize(t *testing.T, out []encode.Outgoing) int64 {
	t.Helper()
	raw := out[0].Env.AppendTo(nil)
	return int64(len(NewCompressors(0).Compress(EncodingZstd, raw, nil)))
}
