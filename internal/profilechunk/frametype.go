package profilechunk

import "go.opentelemetry.io/collector/pdata/pprofile"

// framePlatforms are the Sentry platforms of frames, indexed by
// locPlatform's result minus one.
var framePlatforms = [...]string{"native", "go", "python", "java", "node", "php", "ruby", "perl", "csharp", "elixir"}

const platNative = 1 // locPlatform's value for native and kernel frames

// frameTypePlatform maps a profile.frame.type value (OpenTelemetry
// semantic conventions, as the eBPF profiler writes it) to a Sentry
// platform: native, kernel and rust frames are native code; an unknown or
// absent type is 0, the chunk's own platform.
func frameTypePlatform(typ string) int16 {
	switch typ {
	case "native", "kernel", "rust":
		return platNative
	case "go":
		return 2
	case "cpython", "python":
		return 3
	case "jvm":
		return 4
	case "v8js":
		return 5
	case "php":
		return 6
	case "ruby":
		return 7
	case "perl":
		return 8
	case "dotnet":
		return 9
	case "beam":
		return 10
	}
	return 0
}

// locFrame is what a location's profile.frame.type says about its frames.
type locFrame struct {
	plat   int16 // 0 for none, else 1 + index in framePlatforms
	kernel bool
}

// locationFrame returns the frame type of location l (a valid index),
// read once per call from its attributes.
func (x *dict) locationFrame(l int32) locFrame {
	c := x.locPlat[l]
	if c == 0 {
		c = x.readFrameType(x.locs.At(int(l)))
		x.locPlat[l] = c
	}
	return locFrame{plat: (c - 1) &^ kernelBit, kernel: (c-1)&kernelBit != 0}
}

const kernelBit = 1 << 8

// readFrameType returns 1 + (platform | kernelBit if kernel).
func (x *dict) readFrameType(loc pprofile.Location) int16 {
	idx := loc.AttributeIndices()
	for i := 0; i < idx.Len(); i++ {
		a := idx.At(i)
		k, v, ok := x.attr(a)
		if !ok || k != "profile.frame.type" {
			continue
		}
		typ := v.AsString()
		p := frameTypePlatform(typ)
		if typ == "kernel" {
			p |= kernelBit
		}
		return 1 + p
	}
	return 1
}
