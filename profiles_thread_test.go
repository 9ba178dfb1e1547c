package sentryexporter

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/profiletest"
)

// nodeTraffic is one node's containerised services as they reach the
// exporter: each service's SDK exports its ended spans every
// exportInterval (the batch span processor's default), each at its own
// phase, and the eBPF profiler on the node exports every service's samples
// every exportInterval too (its default report interval), at phase 0.
// Each service serves rate requests a second for `requests` seconds, on
// four OS threads in turn: a SERVER root of 100 ms with a db child from 10
// to 60 ms, sampled at 20 Hz (25 ms into it, in the child, and 75 ms, in the
// root), each sample linked to the span it ran in. delay holds every traces
// export that long before the exporter gets it: what a wait in assembly
// for the samples' links would add.
type nodeTraffic struct {
	services, rate int
	requests       time.Duration
	delay          time.Duration
}

const exportInterval = 5 * time.Second

// request is one request of the simulation: its service, trace number, start and OS thread.
type simRequest struct {
	service, trace int
	at             time.Time
	tid            int64
}

// threadRun is what one run of nodeTraffic stored: per trace, the OS
// thread that ran it and the transaction's thread.id, the transactions'
// and chunks' payloads, and the most spans held back at once by delay.
type threadRun struct {
	tid           map[string]string
	named         map[string]any
	txs, chunks   [][]byte
	peakHeldSpans int
	peakHeldBytes int
}

// simEvent is one delivery of the simulation, at its instant; key orders
// those of one instant (profiles first).
type simEvent struct {
	at  time.Time
	do  func()
	key int
}

// heldTally counts the spans and bytes delay holds back, and their peaks.
type heldTally struct{ spans, bytes, peakSpans, peakBytes int }

func (n nodeTraffic) run(t *testing.T) threadRun {
	h := newHarness(t, func(c *Config) { noDedupe(c); c.Profiles.AllProcessesProfiledBy = "container.id" })
	start := time.Now()
	reqs := n.simRequests(start)
	end := start.Add(n.requests + exportInterval)
	var held heldTally
	events := n.sdkExports(t, h, reqs, start, end, &held)
	for at := start.Add(exportInterval); !at.After(end.Add(exportInterval)); at = at.Add(exportInterval) {
		pd := nodeProfiles(n.services, reqs, at.Add(-exportInterval), at)
		events = append(events, simEvent{at: at, key: 0, do: func() {
			if pd.SampleCount() > 0 {
				h.consumeProfiles(pd)
			}
		}})
	}
	slices.SortStableFunc(events, func(a, b simEvent) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.key - b.key
	})
	for _, e := range events {
		time.Sleep(time.Until(e.at))
		e.do()
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	return collectThreadRun(t, h, reqs, held)
}

// simRequests are every service's requests from start.
func (n nodeTraffic) simRequests(start time.Time) []simRequest {
	var reqs []simRequest
	for s := range n.services {
		for k := range int(n.requests/time.Second) * n.rate {
			reqs = append(reqs, simRequest{
				service: s, trace: s*100_000 + k, tid: int64(1000*(s+1) + k%4),
				at: start.Add(time.Duration(k) * time.Second / time.Duration(n.rate)),
			})
		}
	}
	return reqs
}

// sdkExports are each service's SDK exports until end, each of the requests
// ended since its last, delivered delay later (held counts what waits).
func (n nodeTraffic) sdkExports(t *testing.T, h *harness, reqs []simRequest, start, end time.Time, held *heldTally) []simEvent {
	var events []simEvent
	for s := range n.services {
		from := start
		for at := start.Add(time.Duration(s+1) * exportInterval / time.Duration(n.services+1)); from.Before(end); at = at.Add(exportInterval) {
			var batch []simRequest
			for _, r := range reqs {
				if ended := r.at.Add(100 * time.Millisecond); r.service == s && !ended.Before(from) && ended.Before(at) {
					batch = append(batch, r)
				}
			}
			from = at
			if len(batch) == 0 {
				continue
			}
			td := nodeTraces(s, batch)
			spans, size := td.SpanCount(), (&ptrace.ProtoMarshaler{}).TracesSize(td)
			if n.delay > 0 {
				events = append(events, simEvent{at: at, key: 1, do: func() {
					held.spans, held.bytes = held.spans+spans, held.bytes+size
					held.peakSpans, held.peakBytes = max(held.peakSpans, held.spans), max(held.peakBytes, held.bytes)
				}})
			}
			events = append(events, simEvent{at: at.Add(n.delay), key: 2, do: func() {
				if n.delay > 0 {
					held.spans, held.bytes = held.spans-spans, held.bytes-size
				}
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
			}})
		}
	}
	return events
}

