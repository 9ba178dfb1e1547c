// Package logthrottle spaces out repeated log lines: one line per key per
// Interval, so that a failure repeated for every envelope (a network error, a
// rejected answer, an unresolvable project) cannot flood the collector's log.
//
// Its one job is that spacing. It must not decide what is logged, or hold
// anything but the time of each key's last line, for at most MaxKeys keys.
package logthrottle

import (
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Interval spaces out the log lines for one key.
const Interval = time.Minute

// MaxKeys bounds the keys a Throttle remembers. Keys can come from the
// telemetry (an unresolvable project slug), so their number has no bound of
// its own: once MaxKeys keys have each logged within the last Interval, a line
// for a new key goes out only as one shared line per Interval.
const MaxKeys = 1024

// Throttle lets one log line per key through every Interval.
type Throttle struct {
	mu       sync.Mutex
	last     map[string]time.Time
	overflow time.Time // the last line let through while every remembered key was recent
	forgot   time.Time // the last look for keys to forget: at most one a second
}

// Log logs msg at error level unless a line with key went out less than
// Interval ago.
func (t *Throttle) Log(logger *zap.Logger, key, msg string, fields ...zap.Field) {
	now := time.Now()
	t.mu.Lock()
	if t.last == nil {
		t.last = map[string]time.Time{}
	}
	last, ok := t.last[key]
	if ok && now.Sub(last) < Interval {
		t.mu.Unlock()
		return
	}
	if !ok && len(t.last) >= MaxKeys && now.Sub(t.forgot) >= time.Second {
		t.forget(now)
	}
	if !ok && len(t.last) >= MaxKeys {
		if now.Sub(t.overflow) < Interval {
			t.mu.Unlock()
			return
		}
		t.overflow = now
		t.mu.Unlock()
		logger.Error(msg, append(slices.Clip(fields), zap.Int("throttled_keys", MaxKeys))...)
		return
	}
	t.last[key] = now
	t.mu.Unlock()
	logger.Error(msg, fields...)
}

// forget drops the keys whose Interval is over: they no longer hold a line
// back. t.mu is held.
func (t *Throttle) forget(now time.Time) {
	t.forgot = now
	for k, at := range t.last {
		if now.Sub(at) >= Interval {
			delete(t.last, k)
		}
	}
}
