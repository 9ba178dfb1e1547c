package sentryexporter

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/sendtest"
)

// What a hostile sender can put in a request, each row against the built
// exporter (real TCP to a fake Sentry): a small request whose content the
// exporter once multiplied (a profile naming long names at many lines, a
// stack trace of endless small exceptions, a push of huge items sizing the
// next push's buffer, projects holding nothing taking envelopes of any
// size), and requests near the translators' limits (attributes, nesting,
// exception events). Each row measures the heap while its pushes run: its
// peak may pass what it held at the start by at most twice (GOGC=100) the
// memory budget and the row's allowance for what its requests are
// (hostileSenderOverhead, heapFor).

// hostileBudget is the rows' memory.max_bytes.
const hostileBudget = 16 << 20

// hostileSenderOverhead is what a row holds beyond the budget whatever it
// sends: each project's HTTP client and zstd encoder, the pushes' pdata
// while they are translated, the fake Sentry's reads.
const hostileSenderOverhead = 24 << 20

type hostileSenderRow struct {
	name string
	// configure adjusts the harness (beyond the hostile budget) and its Sentry.
	configure func(c *Config, s *fakeSentry)
	// requests builds the row's requests and returns what sends them, which
	// runs while the heap is sampled.
	requests func(t *testing.T) (push func(h *harness))
	// heapFor is what the row's pushes may make the exporter hold beyond
	// the budget and hostileSenderOverhead.
	heapFor int64
	// heldOver is how far past its maximum the budget may be: a project
	// within its share takes its envelope when all else is in flight.
	heldOver int64
	// check, when set, runs once the pushes are done, before shutdown.
	check func(t *testing.T, h *harness)
}

// TestHostileSenders runs each row against its own exporter and fails when
// the heap's peak passes the budget and what the row's requests may hold.
func TestHostileSenders(t *testing.T) {
	for _, row := range hostileSenderRows() {
		t.Run(row.name, func(t *testing.T) { runHostileSender(t, row) })
	}
}

func hostileSenderRows() []hostileSenderRow {
	return []hostileSenderRow{
		hostileProfileRow(), hostileStackTraceRow(), hostileBufferHintRow(),
		hostileEmptyProjectsRow(), hostileNearLimitsRow(),
	}
}

func hostileProfileRow() hostileSenderRow {
	return hostileSenderRow{
		// The profile: ~130 KB, one location of 256 lines, each
		// naming one function whose name and path are 64 KiB each, in 3
		// samples (a window never cut). Eight such requests, four at a
		// time. Rendered whole, each chunk was 48 MiB.
		name: "a profile naming 64 KiB names at 256 lines",
		requests: func(t *testing.T) func(*harness) {
			pd := hostileProfile("evil", 256, 3)
			return func(h *harness) {
				concurrently(t, 8, 4, func() error { return h.profiles.ConsumeProfiles(t.Context(), pd) })
			}
		},
		check: func(t *testing.T, h *harness) {
			h.exp.settle()
			assert.Positive(t, h.sent("profile_chunk"), "the chunks, their names cut, are sent")
		},
	}
}

func hostileStackTraceRow() hostileSenderRow {
	return hostileSenderRow{
		// A span's exception.stacktrace of 1 MiB of one-frame Python
		// tracebacks, eight requests four at a time; each error event
		// keeps 16 exceptions.
		name: "1 MiB stack traces of small exceptions",
		configure: func(c *Config, _ *fakeSentry) {
			c.ErrorEvents.DedupeWindow = 0 // no event waits for a counterpart: each is sent at once
		},
		requests: func(t *testing.T) func(*harness) {
			td := spanWithException("evil", strings.Repeat("Traceback (most recent call last):\n  File \"/a.py\", line 1, in f\nE: x\n\n", (1<<20)/70), 1)
			return func(h *harness) {
				concurrently(t, 8, 4, func() error { return h.traces.ConsumeTraces(t.Context(), td) })
			}
		},
		check: func(t *testing.T, h *harness) {
			h.exp.settle()
			assert.Equal(t, int64(8), h.sent("error")+h.droppedAll("error"), "every error event sent or counted")
			assert.Positive(t, h.sent("error"))
		},
	}
}

func hostileBufferHintRow() hostileSenderRow {
	return hostileSenderRow{
		// One span with a thousand 16 KiB attributes (~64 KiB written),
		// then 4,000 small spans: their buffer is sized from the push
		// before.
		name: "a push of huge spans, then one of many small ones",
		requests: func(t *testing.T) func(*harness) {
			huge := ptrace.NewTraces()
			sp := newSpan(huge, "evil", 1)
			for i := range 1000 {
				sp.Attributes().PutStr(fmt.Sprint("attr.", i), strings.Repeat("x", 16<<10))
			}
			small := ptrace.NewTraces()
			for i := range 4000 {
				newSpan(small, "evil", i+2)
			}
			return func(h *harness) {
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), huge))
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), small))
			}
		},
		heapFor: 32 << 20, // the huge span's output buffer, kept for reuse (bufpool)
	}
}

