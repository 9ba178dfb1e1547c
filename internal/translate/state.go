package translate

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// state is the scratch space of one call. It is pooled; the output buffer is
// not, because the payloads returned to the caller are slices of it.
type state struct {
	t        *Translator
	out      jw     // the call's output; payloads are ranges of it
	tmp      jw     // nested serializations (maps as typed strings)
	frag     jw     // per-resource fragments rendered once and copied
	arena    []byte // strings returned to the caller (ids, names), converted once
	idBuf    []byte // the input of a derived event id (ids.go)
	seen     seenSet
	scrub    bool    // members applies scrubFor: span attributes (scrub.go)
	server   bool    // the attributes are a server span's (scrubFor: the peer is the client)
	resScrub bool    // members leaves out secrets-prone keys: resource attributes without SendDefaultPII (resourcescrub.go)
	rseen    seenSet // repeated keys of one resource (typedResource)

	spanProfiler SpanProfilerOf // TracesWant.SpanProfilerOf of the call
	txProf       txProfiler     // what the segment being rendered names (segmentProfiler)
	txThread     string         // thread.id spanData writes first, for a transaction's contexts.trace

	res    []resInfo
	tfrags []typedFrag
	scopes []scopeInfo

	// traces
	spans   []spanRef
	tspans  []int32 // span indexes grouped by trace, input order inside a trace
	traces  []traceRef
	byTrace map[[16]byte]int32
	byID    map[spanKey]int32
	order   []int32 // members of each segment, segment root first, depth first
	stack   []int32
	segs    []segRef

	// the skip path (skip.go)
	skip    []skipRef
	skipSvc []string
	skipTab []int32
	skipSt  []int32

	// records of what was written, turned into results at the end
	txs    []txRec
	items  []frag
	groups []groupRec
	errs   []errRec
	sgs    []segRec // refs.go
}

func (t *Translator) get() *state {
	s := t.pool.Get().(*state)
	s.arena = s.arena[:0]
	s.res = s.res[:0]
	s.tfrags = s.tfrags[:0]
	s.scopes = s.scopes[:0]
	s.frag.truncate(0)
	s.txs, s.items, s.groups, s.errs = s.txs[:0], s.items[:0], s.groups[:0], s.errs[:0]
	return s
}

func (t *Translator) put(s *state) {
	s.out.b = nil
	if cap(s.spans) > 1<<16 { // do not pin the memory of a huge batch
		s.spans, s.tspans, s.order, s.stack = nil, nil, nil, nil
		s.byTrace, s.byID = nil, nil
	}
	if cap(s.skip) > 1<<16 {
		s.skip, s.skipTab, s.skipSt = nil, nil, nil
	}
	clear(s.skipSvc) // drop references to pdata
	s.skipSvc = s.skipSvc[:0]
	clear(s.spans) // drop references to pdata
	clear(s.res)
	clear(s.scopes)
	s.spanProfiler, s.txProf = nil, txProfiler{} // the call's, not the next one's
	t.pool.Put(s)
}

// resInfo is what every payload of one resource shares.
type resInfo struct {
	res                                         pcommon.Resource
	env, release, server, lang, platform, svcNS string
	service                                     string
	profilerID                                  string   // contexts.profile.profiler_id of its transactions ("": none)
	ownThreads                                  bool     // its profiler's thread_ids are its spans' thread.id kind (Profiler.OwnThreads)
	plain                                       frag     // contexts.otel.resource at level 0, in s.frag
	common                                      frag     // the event members eventCommon writes, in s.frag
	ctx                                         frag     // runtime, os, device... contexts (contexts.go), in s.frag
	typedA, typedB                              int      // range of s.tfrags; typedA < 0 until rendered
	blocks                                      [2]block // sentry.* attributes for span v2 and logs
	estimate                                    int      // rough serialized size of the resource attributes logs carry
}

type frag struct{ a, b int }

// typedFrag is one resource attribute rendered as a typed member `"k":{…}`.
type typedFrag struct {
	key    string
	sk     seenKey
	dup    bool // the key repeats an earlier one of the resource: never written
	log    bool // copied onto log records (Options.LogResourceAttributes)
	secret bool // secrets-prone and SendDefaultPII off: left out of span v2 attributes (resourcescrub.go)
	a, b   int
}

// block is a run of typed members rendered once and copied: the sentry.*
// attributes of a resource for one origin.
type block struct {
	frag
	n     int        // members in it
	keys  [7]string  // for s.seen
	sks   [7]seenKey // of keys
	bloom uint64     // seenSet bloom bits of keys
	ok    bool
}

