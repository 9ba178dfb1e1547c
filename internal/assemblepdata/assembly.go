package assemblepdata

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otel-sentry/sentryexporter/internal/assemble"
)

// Owner is whom spans are held for (the exporter's project). It learns of
// the bytes held for it and of its fragments; it is a map key of the
// batches this package returns.
type Owner interface {
	comparable
	// HoldAssembled is told that n more bytes of its spans are held (fewer
	// when n is negative).
	HoldAssembled(n int64)
	// CountFragments is told that n of its spans go out without their local
	// root, and why.
	CountFragments(ctx context.Context, why assemble.Reason, n int64)
}

// Config is trace assembly's configuration (the exporter's `assembly`).
type Config struct {
	// Wait is how long a span waits for its local root; 0 turns assembly off.
	Wait time.Duration
	// MaxBytes bounds the estimated bytes of the spans held, over all
	// owners, in equal shares (assemble.Config).
	MaxBytes int64
}

// rememberSentIDs is how many sent span ids per generation assembly
// remembers, to send a late child at once: 2 × 100,000 × ~40 B ≈ 8 MiB.
const rememberSentIDs = 100_000

// Assembly is one assembler shared by every owner, so that Config.MaxBytes
// bounds them all, each owner within its share. An owner's spans are
// assembled only with its own: the same trace and span ids under another
// owner are another trace.
type Assembly[P Owner] struct {
	asm     *assemble.Assembler[heldSpan[P]]
	scratch sync.Pool // *scratch
	sizer   ptrace.ProtoMarshaler

	mu   sync.Mutex
	ids  map[P]uint32 // each owner's assemble.Ref.Owner
	next uint32       // the id of the next new owner: a forgotten owner's id is never given again
}

// heldSpan is one span held in assembly: a copy of the span, its owner, and
// the resource and scope it came with (shared by the spans of one batch's
// scope).
type heldSpan[P Owner] struct {
	owner P
	from  *heldScope
	span  ptrace.Span
	size  int64
}

// heldScope is a copy of a ResourceSpans' resource and one ScopeSpans' scope
// (with their schema URLs), without spans.
type heldScope struct{ rs ptrace.ResourceSpans }

// New is the assembly of cfg; nil when cfg.Wait is 0 (assembly off).
func New[P Owner](cfg Config) *Assembly[P] {
	if cfg.Wait <= 0 {
		return nil
	}
	return &Assembly[P]{
		asm: assemble.New[heldSpan[P]](assemble.Config{Wait: cfg.Wait, MaxBytes: cfg.MaxBytes, Remember: rememberSentIDs}),
		ids: map[P]uint32{},
	}
}

// idOf is p's id in the assembler, given on first use.
func (a *Assembly[P]) idOf(p P) uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.ids[p]
	if !ok {
		id = a.next
		a.next++
		a.ids[p] = id
	}
	return id
}

// Forget drops owner p (a retired project) when it holds nothing: its id
// is never given again. An owner holding spans is kept.
func (a *Assembly[P]) Forget(p P) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := a.ids[p]; ok && a.asm.Forget(id) {
		delete(a.ids, p)
	}
}

// Expire returns, in a batch per owner, the held spans whose wait is over.
func (a *Assembly[P]) Expire(ctx context.Context, now time.Time) map[P]ptrace.Traces {
	return a.released(ctx, a.asm.Expire(now))
}

// Flush returns, in a batch per owner, every span held (shutdown); from then
// on nothing is held.
func (a *Assembly[P]) Flush(ctx context.Context) map[P]ptrace.Traces {
	return a.released(ctx, a.asm.Flush())
}

// Held reports whether span (trace, id) of owner p is held.
func (a *Assembly[P]) Held(p P, traceID [16]byte, id [8]byte) bool {
	a.mu.Lock()
	owner, ok := a.ids[p]
	a.mu.Unlock()
	return ok && a.asm.Held(owner, traceID, id)
}

// released puts groups that came out without a batch of theirs (expired,
// shutdown) into a batch per owner.
func (*Assembly[P]) released(ctx context.Context, rel []assemble.Released[heldSpan[P]]) map[P]ptrace.Traces {
	var none P
	return place(ctx, none, ptrace.Traces{}, rel)
}
