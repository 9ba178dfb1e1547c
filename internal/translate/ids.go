package translate

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
)

// Id repair: Relay rejects ids that are not exactly 32 (trace, event) or 16
// (span) hex digits, and removes all-zero ones. Every id written here comes from
// the input when it is non-zero, else from Options.NewID; a generated id that is
// all zero (only an injected source can do that) gets its last byte set to 1.

func (s *state) newTraceID() [16]byte {
	id := s.t.o.NewID()
	if id == ([16]byte{}) {
		id[15] = 1
	}
	return id
}

func (s *state) newSpanID() (id [8]byte) {
	full := s.t.o.NewID()
	copy(id[:], full[:8])
	if id == ([8]byte{}) {
		id[7] = 1
	}
	return id
}

// eventID appends a fresh event id to the string arena and returns its range.
func (s *state) eventID() span32 {
	id := s.newTraceID()
	return s.arenaHex(id[:])
}

// An event's id is derived from what identifies it in the input, so that a
// resend of the same span or log record (a persistent queue's batch sent
// again after a crash, an SDK's retried export) gets the same event_id and
// Sentry keeps one (docs/durability.md). What has nothing that identifies
// it gets a fresh id.

// eventSeed is what identifies an event in its input.
type eventSeed struct {
	kind     byte     // what the event is (seedTransaction, seedSpanError, seedLogError)
	trace    [16]byte // its trace id as received (all zero: none)
	span     [8]byte  // its span id as received (the transaction's head; all zero: none)
	ts, n    uint64   // a time and an ordinal within the span or record
	typ, msg string   // an error's exception type and message
	none     bool     // nothing identifies it: a fresh id
}

const (
	seedTransaction byte = 't'
	seedSpanError   byte = 'e'
	seedLogError    byte = 'l'
)

// derivedEventID appends the event id of seed to the string arena and
// returns its range: the first 16 bytes of SHA-256 over the seed.
func (s *state) derivedEventID(seed *eventSeed) span32 {
	if seed.none {
		return s.eventID()
	}
	b := s.idBuf[:0]
	b = append(b, seed.kind)
	b = append(b, seed.trace[:]...)
	b = append(b, seed.span[:]...)
	b = binary.BigEndian.AppendUint64(b, seed.ts)
	b = binary.BigEndian.AppendUint64(b, seed.n)
	b = append(b, seed.typ...)
	b = append(b, 0)
	b = append(b, seed.msg...)
	s.idBuf = b
	sum := sha256.Sum256(b)
	return s.arenaHex(sum[:16])
}

// span32 is a range of the string arena, turned into a string at the end of a call.
type span32 struct{ a, b int32 }

func (s *state) arenaHex(id []byte) span32 {
	a := len(s.arena)
	s.arena = jsonstr.AppendHex(s.arena, id)
	return span32{int32(a), int32(len(s.arena))}
}

func (s *state) arenaStr(str string) span32 {
	a := len(s.arena)
	s.arena = append(s.arena, str...)
	return span32{int32(a), int32(len(s.arena))}
}

// arenaBytes returns the bytes of r while the arena is still being written.
func (s *state) arenaBytes(r span32) []byte { return s.arena[r.a:r.b] }

func (r span32) in(str string) string { return str[r.a:r.b] }

// batchIDs repairs the trace and span ids of one batch's spans in input
// order (segments.go says the rules): every all-zero trace id becomes the
// one generated trace id the batch's such spans share, an all-zero span id a
// generated one. collect and the skip path repair through it, so that they
// call NewID alike.
type batchIDs struct {
	zeroTrace [16]byte
	haveZero  bool
}

func (b *batchIDs) traceID(s *state, id [16]byte) [16]byte {
	if id != ([16]byte{}) {
		return id
	}
	return b.zero(s)
}

// zero is the batch's generated trace id, drawn at its first use.
func (b *batchIDs) zero(s *state) [16]byte {
	if !b.haveZero {
		b.zeroTrace, b.haveZero = s.newTraceID(), true
	}
	return b.zeroTrace
}

func (*batchIDs) spanID(s *state, id [8]byte) [8]byte {
	if id != ([8]byte{}) {
		return id
	}
	return s.newSpanID()
}
