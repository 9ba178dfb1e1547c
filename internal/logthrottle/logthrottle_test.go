package logthrottle

import (
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// throttleCall is one call of TestThrottle's cases.
type throttleCall struct {
	after time.Duration // sleep before the call
	key   string
}

// throttleCases are TestThrottle's calls and the lines that go out.
var throttleCases = []struct {
	name  string
	calls []throttleCall
	want  []string // "key" of each line that went out, in order
}{
	{name: "first line goes out", calls: []throttleCall{{0, "a"}}, want: []string{"a"}},
	{
		name:  "repeats within the interval are dropped",
		calls: []throttleCall{{0, "a"}, {0, "a"}, {time.Second, "a"}, {58 * time.Second, "a"}},
		want:  []string{"a"},
	},
	{
		name:  "just under the interval is dropped, at the interval goes out",
		calls: []throttleCall{{0, "a"}, {Interval - time.Nanosecond, "a"}, {time.Nanosecond, "a"}},
		want:  []string{"a", "a"},
	},
	{
		name:  "a dropped line does not restart the interval",
		calls: []throttleCall{{0, "a"}, {30 * time.Second, "a"}, {30 * time.Second, "a"}},
		want:  []string{"a", "a"},
	},
	{
		name:  "the interval runs from the last line out",
		calls: []throttleCall{{0, "a"}, {Interval, "a"}, {Interval / 2, "a"}, {Interval / 2, "a"}},
		want:  []string{"a", "a", "a"},
	},
	{
		name: "keys are independent",
		// a and b at 0s, c at 1s; at 60s a and b go out again, c not yet; at 61s c does
		calls: []throttleCall{{0, "a"}, {0, "b"}, {time.Second, "a"}, {0, "c"}, {0, "b"}, {Interval - time.Second, "b"}, {0, "c"}, {0, "a"}, {time.Second, "c"}, {0, "a"}},
		want:  []string{"a", "b", "c", "b", "a", "c"},
	},
	{name: "empty key is a key", calls: []throttleCall{{0, ""}, {0, ""}, {0, "x"}}, want: []string{"", "x"}},
	{
		name: "long quiet spells", calls: []throttleCall{{0, "a"}, {time.Hour, "a"}, {24 * time.Hour, "a"}, {0, "a"}},
		want: []string{"a", "a", "a"},
	},
}

// TestThrottle runs each sequence in a synctest bubble, where time.Now is
// the bubble's fake clock and time.Sleep advances it at once.
func TestThrottle(t *testing.T) {
	for _, tt := range throttleCases {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				core, logs := observer.New(zap.DebugLevel)
				logger := zap.New(core)
				var th Throttle // the zero value is ready
				for i, c := range tt.calls {
					time.Sleep(c.after)
					th.Log(logger, c.key, "failed", zap.String("key", c.key), zap.Int("call", i))
				}
				var got []string
				for _, e := range logs.All() {
					assert.Equal(t, zapcore.ErrorLevel, e.Level)
					assert.Equal(t, "failed", e.Message)
					got = append(got, e.ContextMap()["key"].(string))
				}
				assert.Equal(t, tt.want, got)
			})
		})
	}
}

// The line that goes out is the caller's: its message and every field.
func TestThrottleKeepsMessageAndFields(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	logger := zap.New(core)
	var th Throttle
	th.Log(logger, "net", "Sentry unreachable", zap.String("project", "7"), zap.Int("attempts", 3))
	th.Log(logger, "net", "Sentry unreachable again", zap.String("project", "8"))
	require.Equal(t, 1, logs.Len())
	e := logs.All()[0]
	assert.Equal(t, "Sentry unreachable", e.Message)
	assert.Equal(t, map[string]any{"project": "7", "attempts": int64(3)}, e.ContextMap())
}

// Many goroutines repeating one failure at once: one line per key.
func TestThrottleConcurrent(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	logger := zap.New(core)
	var th Throttle
	keys := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	for range 16 {
		for _, k := range keys {
			wg.Go(func() {
				for range 50 {
					th.Log(logger, k, "failed", zap.String("key", k))
				}
			})
		}
	}
	wg.Wait()
	per := map[string]int{}
	for _, e := range logs.All() {
		per[e.ContextMap()["key"].(string)]++
	}
	assert.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1, "d": 1}, per)
}

// Keys can come from the telemetry (an unresolvable project slug for
// "resolve:"+slug in routing.go), so a Throttle remembers at most MaxKeys:
// keys whose Interval is over are forgotten when it is full.
func TestThrottleForgetsOldKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger := zap.NewNop()
		var th Throttle
		for i := range 10_000 {
			th.Log(logger, "resolve:slug-"+strconv.Itoa(i), "failed")
			time.Sleep(time.Second)
		}
		assert.LessOrEqual(t, len(th.last), MaxKeys)
	})
}

// More than MaxKeys distinct keys within one Interval: each of the first
// MaxKeys logs once, the rest share one line per Interval, and once the
// Interval is over new keys log again.
func TestThrottleFullSharesOneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zap.ErrorLevel)
		logger := zap.New(core)
		var th Throttle
		for i := range 3 * MaxKeys {
			th.Log(logger, "k"+strconv.Itoa(i), "failed")
		}
		require.Equal(t, MaxKeys+1, logs.Len())
		last := logs.All()[MaxKeys]
		assert.Equal(t, int64(MaxKeys), last.ContextMap()["throttled_keys"])
		assert.LessOrEqual(t, len(th.last), MaxKeys)

		time.Sleep(Interval)
		th.Log(logger, "new", "failed")
		th.Log(logger, "k0", "failed") // its Interval is over too
		assert.Equal(t, MaxKeys+3, logs.Len())
	})
}
