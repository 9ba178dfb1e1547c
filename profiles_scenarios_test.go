package sentryexporter

// Profiles through the exporter, as the other signals' scenarios: every
// chunk and every millisecond of it is stored by the fake Sentry or counted,
// once, in profile_chunk and profile_duration (or their _ui pair).

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
)

// chunkMs is the duration of profileOf(_, _, chunkSamples): 100 intervals of 10 ms.
const (
	chunkSamples = 101
	chunkMs      = 1000
)

// requireProfilesAddUp: for both categories of the backend pair, what went
// in (chunks chunks, chunkMs each) is sent plus dropped, and sent is what
// the fake Sentry stored (stored: its chunks answered 2xx).
func (h *harness) requireProfilesAddUp(chunks int, stored *atomic.Int64) {
	h.t.Helper()
	assert.EqualValues(h.t, chunks, h.sent("profile_chunk")+h.droppedAll("profile_chunk"), "profile_chunk: in = sent + dropped")
	assert.EqualValues(h.t, chunks*chunkMs, h.sent("profile_duration")+h.droppedAll("profile_duration"), "profile_duration: in = sent + dropped")
	assert.Equal(h.t, stored.Load(), h.sent("profile_chunk"), "sent is what Sentry stored")
}

// storing wraps respond (nil: 200) to count the profile chunks of the
// envelopes it answers 2xx: what Sentry stored.
func storing(respond func(*envelope.Envelope) answer) (func(*envelope.Envelope) answer, *atomic.Int64) {
	var stored atomic.Int64
	return func(env *envelope.Envelope) answer {
		a := answer{status: http.StatusOK}
		if respond != nil {
			a = respond(env)
		}
		if a.status/100 == 2 && !a.hang && !a.reset {
			for _, it := range env.Items {
				if it.Type == envelope.ItemTypeProfileChunk {
					stored.Add(1)
				}
			}
		}
		return a
	}, &stored
}

// TestScenarioProfileChunkLimit: a 429 naming profile_chunk, profile_duration
// or every category drops the chunk it answered (rate_limited) and every
// later one before it is translated (ratelimit_backoff), each counted in
// both categories; the client report carries the local drops; logs go on
// unless everything is limited.
func TestScenarioProfileChunkLimit(t *testing.T) {
	for _, tt := range []struct {
		name, limit string
		all         bool
	}{
		{"profile_chunk", "60:profile_chunk:organization:usage_exceeded", false},
		{"profile_duration", "60:profile_duration:organization:usage_exceeded", false},
		{"all categories", "60::organization:usage_exceeded", true},
	} {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			h := newHarness(t, nil)
			q := &quota{itemType: envelope.ItemTypeProfileChunk, cap: 1, refill: time.Minute, headers: map[string]string{
				"X-Sentry-Rate-Limits": tt.limit, "Retry-After": "60",
			}}
			respond, stored := storing(q.respond)
			h.sentry.setRespond(respond)
			for range 4 {
				h.consumeProfiles(profileOf("checkout", time.Now(), chunkSamples))
				h.consumeLogs(2)
				time.Sleep(time.Second)
			}
			time.Sleep(time.Minute) // the window is over
			h.consumeProfiles(profileOf("checkout", time.Now(), chunkSamples))
			h.shutdown()
			h.sentry.requireNoInvalid()

			assert.EqualValues(t, 2, h.sent("profile_chunk"), "the first and the one after the window")
			assert.EqualValues(t, 2*chunkMs, h.sent("profile_duration"))
			assert.EqualValues(t, 1, h.dropped("profile_chunk", "rate_limited"))
			assert.EqualValues(t, chunkMs, h.dropped("profile_duration", "rate_limited"))
			assert.EqualValues(t, 2, h.dropped("profile_chunk", "ratelimit_backoff"), "never translated")
			assert.EqualValues(t, 2*chunkMs, h.dropped("profile_duration", "ratelimit_backoff"))
			h.requireProfilesAddUp(5, stored)
			d := h.sentry.discards()
			assert.EqualValues(t, 2, d["ratelimit_backoff/profile_chunk"])
			assert.EqualValues(t, 2*chunkMs, d["ratelimit_backoff/profile_duration"])
			if !tt.all {
				assert.EqualValues(t, 8, h.sent("log_item"), "a profile limit holds no log")
			}
		}))
	}
}

