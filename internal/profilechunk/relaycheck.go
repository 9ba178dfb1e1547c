package profilechunk

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxProfileBytes is Relay's max_profile_size (50 MiB): a larger expanded
// chunk is rejected (ExceedSizeLimit).
const MaxProfileBytes = 50 << 20

// maxChunkSpanRelay is Relay's MAX_PROFILE_CHUNK_DURATION, in seconds.
const maxChunkSpanRelay = 66.0

// CheckRelay reports why Relay would reject a profile_chunk item whose
// item header says platform (empty when the header has none), or nil when
// it would accept it. It mirrors relay-profiling's sample v2 parse and
// normalisation (src/sample/v2.rs, src/sample/mod.rs, src/debug_image.rs,
// src/types.rs) and relay-server's profile_chunks/process.rs (the header's
// profile type must match the payload's; the size limit), at getsentry/relay
// 0a58b24. The sink and this package's tests use it as Relay's stand-in.
func CheckRelay(payload []byte, platform string) error {
	if len(payload) > MaxProfileBytes {
		return errors.New("exceed size limit")
	}
	if !utf8.Valid(payload) {
		return errors.New("invalid json: invalid UTF-8")
	}
	var c relayChunk
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("invalid json: %w", err)
	}
	if err := c.metadata(); err != nil {
		return err
	}
	if platform != "" && IsUI(platform) != IsUI(*c.Platform) {
		return errors.New("invalid profile type: item header platform differs from the payload's")
	}
	return c.Profile.normalize()
}

type relayChunk struct {
	Version    *string          `json:"version"`
	ChunkID    *string          `json:"chunk_id"`
	ProfilerID *string          `json:"profiler_id"`
	Platform   *string          `json:"platform"`
	Release    *json.RawMessage `json:"release"`
	Env        *json.RawMessage `json:"environment"`
	ClientSDK  *struct {
		Name    *string `json:"name"`
		Version *string `json:"version"`
	} `json:"client_sdk"`
	DebugMeta *struct {
		Images *[]relayImage `json:"images"`
	} `json:"debug_meta"`
	Profile *relayProfile `json:"profile"`
}

// relayImage holds what both of Relay's profiling image types read:
// src/debug_image.rs (all optional but type) and the older
// src/native_debug_image.rs (code_file, debug_id, image_addr, image_size
// required; macho or symbolic), so a chunk passing it passes either.
type relayImage struct {
	Type      *string      `json:"type"`
	CodeFile  *string      `json:"code_file"`
	DebugID   *string      `json:"debug_id"`
	ImageAddr *string      `json:"image_addr"`
	ImageSize *json.Number `json:"image_size"`
}

type relayProfile struct {
	Samples        *[]relaySample             `json:"samples"`
	Stacks         *[][]uint64                `json:"stacks"`
	Frames         *[]relayFrame              `json:"frames"`
	ThreadMetadata map[string]json.RawMessage `json:"thread_metadata"`
}

type relaySample struct {
	Timestamp *json.Number `json:"timestamp"`
	StackID   *uint64      `json:"stack_id"`
	ThreadID  *string      `json:"thread_id"`
}

type relayFrame struct {
	AbsPath         *string `json:"abs_path"`
	Colno           *uint32 `json:"colno"`
	Filename        *string `json:"filename"`
	Function        *string `json:"function"`
	InApp           *bool   `json:"in_app"`
	InstructionAddr *string `json:"instruction_addr"`
	Lineno          *uint32 `json:"lineno"`
	Module          *string `json:"module"`
	Platform        *string `json:"platform"`
}

