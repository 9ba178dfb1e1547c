package profilechunk

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
)

// frame writes one frame: module, function, filename and abs_path as its
// runtime's SDK writes them (shape.go), lineno and colno of its line;
// instruction_addr for native code (or a location without lines), to be
// symbolicated against debug_meta; in_app by its runtime's rule and the
// user's InApp; and platform when it differs from the chunk's, for mixed
// stacks.
func (w *chunkWriter) frame(f frameKey) {
	loc := w.d.locs.At(int(f.loc))
	lf := w.d.locationFrame(f.loc)
	native := lf.plat == platNative
	p := len(w.b)
	var name, file, mapFile string
	if f.line >= 0 {
		fn := w.d.funcs.At(int(loc.Lines().At(int(f.line)).FunctionIndex()))
		name, file = w.d.str(fn.NameStrindex()), w.d.str(fn.FilenameStrindex())
	}
	if native {
		mapFile = w.d.str(w.d.maps.At(int(loc.MappingIndex())).FilenameStrindex())
	}
	runtime := w.plan.platform
	if lf.plat != 0 {
		runtime = framePlatforms[lf.plat-1]
	}
	sh := frameShape(runtime, lf.kernel, name, file, mapFile, w.inApp)
	w.field("module", sh.module)
	w.field("function", sh.function)
	w.field("filename", sh.filename)
	w.field("abs_path", sh.absPath)
	if f.line >= 0 {
		line := loc.Lines().At(int(f.line))
		w.b = appendUint32Field(w.b, "lineno", line.Line())
		w.b = appendUint32Field(w.b, "colno", line.Column())
	}
	if addr := loc.Address(); addr != 0 && (native || f.line < 0) {
		w.b = append(w.b, `,"instruction_addr":"0x`...)
		w.b = strconv.AppendUint(w.b, addr, 16)
		w.b = append(w.b, '"')
		w.useMapping(loc.MappingIndex())
	}
	if sh.inApp != 0 {
		w.b = append(w.b, `,"in_app":`...)
		w.b = strconv.AppendBool(w.b, sh.inApp > 0)
	}
	if lf.plat != 0 && framePlatforms[lf.plat-1] != w.plan.platform {
		w.field("platform", framePlatforms[lf.plat-1])
	}
	if len(w.b) == p {
		w.b = append(w.b, "{}"...)
		return
	}
	w.b[p] = '{'
	w.b = append(w.b, '}')
}

// field writes ,"key":"value" for a non-empty value, cut to Relay's
// length (bound.go).
func (w *chunkWriter) field(key, v string) {
	if v == "" {
		return
	}
	w.b = append(w.b, ',', '"')
	w.b = append(w.b, key...)
	w.b = append(w.b, '"', ':')
	w.b = jsonstr.Append(w.b, trimFrameString(v))
}

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// isLibrary tells a path of third-party or system code, which Sentry's own
// SDKs mark not in_app.
func isLibrary(p string) bool {
	for _, s := range [...]string{"/node_modules/", "/site-packages/", "/dist-packages/", "/pkg/mod/", "/usr/lib/", "/lib64/", "/usr/local/lib/", "/lib/x86_64-linux-gnu/", "/lib/aarch64-linux-gnu/"} {
		if strings.Contains(p, s) {
			return true
		}
	}
	return strings.HasPrefix(p, "/lib/")
}

// useMapping records the mapping of a native frame for debug_meta.
func (w *chunkWriter) useMapping(m int32) {
	if m <= 0 || w.mapSeen[m] {
		return
	}
	w.mapSeen[m] = true
	w.mappings = append(w.mappings, m)
}

// buildIDKey is the mapping attribute holding an ELF file's GNU build ID.
const buildIDKey = "process.executable.build_id.gnu"

// debugMeta writes debug_meta, its images (empty when none, as the SDKs write
// it) the mappings of the chunk's native
// frames that carry a GNU build ID: a "symbolic" image (the types Relay's
// profiling DebugImage accepts are macho, symbolic, sourcemap, proguard),
// whose debug_id is the build ID as Sentry derives it for ELF files.
// Mappings with only other build IDs (htlhash, go) are left out: Sentry
// cannot look debug files up by them.
func (w *chunkWriter) debugMeta() {
	w.b = append(w.b, `,"debug_meta":{"images":[`...) // always, as @sentry/profiling-node writes it
	n := 0
	for _, m := range w.mappings {
		mp := w.d.maps.At(int(m))
		debugID, ok := w.mappingDebugID(m)
		if !ok {
			continue
		}
		if n > 0 {
			w.b = append(w.b, ',')
		}
		n++
		w.b = append(w.b, `{"type":"symbolic","debug_id":"`...)
		w.b = append(w.b, debugID...)
		w.b = append(w.b, '"')
		w.b = append(w.b, `,"code_file":`...) // required by Relay's older NativeDebugImage
		w.b = jsonstr.Append(w.b, w.d.str(mp.FilenameStrindex()))
		w.b = append(w.b, `,"image_addr":"0x`...)
		w.b = strconv.AppendUint(w.b, mp.MemoryStart(), 16)
		w.b = append(w.b, `","image_size":`...)
		size := uint64(0)
		if mp.MemoryLimit() > mp.MemoryStart() {
			size = mp.MemoryLimit() - mp.MemoryStart()
		}
		w.b = strconv.AppendUint(w.b, size, 10)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, "]}"...)
}

func (w *chunkWriter) mappingDebugID(m int32) (string, bool) {
	idx := w.d.maps.At(int(m)).AttributeIndices()
	for i := 0; i < idx.Len(); i++ {
		k, v, ok := w.d.attr(idx.At(i))
		if ok && k == buildIDKey {
			return DebugIDFromBuildID(v.AsString())
		}
	}
	return "", false
}

// DebugIDFromBuildID turns an ELF GNU build ID (hex) into the debug_id
// Sentry uses for it: its first 16 bytes (zero-padded) read as a
// little-endian GUID, so the first three fields are byte-swapped
// (symbolic's DebugId::from_guid_age for ELF). ok is false for an empty or
// non-hex build ID.
func DebugIDFromBuildID(buildID string) (string, bool) {
	raw, err := hex.DecodeString(buildID)
	if err != nil || len(raw) == 0 {
		return "", false
	}
	var g [16]byte
	copy(g[:], raw)
	g[0], g[1], g[2], g[3] = g[3], g[2], g[1], g[0]
	g[4], g[5] = g[5], g[4]
	g[6], g[7] = g[7], g[6]
	h := hex.EncodeToString(g[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], true
}

// spans returns the spans the samples of win are linked to, each once.
func spans(d *dict, s *stream, win []sampleRec) []SpanLink {
	var out []SpanLink
	var seen map[[8]byte]bool
	for _, r := range win {
		trace, span, ok := d.link(r.link)
		if !ok {
			continue
		}
		if seen == nil {
			seen = map[[8]byte]bool{}
		}
		if seen[span] {
			continue
		}
		seen[span] = true
		out = append(out, SpanLink{TraceID: trace, SpanID: span, Thread: s.threads[r.thread].id})
	}
	return out
}