// TestProfileLimitHoldsOnlyItsProfileType: a profile_chunk limit holds
// backend chunks, not a UI platform's (profile_chunk_ui), and the reverse.
func TestProfileLimitHoldsOnlyItsProfileType(t *testing.T) {
	synctest.Test(t, testProfileLimitHoldsOnlyItsProfileType)
}

func testProfileLimitHoldsOnlyItsProfileType(t *testing.T) {
	h := newHarness(t, nil)
	h.sentry.setRespond(firstThenOK(answer{status: http.StatusTooManyRequests, headers: map[string]string{
		"X-Sentry-Rate-Limits": "60:profile_chunk:organization",
	}}))
	h.consumeProfiles(profileOf("api", time.Now(), chunkSamples)) // answered 429
	ui := profileOf("app", time.Now(), chunkSamples)
	ui.ResourceProfiles().At(0).Resource().Attributes().PutStr("telemetry.sdk.language", "swift") // platform cocoa: a UI profile
	h.consumeProfiles(ui)
	h.consumeProfiles(profileOf("api", time.Now(), chunkSamples))
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.EqualValues(t, 1, h.sent("profile_chunk_ui"))
	assert.EqualValues(t, chunkMs, h.sent("profile_duration_ui"))
	assert.EqualValues(t, 1, h.dropped("profile_chunk", "rate_limited"))
	assert.EqualValues(t, 1, h.dropped("profile_chunk", "ratelimit_backoff"))
	assert.Zero(t, h.sent("profile_chunk"))
	platforms := map[string]int{}
	for _, r := range h.sentry.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == envelope.ItemTypeProfileChunk {
				platforms[it.Platform]++
			}
		}
	}
	assert.Equal(t, map[string]int{"go": 1, "cocoa": 1}, platforms, "the 429'd backend chunk and the UI chunk; none after the limit")
}

// TestProfilesBrownout: while Sentry answers 503 to every other request,
// every chunk is retried until stored; nothing is lost or counted twice.
func TestProfilesBrownout(t *testing.T) { synctest.Test(t, testProfilesBrownout) }

func testProfilesBrownout(t *testing.T) {
	h := newHarness(t, nil)
	var n atomic.Int32
	respond, stored := storing(func(*envelope.Envelope) answer {
		if n.Add(1)%2 == 1 {
			return answer{status: http.StatusServiceUnavailable}
		}
		return answer{status: http.StatusOK}
	})
	h.sentry.setRespond(respond)
	for i := range 6 {
		h.consumeProfiles(profileOf("checkout", time.Now().Add(time.Duration(i)*time.Minute), chunkSamples))
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	assert.EqualValues(t, 6, h.sent("profile_chunk"))
	assert.EqualValues(t, 6*chunkMs, h.sent("profile_duration"))
	h.requireProfilesAddUp(6, stored)
	assert.Positive(t, h.sum("otelcol_exporter_sentry_requests", map[string]string{"status": "503"}))
}

// TestProfilesHungSentry: a Sentry that never answers holds no push; at
// shutdown, past pending::drain_timeout, the chunk in flight and those
// queued behind it are counted network_error, chunks and milliseconds.
func TestProfilesHungSentry(t *testing.T) { synctest.Test(t, testProfilesHungSentry) }

func testProfilesHungSentry(t *testing.T) {
	f := newMemSentry(t)
	met := newSignal()
	f.setRespond(func(*envelope.Envelope) answer {
		met.fire()
		return answer{hang: true}
	})
	h := newHarnessWith(t, f, func(c *Config) {
		c.ClientConfig.Timeout = 0
		c.MaxConcurrentRequests = 1
		c.Pending.DrainTimeout = 50 * time.Millisecond
	})
	raw := h.profiles.(settlingProfiles)
	require.NoError(t, raw.Profiles.ConsumeProfiles(t.Context(), profileOf("checkout", time.Now(), chunkSamples)))
	<-met.C()
	for range 3 {
		require.NoError(t, raw.Profiles.ConsumeProfiles(t.Context(), profileOf("checkout", time.Now(), chunkSamples)))
	}
	h.shutdown()
	assert.EqualValues(t, 4, h.dropped("profile_chunk", "network_error"), "one in flight (cancelled), the rest queued")
	assert.EqualValues(t, 4*chunkMs, h.dropped("profile_duration", "network_error"))
	assert.Zero(t, h.sent("profile_chunk"))
}

// TestProfilesTimeoutBoundsEachPost: a Sentry that takes every request and
// never answers (a black hole) costs each chunk one timeout, then it is
// counted network_error once.
func TestProfilesTimeoutBoundsEachPost(t *testing.T) {
	synctest.Test(t, testProfilesTimeoutBoundsEachPost)
}

func testProfilesTimeoutBoundsEachPost(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, func(c *Config) {
		c.ClientConfig.Timeout = 20 * time.Millisecond
		c.RetryConfig.Enabled = false
		c.ClientReports.Enabled = false
	})
	h.sentry.setRespond(func(*envelope.Envelope) answer {
		<-release
		return answer{hang: true} // answered after the request ended: nothing stored
	})
	h.consumeProfiles(profileOf("checkout", time.Now(), chunkSamples))
	close(release)
	h.shutdown()
	assert.EqualValues(t, 1, h.dropped("profile_chunk", "network_error"))
	assert.EqualValues(t, chunkMs, h.dropped("profile_duration", "network_error"))
	assert.Zero(t, h.sent("profile_chunk"))
}

