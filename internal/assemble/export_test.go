package assemble

// Bytes is what the held spans weigh, as sized by the caller. Only the tests
// read it: the exporter keeps each project's share itself (assembly.go).
func (a *Assembler[T]) Bytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
}
