package tracemetric

// maxHintBytes caps the bytes per data point that a call's buffer is sized
// for from the call before (perPoint): one push of huge points must not
// size the buffer of every later push, of every project, after it. A call
// that needs more grows its buffer as it writes.
const maxHintBytes = 4 << 10
