// Package logthrottle spaces out repeated log lines: one line per key per
// Interval, so that a failure repeated for every envelope (a network error, a
// rejected answer, an unresolvable project) cannot flood the collector's log.
//
// Its one job is that spacing. It must not decide what is logged, or hold
// anything but the time of each key's last line.
package logthrottle

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// Interval spaces out the log lines for one key.
const Interval = time.Minute

// Throttle lets one log line per key through every Interval.
type Throttle struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// Log logs msg at error level unless a line with key went out less than
// Interval ago.
func (t *Throttle) Log(logger *zap.Logger, key, msg string, fields ...zap.Field) {
	now := time.Now()
	t.mu.Lock()
	if t.last == nil {
		t.last = map[string]time.Time{}
	}
	if last, ok := t.last[key]; ok && now.Sub(last) < Interval {
		t.mu.Unlock()
		return
	}
	t.last[key] = now
	t.mu.Unlock()
	logger.Error(msg, fields...)
}
