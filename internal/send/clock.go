package send

import "time"

// Clock is the stage's time. Now is the exporter's clock, which rate-limit
// windows run on; Wall and AfterFunc time the retries: when an envelope may
// be tried again, and the timer that brings it back. Tests replace them.
type Clock struct {
	Now  func() time.Time
	Wall func() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; stop cancels
	// the call, and reports whether it did.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the clock of a running collector.
func RealClock() Clock {
	return Clock{
		Now:  time.Now,
		Wall: time.Now,
		AfterFunc: func(d time.Duration, f func()) func() bool {
			return time.AfterFunc(d, f).Stop
		},
	}
}
