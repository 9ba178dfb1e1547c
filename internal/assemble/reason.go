package assemble

// Reason says why spans came out of the assembler.
type Reason uint8

const (
	// WithRoot: released with their local root (or passed in its batch): not a fragment.
	WithRoot Reason = iota
	// Expired: the wait for the local root is over.
	Expired
	// MemoryBound: the byte bound is full; the oldest held spans go first.
	MemoryBound
	// Shutdown: everything held goes out when the assembler is flushed.
	Shutdown
	// AfterRoot: the span arrived after its parent had been sent.
	AfterRoot
)

// String is the reason's label value (WithRoot has none: it is no fragment).
func (r Reason) String() string {
	switch r {
	case Expired:
		return "expired"
	case MemoryBound:
		return "memory_bound"
	case Shutdown:
		return "shutdown"
	case AfterRoot:
		return "after_root"
	default:
		return "with_root"
	}
}
