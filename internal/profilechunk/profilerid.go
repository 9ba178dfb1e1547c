package profilechunk

import (
	"crypto/sha256"
	"encoding/hex"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// identityKeys are the resource attributes that tell one process from
// another, in the order they are hashed. Attributes that change across
// restarts of the same process (none of these should) would break the
// profiler_id's stability, so nothing else is used.
var identityKeys = [...]string{
	"service.namespace", "service.name", "service.instance.id",
	"host.id", "host.name", "k8s.pod.uid", "container.id",
}

// identity returns the identity attributes of a resource as key=value
// lines, the input of ProfilerID besides the salt and the process.pid.
func identity(attrs pcommon.Map) []byte {
	var b []byte
	for _, k := range identityKeys {
		if v, ok := attrs.Get(k); ok {
			b = append(b, k...)
			b = append(b, '=')
			b = append(b, v.AsString()...)
			b = append(b, '\n')
		}
	}
	return b
}

// ProfilerID returns the profiler_id of a process: the first 128 bits of
// SHA-256 over the salt, the resource identity (identityKeys present, in
// that order) and the process.pid (from the sample attributes, else the
// resource), as 32 lowercase hex digits. The same process therefore keeps
// its profiler_id across chunks, batches and exporter restarts; two
// processes differ as soon as one of those attributes does. A resource
// with none of them shares one profiler_id per salt and pid.
func ProfilerID(salt string, identity []byte, pid string) string {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write(identity)
	h.Write([]byte("process.pid="))
	h.Write([]byte(pid))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// SharedIdentities are the resource attributes an SDK's resource and the
// eBPF profiler's can both carry for one process (Options.SharedIdentity):
// the container (the eBPF profiler writes container.id itself), the pod
// (k8sattributes adds it on both paths), the host with process.pid outside
// containers (inside one, the SDK sees its namespace's pid and the profiler
// the host's).
var SharedIdentities = [...]string{"container.id", "k8s.pod.uid", "host.name", "host.id"}

// sharedWithPID: a host names a process only with its pid.
func sharedWithPID(key string) bool { return key == "host.name" || key == "host.id" }

// SharedProfilerID is the profiler_id of the process that a resource whose
// attribute key (one of SharedIdentities) is value names, pid its
// process.pid: ProfilerID over that attribute alone (and the pid, for a
// host), so a trace's resource and a profile's derive the same one on any
// replica. "" when value is empty, or when a host's pid is.
func SharedProfilerID(key, value, pid string) string {
	if !sharedWithPID(key) {
		pid = ""
	} else if pid == "" {
		return ""
	}
	if value == "" {
		return ""
	}
	return ProfilerID("", []byte(key+"="+value+"\n"), pid)
}