// TestProfileChunkTooLargeIsHalved: a 413 cuts the chunk in two by time;
// both halves are stored, two chunks whose milliseconds add up to the
// chunk's.
func TestProfileChunkTooLargeIsHalved(t *testing.T) {
	synctest.Test(t, testProfileChunkTooLargeIsHalved)
}

func testProfileChunkTooLargeIsHalved(t *testing.T) {
	h := newHarness(t, nil)
	respond, stored := storing(firstThenOK(answer{status: http.StatusRequestEntityTooLarge}))
	h.sentry.setRespond(respond)
	h.consumeProfiles(profileOf("checkout", time.Now(), chunkSamples))
	h.shutdown()
	h.sentry.requireNoInvalid()
	chunks := h.sentry.chunksOf(t)
	require.Len(t, chunks, 3, "the chunk answered 413, then its two halves")
	assert.EqualValues(t, 2, stored.Load())
	assert.Equal(t, chunks[0]["profiler_id"], chunks[1]["profiler_id"], "one profiler")
	assert.Equal(t, chunks[0]["profiler_id"], chunks[2]["profiler_id"])
	assert.NotEqual(t, chunks[1]["chunk_id"], chunks[2]["chunk_id"])
	assert.EqualValues(t, 2, h.sent("profile_chunk"))
	assert.EqualValues(t, chunkMs, h.sent("profile_duration"), "the halves' milliseconds add up to the chunk's")
	assert.Zero(t, h.droppedAll("profile_chunk"))
}

// TestProfilesRouted: each resource's profiles go to its service's project;
// a service with no project is counted unroutable, chunks and milliseconds.
// One project's profile limit holds none of the other's chunks: the limited
// project's Sentry answers 429, the other's stores every chunk.
func TestProfilesRouted(t *testing.T) { synctest.Test(t, testProfilesRouted) }

