package sendtest

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Holder is what holds bytes against a memory budget (membudget.Memory).
type Holder interface{ Held() int64 }

// SampleMemory samples the heap's objects (live, and dead not yet swept)
// and what mem holds every millisecond from now on, after a GC. The
// function it returns stops the sampling and gives the most mem held, the
// heap's peak and its live bytes at the start; later calls give the same.
func SampleMemory(mem Holder) func() (held, heap, base int64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := int64(s[0].Value.Uint64())
	var peakHeld, peakHeap int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peakHeld = max(peakHeld, mem.Held())
			metrics.Read(s)
			peakHeap = max(peakHeap, int64(s[0].Value.Uint64()))
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return func() (int64, int64, int64) {
		once.Do(func() { close(stop); <-done })
		return peakHeld, peakHeap, base
	}
}
