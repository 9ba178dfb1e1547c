package translate

import (
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/stacktrace"
)

// What the exporter needs to know about the payloads beyond their bytes: the
// segments of a trace (for the DSC and for attaching log-derived errors to a
// transaction) and the identity of an error event (to merge the same
// exception seen as a span event and as a log record). Everything here is a
// copy: nothing refers to pdata or to the output buffer.

// Segment is one segment of a trace (a transaction, before any continuation).
type Segment struct {
	TraceID [16]byte
	// Name and Source are the transaction name and transaction_info.source.
	Name, Source string
	// Head is set when the segment's root span has no parent: it is the trace's head.
	Head bool
	// Sampled is the root span's W3C sampled flag. OTLP carries trace flags in
	// the low byte of Span.Flags; many SDKs leave that byte 0 (the Go SDK
	// writes only the remote bits), and a span that was exported was sampled,
	// so only a set low byte without the sampled bit reads as false.
	Sampled bool
	// SampleRate is the root span's sample rate as a decimal string, "" when
	// the span carries none: the attribute sentry.sample_rate, else the OTel
	// threshold in the W3C tracestate (ot=th:T gives 1 - T/2^56).
	SampleRate string
	// SampleRand is the trace's sample_rand, valid when HasSampleRand
	// (sampleRand says when it can be known).
	SampleRand    float64
	HasSampleRand bool
	// SpanIDs are the segment's span ids, 8 bytes each, root first. They
	// live in the result's output buffer: valid until Release.
	SpanIDs []byte
	// Request is the segment's "request" object as its transactions carry it
	// (nil when the root is not an HTTP server span) and StatusCode its
	// contexts.response.status_code (0: none), so error events derived from
	// logs in the segment can carry them too. Request lives in the result's
	// output buffer: valid until Release.
	Request    []byte
	StatusCode int
}

// SpanCount is the number of span ids in SpanIDs.
func (s *Segment) SpanCount() int { return len(s.SpanIDs) / 8 }

// SpanID returns the i-th span id of the segment.
func (s *Segment) SpanID(i int) (id [8]byte) {
	copy(id[:], s.SpanIDs[8*i:])
	return id
}

// ErrorRef identifies an error event.
type ErrorRef struct {
	TraceIDBytes [16]byte
	SpanID       [8]byte
	// Linked is set when the trace and span ids come from the input (always
	// for span events; for log records only when the record has both).
	Linked bool
	// FromLog is set for events derived from log records.
	FromLog bool
	// Transaction is the `transaction` member written in the payload, "" when none.
	Transaction string
	// HasStacktrace is set when an exception of the event has stack frames.
	HasStacktrace bool
	// Fingerprint hashes exception.type and exception.message as given in the
	// attributes (before any stack trace parsing).
	Fingerprint uint64
}

// errRef is an ErrorRef whose transaction is still a range of the arena.
type errRef struct {
	traceID [16]byte
	spanID  [8]byte
	linked  bool
	fromLog bool
	tx      span32
	stack   bool
	fp      uint64
}

// maxRefName bounds the names kept for the exporter (Sentry's transaction
// names are at most 200 characters).
const maxRefName = 512

// errRefOf records what identifies the event rendered from in.
func (s *state) errRefOf(in *errInput, typ, msg string, stack bool) errRef {
	r := errRef{
		traceID: in.traceID, spanID: in.spanID, linked: !in.unlinked,
		fromLog: in.mechanism == mechanismLog, stack: stack, fp: fingerprint(typ, msg),
	}
	if !in.tx.empty() {
		r.tx = s.arenaNameCut(in.tx, maxRefName)
	}
	return r
}

func (r *errRef) export(arena string) ErrorRef {
	return ErrorRef{
		TraceIDBytes: r.traceID, SpanID: r.spanID, Linked: r.linked, FromLog: r.fromLog,
		Transaction: r.tx.in(arena), HasStacktrace: r.stack, Fingerprint: r.fp,
	}
}

func fingerprint(typ, msg string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(typ))
	h.Write([]byte{0})
	h.Write([]byte(msg))
	return h.Sum64()
}

// hasFrames reports whether a parsed chain has stack frames.
func hasFrames(excs []stacktrace.Exception, parsed bool) bool {
	if !parsed {
		return false
	}
	for i := range excs {
		if len(excs[i].Frames) > 0 {
			return true
		}
	}
	return false
}

// arenaNameCut copies a name into the string arena, cut to limit bytes.
func (s *state) arenaNameCut(nm name, limit int) span32 {
	a := len(s.arena)
	for _, p := range nm {
		p, _ = cutAt(p, limit)
		limit -= len(p)
		s.arena = append(s.arena, p...)
	}
	return span32{int32(a), int32(len(s.arena))}
}

// segRec is a Segment whose strings are still ranges of the arena.
type segRec struct {
	seg      int32
	nm       span32
	rate     span32
	rand     float64
	hasRand  bool
	sampled  bool
	idA, idB int
	traceID  [16]byte
	source   string
	head     bool
	reqA     int // the request object in the output buffer; reqA == reqB: none
	reqB     int
	code     int
}

