package envelope

// containerOverhead is len(`{"items":[`) + len(`]}`).
const containerOverhead = len(`{"items":[`) + len(`]}`)

// AppendContainer appends the container payload {"items":[a,b,...]} for pre-serialized item
// JSONs, as Relay reads it (relay-server/src/envelope/container.rs).
func AppendContainer(dst []byte, items [][]byte) []byte {
	return appendContainer(dst, `{"items":[`, items)
}

// appendContainer appends head, the items separated by commas, and "]}".
func appendContainer(dst []byte, head string, items [][]byte) []byte {
	dst = append(dst, head...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, it...)
	}
	return append(dst, ']', '}')
}

// SpanContainerHead opens a span v2 container: @sentry/core 11 writes
// {"version": 2, "items": [...]} (tracing/spans/envelope.js).
const SpanContainerHead = `{"version":2,"items":[`

// AppendSpanContainer appends the span v2 container payload
// {"version":2,"items":[a,b,...]} for pre-serialized span JSONs.
func AppendSpanContainer(dst []byte, items [][]byte) []byte {
	return appendContainer(dst, SpanContainerHead, items)
}

// SpanContainer is Container for span v2 items.
func SpanContainer(items [][]byte) []byte {
	return AppendSpanContainer(make([]byte, 0, SpanContainerLen(items)), items)
}

// SpanContainerLen returns len(AppendSpanContainer(nil, items)).
func SpanContainerLen(items [][]byte) int {
	return ContainerLen(items) + len(SpanContainerHead) - len(`{"items":[`)
}

// Container returns the container payload for items in one allocation of
// exactly its size.
func Container(items [][]byte) []byte {
	return AppendContainer(make([]byte, 0, ContainerLen(items)), items)
}

// ContainerLen returns len(AppendContainer(nil, items)).
func ContainerLen(items [][]byte) int {
	n := containerOverhead
	for i, it := range items {
		if i > 0 {
			n++
		}
		n += len(it)
	}
	return n
}

// Chunk groups consecutive item JSONs into containers of at most maxCount items whose
// container payload (as AppendContainer would write it) is at most maxBytes. A limit <= 0
// means no limit. An item that alone exceeds maxBytes is not placed in any chunk; its index is
// returned in oversized, and it ends the chunk before it, so every chunk is a sub-slice of
// items (sharing its backing array) and the order is kept.
func Chunk(items [][]byte, maxCount, maxBytes int) (chunks [][][]byte, oversized []int) {
	start, size := 0, containerOverhead
	flush := func(end int) {
		if end > start {
			chunks = append(chunks, items[start:end:end])
		}
	}
	for i, it := range items {
		if maxBytes > 0 && containerOverhead+len(it) > maxBytes {
			flush(i)
			oversized = append(oversized, i)
			start, size = i+1, containerOverhead
			continue
		}
		add := len(it)
		if i > start {
			add++ // comma
		}
		if i > start && ((maxCount > 0 && i-start >= maxCount) || (maxBytes > 0 && size+add > maxBytes)) {
			flush(i)
			start, size, add = i, containerOverhead, len(it)
		}
		size += add
	}
	flush(len(items))
	return chunks, oversized
}
