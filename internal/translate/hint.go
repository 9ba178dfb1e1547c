package translate

// maxHintBytes caps the bytes per span (and form) or log record that a
// push's output buffer is sized for from the push before (spanB, logB):
// one push of huge items must not size the buffer of every later push, of
// every project, after it. A push that needs more grows its buffer as it
// writes.
const maxHintBytes = 4 << 10

// hintOf is the bytes per item a push wrote, for the next push's buffer: at
// least 1, at most maxHintBytes.
func hintOf(written, items int) int64 {
	return int64(min(written/items+1, maxHintBytes))
}
