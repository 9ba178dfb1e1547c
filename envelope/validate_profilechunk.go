package envelope

// profileChunk checks a profile_chunk item as Relay's processing does
// (relay-server processing/profile_chunks/process.rs, relay-profiling's
// ProfileChunk): the item header's platform is there and is the payload's
// (Relay drops a mismatch as invalid), the payload is a version 2 chunk
// with a profiler_id and chunk_id (UUIDs), and a profile with samples,
// stacks and frames.
func (v *validator) profileChunk(where, platform string, chunk map[string]any) {
	if platform == "" {
		v.failf(where, "item header platform is missing (Relay cannot tell the profile type)")
	}
	if p, _ := chunk["platform"].(string); p != platform {
		v.failf(where, "payload platform %q differs from the item header's %q", p, platform)
	}
	if ver, _ := chunk["version"].(string); ver != "2" {
		v.failf(where, "version %q, want \"2\"", ver)
	}
	v.id(where, chunk, "profiler_id", 32, true)
	v.id(where, chunk, "chunk_id", 32, true)
	profile, ok := chunk["profile"].(map[string]any)
	if !ok {
		v.failf(where, "profile is missing or not an object")
		return
	}
	for _, k := range []string{"samples", "stacks", "frames"} {
		if _, ok := profile[k].([]any); !ok {
			v.failf(where, "profile.%s is missing or not an array", k)
		}
	}
}
