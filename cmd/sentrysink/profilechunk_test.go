package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// goodChunk is a profile_chunk as @sentry/profiling-node 11.1.0 writes one
// (fields trimmed): two samples of thread "0", leaf-first stacks.
const goodChunk = `{"chunk_id":"2b0f92e734034439a76ed165a478ae40","client_sdk":{"name":"sentry.javascript.node","version":"11.12.0"},` +
	`"profiler_id":"7a9aa681ef0544d9be7ebc6fc90953f2","platform":"node","version":"2","release":"demo@1.0","environment":"dev",` +
	`"measurements":{},"debug_meta":{"images":[]},"profile":{"samples":[{"stack_id":0,"thread_id":"0","timestamp":1796441067.488},` +
	`{"stack_id":1,"thread_id":"0","timestamp":1796441067.499}],"stacks":[[0,1],[1]],` +
	`"frames":[{"function":"fib","abs_path":"/app/run.js","filename":"/app/run.js","lineno":3,"colno":5},{"function":"main","in_app":true}],` +
	`"thread_metadata":{"0":{"name":"main"}}}}`

func chunkEnvelope(platform, payload string) []byte {
	h := `{"type":"profile_chunk"}`
	if platform != "" {
		h = `{"type":"profile_chunk","platform":"` + platform + `"}`
	}
	return []byte(`{"sent_at":"2026-12-05T03:24:29.002Z"}` + "\n" + h + "\n" + payload + "\n")
}

func TestCheckProfileChunks(t *testing.T) {
	assert.NoError(t, checkProfileChunks(chunkEnvelope("node", goodChunk)))
	bad := map[string]struct{ platform, payload, cause string }{
		"version 1":            {"node", strings.Replace(goodChunk, `"version":"2"`, `"version":"1"`, 1), "version"},
		"no client_sdk":        {"node", strings.Replace(goodChunk, `"client_sdk":{"name":"sentry.javascript.node","version":"11.12.0"},`, ``, 1), "client_sdk"},
		"chunk_id not a UUID":  {"node", strings.Replace(goodChunk, `2b0f92e734034439a76ed165a478ae40`, `2b0f`, 1), "chunk_id"},
		"stack_id dangling":    {"node", strings.Replace(goodChunk, `"samples":[`, `"samples":[{"stack_id":7,"thread_id":"0","timestamp":1796441067.5},`, 1), "malformed samples"},
		"frame index dangling": {"node", strings.Replace(goodChunk, `"stacks":[[0,1],[1]]`, `"stacks":[[0,1],[9]]`, 1), "malformed stacks"},
		"one sample a thread":  {"node", strings.Replace(goodChunk, `"thread_id":"0","timestamp":1796441067.499`, `"thread_id":"1","timestamp":1796441067.499`, 1), "not enough samples"},
		"longer than 66 s":     {"node", strings.Replace(goodChunk, `1796441067.499`, `1796441137.499`, 1), "duration is too long"},
		"thread_id a number":   {"node", strings.Replace(goodChunk, `"thread_id":"0","timestamp":1796441067.488`, `"thread_id":0,"timestamp":1796441067.488`, 1), "invalid json"},
		"lineno negative":      {"node", strings.Replace(goodChunk, `"lineno":3`, `"lineno":-3`, 1), "invalid json"},
		"header platform UI":   {"javascript", goodChunk, "profile type"},
		"no header platform":   {"", goodChunk, "no platform"},
		"debug image type elf": {"node", strings.Replace(goodChunk, `"images":[]`, `"images":[{"type":"elf","debug_id":"c0bcc3f1-9827-fe65-3058-404b2831d9e6"}]`, 1), "debug image type"},
		"not JSON":             {"node", `{"version":"2"`, "invalid json"},
	}
	for name, c := range bad {
		err := checkProfileChunks(chunkEnvelope(c.platform, c.payload))
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), c.cause, name)
		}
	}
}

// An accepted profile_chunk is counted with its samples, by project.
func TestProfileChunksCounted(t *testing.T) {
	h, st, _ := newTestHandler(handlerConfig{})
	for range 2 {
		r := post(t, h, "/api/7/envelope/", chunkEnvelope("node", goodChunk), nil)
		assert.Equal(t, http.StatusOK, r.status, r.body)
	}
	tot := st.snapshot(time.Now())
	assert.EqualValues(t, 2, tot.ProfileChunks)
	assert.EqualValues(t, 4, tot.ProfileSamples)
	assert.EqualValues(t, 4, tot.ByProject["7"].ProfileSamples)
	assert.EqualValues(t, 2, tot.Items["profile_chunk"])
	assert.Equal(t, map[string]uint64{"node fib": 2, "node main": 2}, tot.ProfileAppFunctions,
		"as Sentry's processing reads them: fib by its node rule, main by its in_app")
}