// collectThreadRun reads what the fake Sentry stored.
func collectThreadRun(t *testing.T, h *harness, reqs []simRequest, held heldTally) threadRun {
	out := threadRun{tid: map[string]string{}, named: map[string]any{}, peakHeldSpans: held.peakSpans, peakHeldBytes: held.peakBytes}
	for _, r := range reqs {
		out.tid[traceID(r.trace).String()] = fmt.Sprint(r.tid)
	}
	for trace, p := range h.sentry.txProfiles(t) {
		out.named[trace] = p[1]
	}
	for _, r := range h.sentry.envelopes() {
		for _, it := range r.env.Items {
			switch it.Type {
			case envelope.ItemTypeTransaction:
				out.txs = append(out.txs, it.Payload)
			case envelope.ItemTypeProfileChunk:
				out.chunks = append(out.chunks, it.Payload)
			}
		}
	}
	return out
}

// nodeTraces is one SDK export of service s: its requests' root and db spans.
func nodeTraces(s int, batch []simRequest) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	a := rs.Resource().Attributes()
	a.PutStr("service.name", fmt.Sprintf("svc-%d", s))
	a.PutStr("telemetry.sdk.language", "go")
	a.PutStr("container.id", fmt.Sprintf("c%063d", s))
	ss := rs.ScopeSpans().AppendEmpty()
	for _, r := range batch {
		ts := func(ms int) pcommon.Timestamp {
			return pcommon.NewTimestampFromTime(r.at.Add(time.Duration(ms) * time.Millisecond))
		}
		root := ss.Spans().AppendEmpty()
		root.SetTraceID(traceID(r.trace))
		root.SetSpanID(spanID(r.trace, 0))
		root.SetName("GET /items/{id}")
		root.SetKind(ptrace.SpanKindServer)
		root.SetStartTimestamp(ts(0))
		root.SetEndTimestamp(ts(100))
		db := ss.Spans().AppendEmpty()
		db.SetTraceID(traceID(r.trace))
		db.SetSpanID(spanID(r.trace, 1))
		db.SetParentSpanID(spanID(r.trace, 0))
		db.SetName("SELECT items")
		db.SetKind(ptrace.SpanKindClient)
		db.SetStartTimestamp(ts(10))
		db.SetEndTimestamp(ts(60))
	}
	return td
}

