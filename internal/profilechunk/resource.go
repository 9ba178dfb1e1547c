package profilechunk

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// resInfo is what every chunk of one resource shares.
type resInfo struct {
	index        int
	env, release string
	platform     string // from telemetry.sdk.language; "" when absent or unknown
	identity     []byte // the profiler identity without process.pid (profilerid.go)
	pid          string // the resource's process.pid, "" when absent
	salt         string
	shared       string // the value of Options.SharedIdentity, "" when absent
}

// resource reads the resource attributes that chunks carry: environment
// and release as internal/translate reads them, the platform, and the
// identity the profiler_id is derived from.
func (t *Translator) resource(rp pprofile.ResourceProfiles, index int, salt string) *resInfo {
	r := &resInfo{index: index, env: t.o.Environment, release: t.o.Release, salt: salt}
	var envOld string
	attrs := rp.Resource().Attributes()
	for k, v := range attrs.All() {
		switch k {
		case "deployment.environment.name":
			if t.o.Environment == "" {
				r.env = v.AsString()
			}
		case "deployment.environment":
			envOld = v.AsString()
		case "service.version":
			if t.o.Release == "" {
				r.release = v.AsString()
			}
		case "telemetry.sdk.language":
			r.platform = languagePlatform(v.AsString())
		case "process.pid":
			r.pid = PIDString(v)
		case t.o.SharedIdentity:
			r.shared = v.AsString()
		}
	}
	if r.env == "" && t.o.Environment == "" {
		r.env = envOld
	}
	r.identity = identity(attrs)
	return r
}

// PIDString renders a process.pid attribute (an int, or a string from a
// lax producer) as decimal text; "" when it is neither.
func PIDString(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.Int(), 10)
	case pcommon.ValueTypeStr:
		return v.Str()
	}
	return ""
}

// languagePlatform maps telemetry.sdk.language to a Sentry platform, as
// internal/translate does for events; "" for an unknown language.
func languagePlatform(lang string) string {
	switch lang {
	case "go", "java", "python", "ruby", "php":
		return lang
	case "nodejs":
		return "node"
	case "webjs", "javascript":
		return "javascript"
	case "dotnet":
		return "csharp"
	case "erlang", "elixir":
		return "elixir"
	case "cpp", "rust":
		return "native"
	case "swift":
		return "cocoa"
	}
	return ""
}