func (c *relayChunk) metadata() error {
	switch {
	case c.Version == nil || *c.Version != "2":
		return errors.New("platform not supported: version is not \"2\"")
	case c.Platform == nil:
		return errors.New("invalid json: missing field `platform`")
	case c.ChunkID == nil || !validEventID(*c.ChunkID):
		return errors.New("invalid json: chunk_id is not a UUID")
	case c.ProfilerID == nil || !validEventID(*c.ProfilerID):
		return errors.New("invalid json: profiler_id is not a UUID")
	case c.ClientSDK == nil || c.ClientSDK.Name == nil || c.ClientSDK.Version == nil:
		return errors.New("invalid json: missing field `client_sdk` (name, version)")
	case !nullOrString(c.Release) || !nullOrString(c.Env):
		return errors.New("invalid json: release and environment must be strings")
	case c.Profile == nil || c.Profile.Samples == nil || c.Profile.Stacks == nil || c.Profile.Frames == nil:
		return errors.New("invalid json: missing field `profile` (samples, stacks, frames)")
	}
	if err := c.debugMeta(); err != nil {
		return err
	}
	for id, m := range c.Profile.ThreadMetadata {
		var tm struct {
			Name     *string `json:"name"`
			Priority *uint32 `json:"priority"`
		}
		if json.Unmarshal(m, &tm) != nil {
			return fmt.Errorf("invalid json: thread_metadata %q", id)
		}
	}
	for _, f := range *c.Profile.Frames {
		if f.InstructionAddr != nil && !validAddr(*f.InstructionAddr) {
			return errors.New("invalid json: frame instruction_addr is not a hex address")
		}
	}
	for _, s := range *c.Profile.Samples {
		if s.Timestamp == nil || s.StackID == nil || s.ThreadID == nil {
			return errors.New("invalid json: sample needs timestamp, stack_id and thread_id (a string)")
		}
		if f, err := s.Timestamp.Float64(); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return errors.New("invalid json: sample timestamp is not a finite number")
		}
	}
	return nil
}

func (c *relayChunk) debugMeta() error {
	if c.DebugMeta == nil {
		return nil
	}
	if c.DebugMeta.Images == nil {
		return errors.New("invalid json: debug_meta without images")
	}
	for _, im := range *c.DebugMeta.Images {
		if err := im.check(); err != nil {
			return err
		}
	}
	return nil
}

func (im *relayImage) check() error {
	if im.Type == nil || *im.Type != "macho" && *im.Type != "symbolic" {
		return errors.New("invalid json: debug image type must be macho or symbolic")
	}
	if im.CodeFile == nil || im.DebugID == nil || !validEventID(*im.DebugID) {
		return errors.New("invalid json: debug image needs code_file and a UUID debug_id")
	}
	if im.ImageAddr == nil || !validAddr(*im.ImageAddr) {
		return errors.New("invalid json: debug image image_addr is not a hex address")
	}
	if im.ImageSize == nil {
		return errors.New("invalid json: debug image without image_size")
	}
	if _, err := strconv.ParseUint(im.ImageSize.String(), 10, 64); err != nil {
		return errors.New("invalid json: debug image image_size is not a u64")
	}
	return nil
}

// normalize is ProfileData::normalize: single non-idle samples of a thread
// are removed, then no samples, a dangling stack_id or frame index, or
// samples spanning more than 66 s reject the chunk.
func (p *relayProfile) normalize() error {
	samples, stacks, frames := *p.Samples, *p.Stacks, *p.Frames
	busy := map[string]int{}
	for _, s := range samples {
		if *s.StackID < uint64(len(stacks)) && len(stacks[*s.StackID]) > 0 {
			busy[*s.ThreadID]++
		}
	}
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, s := range samples {
		if busy[*s.ThreadID] < 2 {
			continue
		}
		n++
		if *s.StackID >= uint64(len(stacks)) {
			return errors.New("malformed samples: stack_id out of range")
		}
		f, _ := s.Timestamp.Float64()
		lo, hi = math.Min(lo, f), math.Max(hi, f)
	}
	if n == 0 {
		return errors.New("not enough samples")
	}
	for _, st := range stacks {
		for _, f := range st {
			if f >= uint64(len(frames)) {
				return errors.New("malformed stacks: frame index out of range")
			}
		}
	}
	if hi-lo > maxChunkSpanRelay {
		return errors.New("duration is too long")
	}
	return nil
}

// validEventID is Relay's EventId: a UUID, simple (32 hex) or hyphenated.
func validEventID(s string) bool {
	if len(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' {
		s = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	}
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// validAddr is Relay's Addr: a 0x-prefixed hex number of at most 64 bits.
func validAddr(s string) bool {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || h == "" || len(h) > 16 {
		return false
	}
	for _, r := range h {
		if ('0' > r || r > '9') && ('a' > r || r > 'f') && ('A' > r || r > 'F') {
			return false
		}
	}
	return true
}

func nullOrString(r *json.RawMessage) bool {
	if r == nil || string(*r) == "null" {
		return true
	}
	var s string
	return json.Unmarshal(*r, &s) == nil
}
