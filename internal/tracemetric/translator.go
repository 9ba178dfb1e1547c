package tracemetric

import (
	"hash/maphash"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otel-sentry/sentryexporter/internal/bufpool"
)

// DefaultResourceAttributes are the resource attributes every metric
// carries by default, as logs carry them: the service, which Sentry's views
// group and filter by. Environment, release and host are always there as
// sentry.environment, sentry.release and server.address.
var DefaultResourceAttributes = []string{"service.name", "service.namespace"}

// Options are what every metric carries besides its point.
type Options struct {
	// Environment and Release are fixed values; "" takes them per resource
	// (deployment.environment.name, then deployment.environment; service.version).
	Environment, Release string
	// SDKName and SDKVersion are sentry.sdk.name and sentry.sdk.version.
	SDKName, SDKVersion string
	// ResourceAttributes are the resource attributes copied onto each
	// metric; nil: DefaultResourceAttributes; "*" among them: all.
	ResourceAttributes []string
}

// Translator turns pdata metrics into trace metric items. It is safe for
// concurrent use; the state of cumulative streams is the caller's [Streams].
type Translator struct {
	o   Options
	all bool
	sel map[string]bool
	h   hasher
	// perPoint is the bytes the last call wrote per data point, so that the
	// next call's buffer is sized once, not grown by copying.
	perPoint atomic.Int64
	// perItem is the mean size of the items the last call that wrote any
	// wrote: what a skipped item is counted as in trace_metric_byte.
	perItem atomic.Int64
	bufs    bufpool.Pool // buffers given back by Result.Release
}

// firstPerItem is perItem before any item was written: about the size of a
// counter with a few attributes.
const firstPerItem = 300

// New is a translator with o; its trace ids for points without an exemplar
// are its own (a new seed per translator: per exporter's life).
func New(o Options) *Translator {
	keys := o.ResourceAttributes
	if keys == nil {
		keys = DefaultResourceAttributes
	}
	t := &Translator{o: o, sel: map[string]bool{}, h: hasher{seed: maphash.MakeSeed()}}
	t.perPoint.Store(512)
	t.perItem.Store(firstPerItem)
	for _, k := range keys {
		t.all = t.all || k == "*"
		t.sel[k] = true
	}
	return t
}

// Want says whether items are wanted (false while trace_metric is rate
// limited: points are then only counted, and cumulative streams still
// advance, so that the next delta after the limit is exact).
type Want struct{ Items bool }

// Result is what one call made of its data points. Every data point becomes
// PerPoint items (see docs/mapping.md#metrics), and each of them is in
// exactly one of Items, Skipped, Invalid, NoBaseline and Unchanged.
type Result struct {
	// Items are the trace metric JSON objects, slices of one buffer.
	Items [][]byte
	// Skipped items were not rendered: Want.Items was false.
	Skipped int64
	// SkippedBytes is what Skipped items would have weighed, for
	// trace_metric_byte: each counted at the mean size of the items the
	// translator last wrote (never serialized to be weighed).
	SkippedBytes int64
	// Invalid items had a value JSON cannot hold (NaN, ±Inf) or an
	// unspecified temporality, or were over MaxItemBytes however cut.
	Invalid int64
	// NoBaseline items were of a cumulative point with no earlier point of
	// its stream to subtract: the stream's first, or its state was evicted.
	NoBaseline int64
	// Unchanged items carried no information: a counter of 0 (a cumulative
	// sum that did not increase, a delta of 0), and every item of a
	// histogram point with no observation. Nothing is sent for them.
	Unchanged int64
	// HeldDelta is the change in bytes the Streams hold, for the caller's
	// memory budget.
	HeldDelta int64

	release *bufpool.Releaser
}

// Release gives the buffer of Items back for reuse by later calls, as
// translate's results do. It is optional; no item of r may be used after
// it. Calling it again, or on a copy of r, does nothing.
func (r *Result) Release() { r.release.Release() }