// nodeProfiles is the eBPF profiler's export of [from, to): per service, a
// resource of its container and host pid, the samples taken then.
func nodeProfiles(services int, reqs []simRequest, from, to time.Time) pprofile.Profiles {
	b := profiletest.NewDict()
	d := b.Profiles.Dictionary()
	fn := d.FunctionTable().AppendEmpty()
	fn.SetNameStrindex(b.Str("github.com/acme/shop/items.(*Handler).Get"))
	loc := d.LocationTable().AppendEmpty()
	loc.AttributeIndices().Append(b.Attr("profile.frame.type", "go"))
	loc.Lines().AppendEmpty().SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
	st := b.Stack(int32(d.LocationTable().Len() - 1))
	for s := range services {
		rp := b.Profiles.ResourceProfiles().AppendEmpty()
		a := rp.Resource().Attributes()
		a.PutStr("container.id", fmt.Sprintf("c%063d", s))
		a.PutInt("process.pid", int64(20_000+s))
		a.PutStr("process.executable.name", "server")
		a.PutStr("host.name", "node-1")
		p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
		p.SampleType().SetTypeStrindex(b.Str("samples"))
		for _, r := range reqs {
			for _, smp := range [...]struct {
				ms   int
				span int
			}{{25, 1}, {75, 0}} {
				at := r.at.Add(time.Duration(smp.ms) * time.Millisecond)
				if r.service != s || at.Before(from) || !at.Before(to) {
					continue
				}
				lk := d.LinkTable().AppendEmpty()
				lk.SetTraceID(traceID(r.trace))
				lk.SetSpanID(spanID(r.trace, smp.span))
				x := p.Samples().AppendEmpty()
				x.SetStackIndex(st)
				x.SetLinkIndex(int32(d.LinkTable().Len() - 1))
				x.AttributeIndices().Append(b.Attr("thread.id", r.tid))
				x.TimestampsUnixNano().Append(uint64(at.UnixNano()))
			}
		}
	}
	return b.Profiles
}

// tally is how many transactions named their OS thread, another, or none.
func (r threadRun) tally() (right, wrong, none int) {
	for trace, tid := range r.tid {
		switch r.named[trace] {
		case nil:
			none++
		case tid:
			right++
		default:
			wrong++
		}
	}
	return right, wrong, none
}

// TestThreadEvidenceWait: a transaction names its OS thread (the chunk's
// thread_id string) when its samples' links reached the exporter before it
// was translated, and never another thread. With the SDK and the eBPF
// profiler both exporting every 5 s, that is only part of the
// transactions; holding traces one report interval and a request longer
// names every one (docs/mapping.md weighs the cost). For each one named,
// Sentry's rule (profiletest.TransactionSamples) takes only samples of its
// thread, including every sample linked to it.
func TestThreadEvidenceWait(t *testing.T) {
	traffic := nodeTraffic{services: 2, rate: 10, requests: 10 * time.Second}
	var runs [2]threadRun
	for i, delay := range []time.Duration{0, exportInterval + 200*time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			traffic.delay = delay
			runs[i] = traffic.run(t)
		})
		right, wrong, none := runs[i].tally()
		t.Logf("delay %v: %d of %d transactions name their OS thread, %d another, %d none; at most %d spans (%d protobuf bytes) held back",
			delay, right, right+wrong+none, wrong, none, runs[i].peakHeldSpans, runs[i].peakHeldBytes)
		assert.Zero(t, wrong, "never another thread")
	}
	right0, _, none0 := runs[0].tally()
	right1, _, none1 := runs[1].tally()
	assert.Positive(t, none0, "without a wait, some transactions are translated before their samples arrive")
	assert.Positive(t, right0)
	assert.Zero(t, none1, "a wait of one report interval and a request names every one")
	assert.Equal(t, len(runs[1].tid), right1)

	r := runs[1]
	for _, tx := range r.txs {
		var ev struct {
			Contexts struct {
				Trace struct {
					TraceID string `json:"trace_id"`
				} `json:"trace"`
			} `json:"contexts"`
		}
		require.NoError(t, json.Unmarshal(tx, &ev))
		got, err := profiletest.TransactionSamples(tx, r.chunks)
		require.NoError(t, err)
		require.NotEmpty(t, got, "Sentry's rule takes samples of a transaction naming profiler and thread")
		for _, s := range got {
			require.Equal(t, r.tid[ev.Contexts.Trace.TraceID], s.ThreadID, "only samples of its thread")
		}
		start := txStart(t, tx)
		assert.True(t, slices.ContainsFunc(got, func(s profiletest.ChunkSample) bool { return math.Abs(s.Timestamp-start-0.025) < 1e-6 }),
			"among them the sample linked to its db span")
	}
}

func txStart(t *testing.T, tx []byte) float64 {
	var ev struct {
		Start float64 `json:"start_timestamp"`
	}
	require.NoError(t, json.Unmarshal(tx, &ev))
	return ev.Start
}