func testProfilesRouted(t *testing.T) {
	net := newMemNet()
	healthy := newMemSentryOn(t, net, memSentryHost)
	limited := newMemSentryOn(t, net, memSickHost)
	limited.setRespond(func(*envelope.Envelope) answer {
		return answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": "600:profile_chunk:project"}}
	})
	h := newHarnessWith(t, healthy, func(c *Config) {
		c.DSN = ""
		c.Routing.DSNs = map[string]configopaque.String{
			"checkout": configopaque.String(healthy.dsnFor("2")),
			"cart":     configopaque.String(limited.dsnFor("3")),
		}
	})
	for range 3 {
		pd := profileOf("checkout", time.Now(), chunkSamples)
		for _, svc := range []string{"cart", "unknown"} {
			require.NoError(t, profileOf(svc, time.Now(), chunkSamples).MergeTo(pd))
		}
		h.consumeProfiles(pd)
		time.Sleep(time.Second)
	}
	h.shutdown()
	healthy.requireNoInvalid()
	limited.requireNoInvalid()
	count := func(metric, project, cat string, reason ...string) int64 {
		attrs := map[string]string{"project": project, "category": cat}
		if len(reason) > 0 {
			attrs["reason"] = reason[0]
		}
		return h.sum(metric, attrs)
	}
	assert.EqualValues(t, 3, count("otelcol_exporter_sentry_sent_items", "2", "profile_chunk"), "the other project's limit holds none")
	assert.EqualValues(t, 3*chunkMs, count("otelcol_exporter_sentry_sent_items", "2", "profile_duration"))
	assert.EqualValues(t, 1, count("otelcol_exporter_sentry_dropped_items", "3", "profile_chunk", "rate_limited"))
	assert.EqualValues(t, 2, count("otelcol_exporter_sentry_dropped_items", "3", "profile_chunk", "ratelimit_backoff"))
	assert.EqualValues(t, 2*chunkMs, count("otelcol_exporter_sentry_dropped_items", "3", "profile_duration", "ratelimit_backoff"))
	assert.EqualValues(t, 3, count("otelcol_exporter_sentry_dropped_items", "unroutable", "profile_chunk", "unroutable"))
	assert.EqualValues(t, 3*chunkMs, count("otelcol_exporter_sentry_dropped_items", "unroutable", "profile_duration", "unroutable"))
}

// bigProfileOf is a process's profile whose chunk is megabytes: n distinct
// functions, each sample (one per ms) on a stack of its own of five.
func bigProfileOf(svc string, at time.Time, n int) pprofile.Profiles {
	pd := profileOf(svc, at, 0)
	d := pd.Dictionary()
	samples := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples()
	for i := range n {
		name := d.StringTable().Len()
		d.StringTable().Append(fmt.Sprintf("github.com/example/service/internal/handlers.(*Handler).serveRequest%06d", i))
		fn := d.FunctionTable().AppendEmpty()
		fn.SetNameStrindex(int32(name))
		fn.SetFilenameStrindex(4)
		loc := d.LocationTable().AppendEmpty()
		line := loc.Lines().AppendEmpty()
		line.SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
		line.SetLine(int64(i))
		st := d.StackTable().AppendEmpty()
		for k := range 5 {
			st.LocationIndices().Append(int32(d.LocationTable().Len() - 1 - min(k, i)))
		}
		s := samples.AppendEmpty()
		s.SetStackIndex(int32(d.StackTable().Len() - 1))
		s.AttributeIndices().Append(1, 2)
		s.TimestampsUnixNano().Append(uint64(at.Add(time.Duration(i) * time.Millisecond).UnixNano()))
	}
	return pd
}

// TestProfilesWithinTheMemoryBudget: profiles of megabytes each, pushed
// while Sentry hangs, are held within the memory budget: what does not fit
// is dropped queue_overflow, and every chunk and millisecond is sent or
// counted once Sentry answers.
func TestProfilesWithinTheMemoryBudget(t *testing.T) {
	synctest.Test(t, testProfilesWithinTheMemoryBudget)
}