func hostileEmptyProjectsRow() hostileSenderRow {
	// 100 projects holding nothing, each sent ~1 MiB of logs (~750
	// KiB compressed) while Sentry hangs: each project's share is
	// 164 KiB, and the budget holds no more than its maximum. (The
	// stage's room check lets a project holding nothing past its
	// share only where the total has room; TestMakeRoom in
	// internal/send has the case where all else is in flight.)
	hang := make(chan struct{})
	return hostileSenderRow{
		name: "projects holding nothing sent large envelopes while Sentry hangs",
		configure: func(c *Config, s *fakeSentry) {
			c.DSN = ""
			c.Routing.DSNs = map[string]configopaque.String{}
			for i := range 100 {
				c.Routing.DSNs[fmt.Sprint("svc", i)] = configopaque.String(s.dsnFor(fmt.Sprint(i + 1)))
			}
			s.setRespond(func(*envelope.Envelope) answer { <-hang; return answer{status: 200} })
		},
		requests: func(t *testing.T) func(*harness) {
			return func(h *harness) {
				// Sentry hangs: return once offered. Each request is built
				// in turn, so the test holds one at a time.
				raw := h.logs.(settlingLogs).Logs
				for i := range 100 {
					require.NoError(t, raw.ConsumeLogs(t.Context(), randomLogs(fmt.Sprint("svc", i), 100, 10<<10)))
				}
			}
		},
		check: func(t *testing.T, h *harness) {
			assert.LessOrEqual(t, h.exp.stage.Memory().Held(), int64(hostileBudget), "held within the budget")
			close(hang)
			h.exp.settle()
			assert.Positive(t, h.dropped("log_item", "queue_overflow"), "what did not fit was dropped, counted")
		},
	}
}

func hostileNearLimitsRow() hostileSenderRow {
	return hostileSenderRow{
		// Near the translators' limits: a log record with 100,000
		// attributes, a body nested 10,000 deep, a span with 500
		// exception events.
		name: "huge attribute counts, deep nesting, many exception events",
		requests: func(t *testing.T) func(*harness) {
			ld := bigLogs("evil", 1, 10)
			lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			attrs := make(map[string]any, 100_000)
			for i := range 100_000 {
				attrs[fmt.Sprint("a", i)] = "v"
			}
			require.NoError(t, lr.Attributes().FromRaw(attrs))
			m := lr.Body().SetEmptyMap()
			for range 10_000 {
				m = m.PutEmptyMap("k")
			}
			td := spanWithException("evil", "Traceback (most recent call last):\n  File \"/a.py\", line 1, in f\nE: x\n", 500)
			return func(h *harness) {
				require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
			}
		},
	}
}

func runHostileSender(t *testing.T, row hostileSenderRow) {
	sentry := newFakeSentry(t)
	h := newHarnessWith(t, sentry, func(c *Config) {
		c.Memory.MaxBytes = hostileBudget
		if row.configure != nil {
			row.configure(c, sentry)
		}
	})
	push := row.requests(t)
	peak := sendtest.SampleMemory(h.exp.stage.Memory())
	push(h)
	held, p, b := peak()
	if row.check != nil {
		row.check(t, h)
	}
	h.shutdown()
	t.Logf("heap %d MiB at the start, peak %d MiB: %+d MiB; budget held at most %d KiB", b>>20, p>>20, (p-b)>>20, held>>10)
	assert.LessOrEqual(t, held, int64(hostileBudget)+row.heldOver, "the budget held within its maximum")
	assert.LessOrEqual(t, p-b, 2*(int64(hostileBudget)+hostileSenderOverhead)+row.heapFor,
		"the heap's growth within the budget and what the row's requests may hold")
}

// concurrently runs push n times, at most at a time at once.
func concurrently(t *testing.T, n, at int, push func() error) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, at)
	for range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			assert.NoError(t, push())
		})
	}
	wg.Wait()
}

// hostileProfile is profileOf's with its one location made of lines lines,
// each naming one function whose name and path are 64 KiB each.
func hostileProfile(svc string, lines, samples int) pprofile.Profiles {
	pd := profileOf(svc, time.Now(), samples)
	d := pd.Dictionary()
	d.StringTable().SetAt(3, "main."+strings.Repeat("x", 64<<10))
	d.StringTable().SetAt(4, "/"+strings.Repeat("y", 64<<10)+".go")
	loc := d.LocationTable().At(1)
	for i := 1; i < lines; i++ {
		l := loc.Lines().AppendEmpty()
		l.SetFunctionIndex(1)
		l.SetLine(int64(10 + i))
	}
	return pd
}

// newSpan adds a server span of its own trace (id i) for svc.
func newSpan(td ptrace.Traces, svc string, i int) ptrace.Span {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", svc)
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "python")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), byte(i >> 16), 1})
	sp.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), byte(i >> 16), 1})
	sp.SetName("GET /")
	sp.SetKind(ptrace.SpanKindServer)
	now := time.Now()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
	return sp
}

// spanWithException is one span of svc with events exception events, each
// with stack as its exception.stacktrace.
func spanWithException(svc, stack string, events int) ptrace.Traces {
	td := ptrace.NewTraces()
	sp := newSpan(td, svc, 1)
	sp.Status().SetCode(ptrace.StatusCodeError)
	for range events {
		ev := sp.Events().AppendEmpty()
		ev.SetName("exception")
		ev.SetTimestamp(sp.StartTimestamp())
		ev.Attributes().PutStr("exception.type", "E")
		ev.Attributes().PutStr("exception.message", "x")
		ev.Attributes().PutStr("exception.stacktrace", stack)
	}
	return td
}

// randomLogs is n log records of svc, each with a body of size random
// letters, which compress to three quarters of their size.
func randomLogs(svc string, n, size int) plog.Logs {
	ld := bigLogs(svc, n, 0)
	rng := rand.New(rand.NewPCG(uint64(len(svc)), uint64(n)))
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, size)
	for _, lr := range ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		lr.Body().SetStr(string(b))
	}
	return ld
}

// bigLogs is n log records of svc, each with a body of size bytes.
func bigLogs(svc string, n, size int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", svc)
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	body := strings.Repeat("b", size)
	for range n {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		lr.Body().SetStr(body)
	}
	return ld
}
