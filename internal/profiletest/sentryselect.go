package profiletest

import (
	"encoding/json"
	"sort"
	"strconv"
)

// The commits TransactionSamples reimplements: getsentry/sentry's
// src/sentry/profiles/flamegraph.py (get_profile_candidates_from_transactions,
// ProfilerMeta.as_condition), getsentry/snuba's
// snuba/datasets/processors/transactions_processor.py (_sanitize_contexts:
// contexts.trace.data["thread.id"], a string or a number, stored as the
// string contexts[trace.thread_id]) and getsentry/vroom's
// internal/chunk/sample.go (CallTrees(activeThreadID)) and
// internal/flamegraph/flamegraph.go (sliceCallTree to the transaction).
const (
	SentryFlamegraphCommit = "0611e842c5d850d26bfa57d14712012caa96753d"
	SnubaCommit            = "0859cd5a727dfc81e97617c6b9399877e3bc7bf1"
	VroomCommit            = "425cd97d61f910a04e0b2cff47a55ede489a07b2"
)

// ChunkSample is a sample of a profile chunk that Sentry's aggregate
// flamegraph attributes to a transaction.
type ChunkSample struct {
	ThreadID  string
	Timestamp float64
	StackID   int
}

// TransactionSamples are the samples of chunks (profile_chunk payloads)
// that Sentry's aggregate flamegraph takes for transaction tx (a
// transaction payload), in time order. None unless tx names both a
// profiler (contexts.profile.profiler_id) and a thread
// (contexts.trace.data["thread.id"]); then those of each chunk of that
// profiler whose time overlaps the transaction's, on that thread (the
// thread's last sample in a chunk only ends the one before), whose time
// from the sample to the thread's next overlaps the transaction's.
func TransactionSamples(tx []byte, chunks [][]byte) ([]ChunkSample, error) {
	var t struct {
		Start    float64 `json:"start_timestamp"`
		End      float64 `json:"timestamp"`
		Contexts struct {
			Profile struct {
				ProfilerID string `json:"profiler_id"`
			} `json:"profile"`
			Trace struct {
				Data map[string]any `json:"data"`
			} `json:"trace"`
		} `json:"contexts"`
	}
	if err := json.Unmarshal(tx, &t); err != nil {
		return nil, err
	}
	thread, ok := snubaThreadID(t.Contexts.Trace.Data["thread.id"])
	if t.Contexts.Profile.ProfilerID == "" || !ok {
		return nil, nil
	}
	var out []ChunkSample
	for _, payload := range chunks {
		var c struct {
			ProfilerID string `json:"profiler_id"`
			Profile    struct {
				Samples []struct {
					StackID   int     `json:"stack_id"`
					ThreadID  string  `json:"thread_id"`
					Timestamp float64 `json:"timestamp"`
				} `json:"samples"`
			} `json:"profile"`
		}
		if err := json.Unmarshal(payload, &c); err != nil {
			return nil, err
		}
		if c.ProfilerID != t.Contexts.Profile.ProfilerID || len(c.Profile.Samples) == 0 {
			continue
		}
		var on []ChunkSample
		first, last := c.Profile.Samples[0].Timestamp, c.Profile.Samples[0].Timestamp
		for _, s := range c.Profile.Samples {
			first, last = min(first, s.Timestamp), max(last, s.Timestamp)
			if s.ThreadID == thread {
				on = append(on, ChunkSample{ThreadID: s.ThreadID, Timestamp: s.Timestamp, StackID: s.StackID})
			}
		}
		if last < t.Start || first >= t.End { // not a candidate: end_timestamp >= start, start_timestamp < end
			continue
		}
		sort.SliceStable(on, func(i, j int) bool { return on[i].Timestamp < on[j].Timestamp })
		for i := 0; i+1 < len(on); i++ {
			if on[i].Timestamp <= t.End && on[i+1].Timestamp >= t.Start {
				out = append(out, on[i])
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Timestamp < out[j].Timestamp })
	return out, nil
}

// snubaThreadID is contexts.trace.data["thread.id"] as Snuba stores it:
// a string as is, a number as its decimal text.
func snubaThreadID(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
