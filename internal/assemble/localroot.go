package assemble

// OTLP span flags (opentelemetry-proto trace.proto, SpanFlags).
const (
	FlagHasIsRemote = 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
	FlagIsRemote    = 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
)

// LocalRoot reports whether a span starts its service's part of a trace: it
// has no parent; or its flags say the parent is remote; or, where the flags
// do not say (no HAS_IS_REMOTE), it is a SERVER or CONSUMER span
// (serverOrConsumer), whose parent lives in the calling service.
func LocalRoot(parent [8]byte, flags uint32, serverOrConsumer bool) bool {
	if parent == ([8]byte{}) {
		return true
	}
	if flags&FlagHasIsRemote != 0 {
		return flags&FlagIsRemote != 0
	}
	return serverOrConsumer
}