func testProfilesWithinTheMemoryBudget(t *testing.T) {
	const budget = 32 << 20
	h := newHarness(t, func(c *Config) { c.Memory.MaxBytes = budget })
	arrived, release := holdFirst(h.sentry)
	raw := h.profiles.(settlingProfiles)
	var in account.Counts // what the translator makes of the pushes: chunks and their milliseconds
	var peak int64
	for i := range 8 {
		pd := bigProfileOf(fmt.Sprintf("svc%d", i), time.Now(), 20_000)
		chunks := h.exp.profiles.Profiles(pd, profilechunk.Want{Backend: true}).Chunks
		for i := range chunks {
			in[account.CatProfileChunk]++
			in[account.CatProfileDuration] += chunks[i].DurationMs
		}
		require.NoError(t, raw.Profiles.ConsumeProfiles(t.Context(), pd))
		if i == 0 {
			<-arrived
		}
		peak = max(peak, h.exp.stage.Memory().Held())
	}
	close(release)
	h.exp.settleInBubble()
	h.shutdown()
	h.sentry.requireNoInvalid()
	largest := 0
	for _, r := range h.sentry.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == envelope.ItemTypeProfileChunk {
				largest = max(largest, len(it.Payload))
			}
		}
	}
	assert.Greater(t, largest, 2<<20, "chunks of megabytes")
	t.Logf("largest chunk %d bytes; peak held %d of a %d budget; sent %d chunks, %d queue_overflow",
		largest, peak, budget, h.sent("profile_chunk"), h.dropped("profile_chunk", "queue_overflow"))
	assert.LessOrEqual(t, peak, int64(budget)+256<<10, "held within the budget, and the request in flight's own cost")
	assert.Positive(t, h.dropped("profile_chunk", "queue_overflow"), "what did not fit was dropped, counted")
	assert.Positive(t, h.sent("profile_chunk"))
	assert.GreaterOrEqual(t, in[account.CatProfileChunk], int64(8), "every profile is one chunk or more")
	for _, cat := range []account.Category{account.CatProfileChunk, account.CatProfileDuration} {
		name := string(cat.Wire())
		assert.Equal(t, in[cat], h.sent(name)+h.droppedAll(name), "%s: in = sent + dropped", name)
	}
}

// TestProfilesInvariantUnderChaos: Sentry answers at random (a reset, a
// 503, a 429 naming profile_chunk, profile_duration, everything or nothing
// known, or 200); every chunk and millisecond the translator made is sent
// or counted exactly once, and sent is what Sentry stored.
func TestProfilesInvariantUnderChaos(t *testing.T) { synctest.Test(t, testProfilesInvariantUnderChaos) }

func testProfilesInvariantUnderChaos(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.RetryConfig.MaxElapsedTime = 10 * time.Millisecond
		c.MaxConcurrentRequests = 4
	})
	rng := rand.New(rand.NewPCG(3, 4))
	var mu sync.Mutex
	headers := []string{"1:profile_chunk", "2:profile_duration", "1::organization", "1:profile_chunk_ui", "garbage"}
	respond, stored := storing(func(*envelope.Envelope) answer {
		mu.Lock()
		defer mu.Unlock()
		switch roll := rng.IntN(10); {
		case roll == 0:
			return answer{reset: true}
		case roll < 2:
			return answer{status: http.StatusServiceUnavailable}
		case roll < 4:
			return answer{status: http.StatusTooManyRequests, headers: map[string]string{"X-Sentry-Rate-Limits": headers[rng.IntN(len(headers))]}}
		}
		return answer{status: http.StatusOK}
	})
	h.sentry.setRespond(respond)
	var in account.Counts
	for i := range 30 {
		pd := profileOf(fmt.Sprintf("svc%d", i%3), time.Now(), 50+i)
		chunks := h.exp.profiles.Profiles(pd, profilechunk.Want{Backend: true}).Chunks
		for i := range chunks {
			in[account.CatProfileChunk]++
			in[account.CatProfileDuration] += chunks[i].DurationMs
		}
		h.consumeProfiles(pd)
		time.Sleep(700 * time.Millisecond)
	}
	h.shutdown()
	h.sentry.requireNoInvalid()
	for _, cat := range []account.Category{account.CatProfileChunk, account.CatProfileDuration} {
		name := string(cat.Wire())
		assert.Equal(t, in[cat], h.sent(name)+h.droppedAll(name), "%s: in = sent + dropped", name)
	}
	assert.Equal(t, stored.Load(), h.sent("profile_chunk"), "sent is what Sentry stored")
	assert.Positive(t, h.dropped("profile_chunk", "rate_limited")+h.dropped("profile_chunk", "ratelimit_backoff"), "the chaos did limit something")
}
