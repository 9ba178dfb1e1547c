package send

import (
	"math/rand/v2"
	"sync"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
)

// jitter is the stage's source of the backoff's jitter (Settings.Jitter),
// shared by its workers.
type jitter struct {
	mu sync.Mutex
	r  *rand.Rand
}

// newJitter draws from r; nil: a source seeded at random.
func newJitter(r *rand.Rand) *jitter {
	if r == nil {
		r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return &jitter{r: r}
}

// seed is the next job's seed: the jitter of its retries, drawn from it
// alone, so that which worker retries first does not change any job's
// waits.
func (j *jitter) seed() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.r.Uint64()
}

// draw is j's next jitter draw, in [0, 1), from its seed.
func (j *job) draw() float64 {
	j.draws++
	return rand.New(rand.NewPCG(j.seed, j.draws)).Float64()
}

// retryDelay is how long j waits before its next attempt after a retryable
// failure: retry_on_failure's exponential backoff with jitter (draw gives a
// number in [0, 1)), at least the Retry-After Sentry sent with a 5xx. False
// when j must not be retried: retries are off, or the wait would take it
// past max_elapsed_time from its first attempt. It advances j's backoff
// interval.
func retryDelay(cfg configretry.BackOffConfig, j *job, retryAfter time.Duration, now time.Time, draw func() float64) (time.Duration, bool) {
	if !cfg.Enabled {
		return 0, false
	}
	if j.interval == 0 {
		j.interval = cfg.InitialInterval
	}
	d := j.interval
	if cfg.RandomizationFactor > 0 {
		delta := cfg.RandomizationFactor * float64(d)
		d = time.Duration(float64(d) - delta + draw()*2*delta)
	}
	next := time.Duration(float64(j.interval) * cfg.Multiplier)
	if cfg.MaxInterval > 0 && next > cfg.MaxInterval {
		next = cfg.MaxInterval
	}
	j.interval = max(next, 1)
	d = max(d, retryAfter)
	if cfg.MaxElapsedTime > 0 && now.Sub(j.first)+d > cfg.MaxElapsedTime {
		return 0, false
	}
	return d, true
}
