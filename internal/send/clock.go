package send

import "time"

// Clock is the stage's time: Now for rate-limit windows, retry times and
// health; AfterFunc for the timer that brings a waiting envelope back.
// Tests replace them.
type Clock struct {
	Now func() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; stop cancels
	// the call, and reports whether it did.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the clock of a running collector.
func RealClock() Clock {
	return Clock{
		Now: time.Now,
		AfterFunc: func(d time.Duration, f func()) func() bool {
			return time.AfterFunc(d, f).Stop
		},
	}
}
