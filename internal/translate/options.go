package translate

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/bufpool"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxEventBytes = 1_000_000 // Relay max_event_size is 1 MiB
	DefaultMaxItemBytes  = 1_000_000 // the documented per-span and per-log limit; Relay's code allows more
	DefaultMaxValueBytes = 16384
	DefaultSDKName       = "sentry.otelcol"
	DefaultSDKVersion    = "0.0.0"

	// MaxAttributes is the most attributes written into one object (data,
	// attributes, extra, resource). The rest are cut and counted in
	// otel.dropped_attributes_count.
	MaxAttributes = 1000
	// MaxDepth is the deepest nesting of maps and arrays serialized; deeper
	// values become the string "[depth limit]".
	MaxDepth = 8
	// MaxFrames is the most stack frames kept per exception (the innermost ones).
	MaxFrames = 250
)

// Options configure a Translator. The zero value is usable.
type Options struct {
	Environment, Release string // fixed values; "" = per resource: deployment.environment.name, then deployment.environment / service.version
	SDKName, SDKVersion  string // written as event "sdk" and sentry.sdk.* attributes

	ErrorsFromSpanExceptions bool // span events named "exception" → error events
	ErrorsFromLogs           bool // log records carrying exception.* attributes → error events (the log is still sent as a log too)

	MaxEventBytes int // budget for one transaction/error payload; default 1_000_000
	MaxItemBytes  int // budget for one log or span v2 item; default 1_000_000
	MaxValueBytes int // longest string value kept; default 16384; longer ones are cut at a UTF-8 boundary and end with "…[truncated]"

	// SendDefaultPII adds to request what Sentry's SDKs add with
	// send_default_pii: cookies, IP-address header values and
	// env.REMOTE_ADDR. Off, those are left out (cookies) or [Filtered].
	SendDefaultPII bool

	// LogResourceAttributes are the resource attributes copied onto every log
	// record (logs are billed by bytes). nil: DefaultLogResourceAttributes;
	// empty but not nil: none; a "*" element: all of them.
	LogResourceAttributes []string

	NewID func() [16]byte  // id source (event ids, generated trace and span ids); default math/rand/v2 (ChaCha8 per thread, seeded by the runtime from OS entropy)
	Now   func() time.Time // clock for log records without any timestamp; default time.Now
}

// DefaultLogResourceAttributes are the resource attributes a log record
// carries by default: the service that wrote it, which Sentry's log views
// group and filter by. Its host is on every record anyway, as
// server.address (as @sentry/node writes it), so host.name is not repeated. The environment and release are always there
// as sentry.environment and sentry.release (from deployment.environment.name /
// deployment.environment and service.version), so they are not repeated.
// Everything else (process.command_args, process.command_line,
// process.owner, process.executable.path, ...) stays out unless asked for:
// it costs bytes on every record and a command line can carry secrets.
var DefaultLogResourceAttributes = []string{"service.name", "service.namespace"}

// Translator turns pdata into Sentry payloads. It is safe for concurrent use.
type Translator struct {
	o      Options
	logRes attrSelect   // resource attributes copied onto log records
	pool   sync.Pool    // *state
	bufs   bufpool.Pool // output buffers given back by Release
	spanB  atomic.Int64 // bytes written per span by the last Traces call, to size the next buffer
	logB   atomic.Int64 // same for Logs
}

// New returns a Translator with the defaults filled in.
func New(o Options) *Translator {
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = DefaultMaxEventBytes
	}
	if o.MaxItemBytes <= 0 {
		o.MaxItemBytes = DefaultMaxItemBytes
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.SDKName == "" {
		o.SDKName = DefaultSDKName
	}
	if o.SDKVersion == "" {
		o.SDKVersion = DefaultSDKVersion
	}
	if o.NewID == nil {
		o.NewID = randomID
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	t := &Translator{o: o, logRes: newAttrSelect(o.LogResourceAttributes, DefaultLogResourceAttributes)}
	t.pool.New = func() any { return &state{t: t} }
	t.spanB.Store(1024)
	t.logB.Store(512)
	return t
}

// randomID is the default id source. The top-level math/rand/v2 functions use a
// per-thread ChaCha8 seeded from OS entropy: fast, lock-free and unpredictable.
func randomID() (id [16]byte) {
	a, b := rand.Uint64(), rand.Uint64()
	for i := range 8 {
		id[i] = byte(a >> (8 * i))
		id[8+i] = byte(b >> (8 * i))
	}
	return id
}

// limits bound what one rendering writes. Level 0 follows the options; levels 1
// and 2 are the smaller renderings tried when a payload is over its budget.
type limits struct {
	value, attrs, depth, frames int
}

func (t *Translator) limits(level int) limits {
	v := t.o.MaxValueBytes
	switch level {
	case 0:
		return limits{value: v, attrs: MaxAttributes, depth: MaxDepth, frames: MaxFrames}
	case 1:
		return limits{value: min(v, 1024), attrs: 64, depth: 3, frames: 50}
	default:
		return limits{value: min(v, 200), attrs: 8, depth: 1, frames: 10}
	}
}

// levels is how many renderings are tried before a payload counts as invalid.
const levels = 3
