package send

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/config/configretry"
)

// TestRetryDelay: retry_on_failure's exponential backoff (without jitter
// here), capped at max_interval, at least a 5xx's Retry-After, and no retry
// whose wait would end past max_elapsed_time from the first attempt.
// backoff is retry_on_failure from 1 s, doubling up to 30 s, for an hour,
// as mod changes it.
func backoff(mod func(*configretry.BackOffConfig)) configretry.BackOffConfig {
	cfg := configretry.BackOffConfig{
		Enabled: true, InitialInterval: time.Second, Multiplier: 2,
		MaxInterval: 30 * time.Second, MaxElapsedTime: time.Hour,
	}
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

func TestRetryDelay(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	s := time.Second
	tests := []struct {
		name       string
		cfg        configretry.BackOffConfig
		first      time.Duration // the first attempt, before now
		retryAfter time.Duration
		want       []time.Duration // the delays of successive retries; then no retry when stop
		stop       bool
	}{
		{name: "retries off", cfg: backoff(func(c *configretry.BackOffConfig) { c.Enabled = false }), stop: true},
		{name: "doubling up to max_interval", cfg: backoff(nil), want: []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s}},
		{
			name: "no max_interval: no cap", cfg: backoff(func(c *configretry.BackOffConfig) { c.MaxInterval = 0 }),
			want: []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s},
		},
		{
			name: "multiplier 1.5", cfg: backoff(func(c *configretry.BackOffConfig) { c.Multiplier = 1.5 }),
			want: []time.Duration{1000 * time.Millisecond, 1500 * time.Millisecond, 2250 * time.Millisecond},
		},
		{name: "Retry-After is a floor", cfg: backoff(nil), retryAfter: 5 * s, want: []time.Duration{5 * s, 5 * s, 5 * s, 8 * s}},
		{
			// waits 1 and 2 s end at 3 s, exactly max_elapsed_time: allowed; 4 more are not
			name: "max_elapsed_time reached exactly", cfg: backoff(func(c *configretry.BackOffConfig) { c.MaxElapsedTime = 3 * s }),
			want: []time.Duration{1 * s, 2 * s}, stop: true,
		},
		// the waits pass on the clock: after 1 and 2 s, a wait of 4 s would end at 7 s
		{name: "max_elapsed_time counts the waits", cfg: backoff(func(c *configretry.BackOffConfig) { c.MaxElapsedTime = 6 * s }), want: []time.Duration{1 * s, 2 * s}, stop: true},
		{
			// the wall clock counts too: first tried 9 s ago, a wait of 1 s ends at 10 s
			name: "max_elapsed_time from the first attempt", cfg: backoff(func(c *configretry.BackOffConfig) { c.MaxElapsedTime = 10 * s }),
			first: 9 * s, want: []time.Duration{1 * s}, stop: true,
		},
		{
			name: "no max_elapsed_time: for ever", cfg: backoff(func(c *configretry.BackOffConfig) { c.MaxElapsedTime = 0; c.MaxInterval = time.Hour }),
			first: 1000 * time.Hour, want: []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 512 * s, 1024 * s, 2048 * s, 3600 * s},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &job{first: t0.Add(-tt.first)}
			now := t0
			var got []time.Duration
			for range len(tt.want) {
				d, ok := retryDelay(tt.cfg, j, tt.retryAfter, now, rand.Float64)
				if !ok {
					break
				}
				got = append(got, d)
				now = now.Add(d) // the next attempt comes once the wait is over
			}
			assert.Equal(t, tt.want, got)
			_, ok := retryDelay(tt.cfg, j, tt.retryAfter, now, rand.Float64)
			assert.Equal(t, !tt.stop, ok, "retried once more")
		})
	}
}

// TestRetryJitter: with a randomization factor f, each wait is drawn from
// [(1-f)·interval, (1+f)·interval], over the whole of it, while the interval
// itself grows without jitter.
func TestRetryJitter(t *testing.T) {
	cfg := configretry.BackOffConfig{
		Enabled: true, InitialInterval: 10 * time.Second, RandomizationFactor: 0.5, Multiplier: 2,
		MaxInterval: time.Minute,
	}
	lo, hi := 5*time.Second, 15*time.Second
	minD, maxD := hi, lo
	var sum time.Duration
	const draws = 2000
	for range draws {
		j := &job{}
		d, ok := retryDelay(cfg, j, 0, time.Unix(0, 0), rand.Float64)
		if !ok || d < lo || d > hi {
			t.Fatalf("a wait of %v (ok %v) outside [%v, %v]", d, ok, lo, hi)
		}
		minD, maxD, sum = min(minD, d), max(maxD, d), sum+d
		assert.Equal(t, 20*time.Second, j.interval, "the next interval, without jitter")
	}
	// Each bound below fails by chance with a probability under (3/4)^2000.
	assert.Less(t, minD, 6250*time.Millisecond, "the lower quarter is drawn")
	assert.Greater(t, maxD, 13750*time.Millisecond, "the upper quarter is drawn")
	mean := sum / draws
	assert.InDelta(t, float64(10*time.Second), float64(mean), float64(time.Second), "centered on the interval")
}