// segmentRecs records every segment of the batch, appending the span ids to
// the output buffer; call before the arena is turned into a string.
func (s *state) segmentRecs() []segRec {
	recs := grow(s.sgs, len(s.segs))
	s.sgs = recs
	for i := range s.segs {
		seg := &s.segs[i]
		root := &s.spans[seg.root]
		a := s.out.len()
		for _, m := range s.order[seg.a:seg.b] {
			s.out.b = append(s.out.b, s.spans[m].id[:]...)
		}
		idB := s.out.len()
		req, code, hasReq := s.segmentRequest(int32(i))
		if hasReq {
			s.out.b = append(s.out.b, s.frag.b[req.a:req.b]...)
		}
		sampled, rate := sampling(root.sp)
		rnd, hasRnd := sampleRand(root.traceID, root.sp.Flags(), root.sp.TraceState().AsRaw())
		recs[i] = segRec{
			seg: int32(i), nm: s.arenaNameCut(root.sem.name, maxRefName), rate: s.arenaStr(rate), rand: rnd, hasRand: hasRnd,
			sampled: sampled, idA: a, idB: idB, traceID: root.traceID, source: root.sem.source,
			head: !root.hasParent, reqA: idB, reqB: s.out.len(), code: code,
		}
	}
	return recs
}

func segmentsOut(recs []segRec, out []byte, arena string) []Segment {
	if len(recs) == 0 {
		return nil
	}
	segs := make([]Segment, len(recs))
	for i := range recs {
		r := &recs[i]
		segs[i] = Segment{
			TraceID: r.traceID, Name: r.nm.in(arena), Source: r.source, Head: r.head,
			Sampled: r.sampled, SampleRate: r.rate.in(arena), SampleRand: r.rand, HasSampleRand: r.hasRand, SpanIDs: out[r.idA:r.idB:r.idB],
			StatusCode: r.code,
		}
		if r.reqB > r.reqA {
			segs[i].Request = out[r.reqA:r.reqB:r.reqB]
		}
	}
	return segs
}

// sampling reads the sampled flag and the sample rate of a span.
func sampling(sp ptrace.Span) (bool, string) {
	flags := sp.Flags() & 0xff
	sampled := flags == 0 || flags&1 == 1
	if v, ok := sp.Attributes().Get("sentry.sample_rate"); ok {
		if r, ok := rateOf(v); ok {
			return sampled, formatRate(r)
		}
	}
	if r, ok := thresholdRate(sp.TraceState().AsRaw()); ok {
		return sampled, formatRate(r)
	}
	return sampled, ""
}

func rateOf(v pcommon.Value) (float64, bool) {
	var r float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		r = v.Double()
	case pcommon.ValueTypeInt:
		r = float64(v.Int())
	case pcommon.ValueTypeStr:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
		if err != nil {
			return 0, false
		}
		r = f
	default:
		return 0, false
	}
	return r, r > 0 && r <= 1
}

// thresholdRate reads the OTel rejection threshold from a W3C tracestate
// (`ot=th:<1-14 hex digits>`, trailing zeros omitted) and returns the sampling
// probability 1 - T/2^56.
// https://opentelemetry.io/docs/specs/otel/trace/tracestate-probability-sampling/
func thresholdRate(ts string) (float64, bool) {
	th, ok := otValue(ts, "th:")
	if !ok || th == "" || len(th) > 14 {
		return 0, false
	}
	t, err := strconv.ParseUint(th, 16, 64)
	if err != nil || strings.ToLower(th) != th {
		return 0, false
	}
	t <<= 4 * (14 - len(th))
	r := 1 - float64(t)/(1<<56)
	return r, r > 0
}

// otValue returns the value of the sub-key key ("th:", "rv:") of the OTel
// entry of a W3C tracestate (`ot=th:...;rv:...`): the first one found.
func otValue(ts, key string) (string, bool) {
	for entry := range strings.SplitSeq(ts, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(entry), "ot=")
		if !ok {
			continue
		}
		for sub := range strings.SplitSeq(v, ";") {
			if val, ok := strings.CutPrefix(sub, key); ok {
				return val, true
			}
		}
	}
	return "", false
}

// sampleRand is the trace's sample_rand in [0, 1), when the trace's
// randomness is known: the explicit OTel randomness of the W3C tracestate
// (`ot=rv:<14 hex digits>`), else the rightmost 56 bits of a trace id that the
// W3C random flag (trace flags 0x02) marks random. From the 56-bit randomness
// R it is 1 - (R+1)/2^56, so that sample_rand < sample_rate exactly when OTel's
// threshold sampling keeps the trace (R >= T, sample_rate = 1 - T/2^56); only
// R's top 53 bits are used, which float64 holds exactly. Otherwise the trace's
// randomness is unknown and sample_rand is left out: Relay then derives its
// own from the trace id.
// https://opentelemetry.io/docs/specs/otel/trace/tracestate-probability-sampling/
func sampleRand(traceID [16]byte, flags uint32, ts string) (float64, bool) {
	var r uint64
	if rv, ok := tracestateRV(ts); ok {
		r = rv
	} else if flags&0x02 != 0 {
		for _, b := range traceID[9:] {
			r = r<<8 | uint64(b)
		}
	} else {
		return 0, false
	}
	r >>= 3
	return float64((1<<53)-1-r) / (1 << 53), true
}

// tracestateRV reads the explicit randomness `ot=rv:<14 hex digits>`.
func tracestateRV(ts string) (uint64, bool) {
	if !strings.Contains(ts, "rv:") {
		return 0, false
	}
	rv, ok := otValue(ts, "rv:")
	if !ok || len(rv) != 14 || strings.ToLower(rv) != rv {
		return 0, false
	}
	r, err := strconv.ParseUint(rv, 16, 64)
	return r, err == nil
}

// formatRate writes a rate as sentry-go's DSC does (strconv 'f', -1).
func formatRate(r float64) string {
	if math.IsNaN(r) {
		return ""
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}