// resource computes and pre-renders the shared parts of a resource.
func (s *state) resource(r pcommon.Resource) int32 {
	o := &s.t.o
	ri := resInfo{res: r, env: o.Environment, release: o.Release, typedA: -1}
	var envOld string
	var ca ctxAttrs
	for k, v := range r.Attributes().All() {
		ca.see(k, v)
		switch k {
		case "deployment.environment.name":
			if o.Environment == "" {
				ri.env = v.AsString()
			}
		case "deployment.environment":
			envOld = v.AsString()
		case "service.version":
			if o.Release == "" {
				ri.release = v.AsString()
			}
		case "host.name":
			ri.server = v.AsString()
		case "telemetry.sdk.language":
			ri.lang = v.AsString()
		case "service.name":
			ri.service = v.AsString()
		case "service.namespace":
			ri.svcNS = v.AsString()
		}
		if s.t.logRes.has(k) {
			ri.estimate += len(k) + 32
			if v.Type() == pcommon.ValueTypeStr {
				ri.estimate += len(v.Str())
			}
		}
	}
	if ri.env == "" {
		ri.env = envOld
	}
	ri.platform = platform(ri.lang)

	l := s.t.limits(0)
	a := s.frag.len()
	s.writeResource(&s.frag, r, &l)
	ri.plain = frag{a, s.frag.len()}

	a = s.frag.len()
	s.writeEventCommon(&s.frag, &ri)
	ri.common = frag{a, s.frag.len()}

	a = s.frag.len()
	s.writeResourceContexts(&s.frag, r, &ca)
	ri.ctx = frag{a, s.frag.len()}
	s.res = append(s.res, ri)
	return int32(len(s.res) - 1)
}

// maxTagValue is Sentry's limit for tag values.
const maxTagValue = 200

// writeResource writes the resource attributes as a plain object.
func (s *state) writeResource(w *jw, r pcommon.Resource, l *limits) {
	s.seen.reset()
	w.byte('{')
	n, dropped := 0, int(r.DroppedAttributesCount())
	s.resScrub = !s.t.o.SendDefaultPII
	s.members(w, r.Attributes(), false, &n, l, &dropped)
	s.resScrub = false
	droppedMember(w, &n, dropped, false)
	w.byte('}')
}

// resourcePlain writes contexts.otel.resource at level lvl.
func (s *state) resourcePlain(w *jw, ri *resInfo, lvl int) {
	if lvl == 0 {
		w.b = append(w.b, s.frag.b[ri.plain.a:ri.plain.b]...)
		return
	}
	l := s.t.limits(lvl)
	s.writeResource(w, ri.res, &l)
}

// typedResource renders the resource attributes as typed members, once.
func (s *state) typedResource(ri *resInfo) {
	if ri.typedA >= 0 {
		return
	}
	l := s.t.limits(0)
	ri.typedA = len(s.tfrags)
	s.rseen.reset()
	for k, v := range ri.res.Attributes().All() {
		if v.Type() == pcommon.ValueTypeEmpty || len(s.tfrags)-ri.typedA >= MaxAttributes {
			continue
		}
		a := s.frag.len()
		s.frag.str(k, l.value)
		s.frag.byte(':')
		s.typed(&s.frag, v, &l)
		sk := keyOf(k)
		dup := !s.rseen.addKey(&sk, k)
		secret := !s.t.o.SendDefaultPII && secretResourceKey(k)
		s.tfrags = append(s.tfrags, typedFrag{key: k, sk: sk, dup: dup, log: s.t.logRes.has(k), secret: secret, a: a, b: s.frag.len()})
	}
	ri.typedB = len(s.tfrags)
}

// resourceTyped writes the resource attributes as typed members of the open
// object, skipping keys already written (record or span attributes win), and,
// for a log record, the keys not selected for logs. It ends the object's
// members, so it checks s.seen without adding to it; a key repeated within the
// resource is marked dup once, when rendered.
func (s *state) resourceTyped(w *jw, ri *resInfo, n *int, l *limits, dropped *int, forLog bool) {
	for i := range s.tfrags[ri.typedA:ri.typedB] {
		f := &s.tfrags[ri.typedA+i]
		if f.dup || (forLog && !f.log) || (!forLog && f.secret) || s.seen.has(&f.sk, f.key) {
			continue
		}
		if *n >= l.attrs || (l.attrs < MaxAttributes && f.b-f.a > l.value+64) {
			*dropped++
			continue
		}
		w.comma(n)
		w.b = append(w.b, s.frag.b[f.a:f.b]...)
	}
}

