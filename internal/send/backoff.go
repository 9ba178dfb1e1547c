package send

import (
	"context"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
)

// backoff is retry_on_failure's exponential backoff with jitter.
type backoff struct{ interval time.Duration }

func (b *backoff) reset(cfg configretry.BackOffConfig) { b.interval = cfg.InitialInterval }

// next returns the next delay; false when retries are off.
func (b *backoff) next(cfg configretry.BackOffConfig) (time.Duration, bool) {
	if !cfg.Enabled {
		return 0, false
	}
	d := b.interval
	if cfg.RandomizationFactor > 0 {
		delta := cfg.RandomizationFactor * float64(d)
		d = time.Duration(float64(d) - delta + rand.Float64()*2*delta)
	}
	next := time.Duration(float64(b.interval) * cfg.Multiplier)
	if cfg.MaxInterval > 0 && next > cfg.MaxInterval {
		next = cfg.MaxInterval
	}
	b.interval = next
	return d, true
}

// Sleep waits d; false when ctx ended or shutdown began first. It is the
// real clock's pause between retries.
func Sleep(ctx context.Context, stopping <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-stopping:
		return false
	}
}