// Metrics translates md; now (ns since the epoch) stands in for a missing
// point time. st may be nil only when no item is wanted (items that have
// no project: they are only counted, and no stream advances).
func (t *Translator) Metrics(md pmetric.Metrics, st *Streams, now uint64, want Want) Result {
	r := run{t: t, st: st, now: now, want: want.Items}
	var points int64 // only to size the buffer
	if want.Items {
		points = int64(md.DataPointCount())
		r.buf = t.bufs.Get(int(t.perPoint.Load()*points*9/8 + 1024))
	}
	for _, rm := range md.ResourceMetrics().All() {
		rc := t.resource(rm.Resource())
		for _, sm := range rm.ScopeMetrics().All() {
			base := t.h.scopeKey(rc.key, sm.Scope().Name(), sm.Scope().Version())
			for _, m := range sm.Metrics().All() {
				r.metric(&rc, base, m)
			}
		}
	}
	if want.Items && points > 0 && len(r.buf) > 0 {
		t.perPoint.Store(min(int64(len(r.buf))/points+1, maxHintBytes))
	}
	if len(r.ends) > 0 {
		t.perItem.Store(int64(r.ends[len(r.ends)-1]) / int64(len(r.ends)))
	}
	r.res.SkippedBytes = r.res.Skipped * t.perItem.Load()
	return r.result()
}

// resCtx is what every metric of one resource shares.
type resCtx struct {
	res     pcommon.Resource
	key     uint64
	traceID [16]byte
	rest    []byte   // the sentry.* defaults and selected resource attributes, rendered once
	elems   int      // the array elements in rest (see fit.go)
	keys    []string // the selected resource attributes' keys
	env     string
	release string
	server  string
}

// resource renders a resource's shared attributes.
func (t *Translator) resource(r pcommon.Resource) resCtx {
	rc := resCtx{res: r, key: t.h.resourceKey(r), env: t.o.Environment, release: t.o.Release}
	rc.traceID = traceIDOf(rc.key)
	var envOld string
	for k, v := range r.Attributes().All() {
		switch k {
		case "deployment.environment.name":
			rc.env = cmpOr(rc.env, v.AsString())
		case "deployment.environment":
			envOld = v.AsString()
		case "service.version":
			rc.release = cmpOr(rc.release, v.AsString())
		case "host.name":
			rc.server = v.AsString()
		}
	}
	rc.env = cmpOr(rc.env, envOld)
	rc.rest, rc.elems = t.appendShared(nil, &rc, r, nil, nil)
	return rc
}

// appendShared writes the members every metric of a resource carries: the
// SDK's defaults, then the selected resource attributes, cut to c (nil:
// whole); skip says which keys the point already has (nil: none). It also
// says how many array elements it wrote.
func (t *Translator) appendShared(b []byte, rc *resCtx, r pcommon.Resource, skip func(string) bool, c *cutState) (_ []byte, elems int) {
	first := true
	str := func(k, v string) {
		if v == "" || skip != nil && skip(k) {
			return
		}
		b = appendMember(b, first, k)
		b = appendTypedStr(b, v)
		first = false
	}
	str("sentry.environment", rc.env)
	str("sentry.release", rc.release)
	str("sentry.sdk.name", t.o.SDKName)
	str("sentry.sdk.version", t.o.SDKVersion)
	str(serverAddress, rc.server)
	record := skip == nil
	for k, v := range r.Attributes().All() {
		if !t.all && !t.sel[k] || skip != nil && skip(k) || sentryKey(k) || k == serverAddress && rc.server != "" || v.Type() == pcommon.ValueTypeEmpty {
			continue
		}
		if record {
			rc.keys = append(rc.keys, k)
		}
		if !c.admit(k) {
			continue
		}
		b = appendMember(b, first, k)
		var n int
		b, n = appendTypedCut(b, v, c.limits())
		elems += n
		first = false
	}
	return b, elems
}

// serverAddress is the key of the host that sent a metric, as Sentry's
// metrics spec and @sentry/core's server runtime client write it (sentry-go
// v0.50 writes sentry.server.address; docs/mapping.md#metrics).
const serverAddress = "server.address"

// sentryKey reports whether k is one of the attributes the SDK sets.
func sentryKey(k string) bool { return strings.HasPrefix(k, "sentry.") }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