// sdk writes the "sdk" member of an event.
func (s *state) sdk(w *jw, n *int) {
	o := &s.t.o
	w.key(n, "sdk")
	m := 0
	w.byte('{')
	w.strField(&m, "name", o.SDKName, 200)
	w.strField(&m, "version", o.SDKVersion, 200)
	w.byte('}')
}

// eventCommon writes the members every event of a resource shares:
// platform, environment, release, server_name, sdk and tags. They are
// rendered once per resource (writeEventCommon) and copied.
func (s *state) eventCommon(w *jw, n *int, ri *resInfo) {
	w.comma(n)
	w.b = append(w.b, s.frag.b[ri.common.a:ri.common.b]...)
}

// writeEventCommon renders the members eventCommon copies, without a
// leading separator.
func (s *state) writeEventCommon(w *jw, ri *resInfo) {
	n := 0
	w.strField(&n, "platform", ri.platform, 0)
	w.optStrField(&n, "environment", ri.env, 512)
	w.optStrField(&n, "release", ri.release, 512)
	w.optStrField(&n, "server_name", ri.server, 512)
	s.sdk(w, &n)
	w.key(&n, "tags")
	w.byte('{')
	m := 0
	w.optStrField(&m, "service.name", ri.service, maxTagValue)
	w.optStrField(&m, "service.namespace", ri.svcNS, maxTagValue)
	w.byte('}')
}

// Origins of span v2 and log items, indexing resInfo.blocks.
const (
	blockSpan = iota
	blockLog
)

// sentryAttrs writes the sentry.* typed attributes shared by span v2 and log
// items; they are rendered once per resource and origin, then copied.
func (s *state) sentryAttrs(w *jw, n *int, ri *resInfo, which int) {
	bl := &ri.blocks[which]
	if !bl.ok {
		o := &s.t.o
		origin, lifecycle := "auto.otel", "stream"
		if which == blockLog {
			lifecycle, origin = "", originLog
		}
		bl.ok = true
		fw := &s.frag
		bl.a = fw.len()
		for _, kv := range [...][2]string{
			{"sentry.environment", ri.env},
			{"sentry.release", ri.release},
			{"sentry.sdk.name", o.SDKName},
			{"sentry.sdk.version", o.SDKVersion},
			{"sentry.origin", origin},
			// Every SDK that streams spans (@sentry/core 11 captureSpan,
			// sentry-python, sentry-dart) marks each span so.
			{"sentry.trace_lifecycle", lifecycle},
		} {
			if kv[1] == "" {
				continue
			}
			bl.keys[bl.n], bl.sks[bl.n] = kv[0], keyOf(kv[0])
			bl.bloom |= 1 << (bl.sks[bl.n].fp >> 58)
			fw.key(&bl.n, kv[0])
			fw.raw(`{"type":"string","value":`)
			fw.str(kv[1], o.MaxValueBytes)
			fw.byte('}')
		}
		bl.b = fw.len()
	}
	s.copyBlock(w, n, bl)
}

// fit reports whether the payload started at a is within budget.
func (s *state) fit(a, budget int) bool { return s.out.len()-a <= budget }

// scopeInfo holds otel.scope.name and otel.scope.version of one scope rendered
// once, as plain and as typed members.
type scopeInfo struct {
	sc           pcommon.InstrumentationScope
	plain, typed block
}

func (s *state) scopeFrags(sc pcommon.InstrumentationScope) int32 {
	si := scopeInfo{sc: sc}
	limit := s.t.o.MaxValueBytes
	for i, bl := range []*block{&si.plain, &si.typed} {
		bl.a = s.frag.len()
		for _, kv := range [...][2]string{{"otel.scope.name", sc.Name()}, {"otel.scope.version", sc.Version()}} {
			if kv[1] == "" {
				continue
			}
			bl.keys[bl.n], bl.sks[bl.n] = kv[0], keyOf(kv[0])
			bl.bloom |= 1 << (bl.sks[bl.n].fp >> 58)
			s.frag.key(&bl.n, kv[0])
			if i == 1 {
				s.frag.raw(`{"type":"string","value":`)
				s.frag.str(kv[1], limit)
				s.frag.byte('}')
			} else {
				s.frag.str(kv[1], limit)
			}
		}
		bl.b = s.frag.len()
	}
	s.scopes = append(s.scopes, si)
	return int32(len(s.scopes) - 1)
}

// copyBlock writes a pre-rendered block as members of the open object.
func (s *state) copyBlock(w *jw, n *int, bl *block) {
	if bl.n == 0 {
		return
	}
	b := w.b
	if *n > 0 {
		b = append(b, ',')
	}
	b = append(b, s.frag.b[bl.a:bl.b]...)
	w.b = b
	*n += bl.n
	s.seen.addBlock(bl)
}
