package main

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The large profile (--large): items near the limits Relay and the exporter hold them to
// (envelope.RelayDefaults: an event ≤ 1 MiB; the exporter's log containers ≤ 100 records
// and 2 MiB; strings cut at 16 KiB, 250 stack frames), for make partition's large cases.
// Each request carries one service's traces and their logs, so that a push holds a log
// batch of one project (about 48 records at --batch 84, near 1 MiB); then:
//   - every log record has a payload attribute, and every one but an exception's a body
//     of largeBody bytes;
//   - every root span carries largeRootAttrs attributes of largeRootAttrBytes;
//   - every exception (span event and log) has a stack trace of about largeStackBytes, and
//     an exception span event largeEventAttrs attributes of largeEventAttrBytes, so that
//     its error event comes near Relay's max_event_size: about 935 kB of the translator's
//     1,000,000-byte budget (JSON escapes the values' quotes; four attributes more and it
//     falls back to a smaller rendering).
//
// The counts are those of the traces generated: only sizes change.
const (
	largeBody           = 16_000 // under translate's 16 KiB string cut
	largeLogAttrBytes   = 4_000
	largeRootAttrs      = 8
	largeRootAttrBytes  = 4_000
	largeStackBytes     = 48 << 10
	largeEventAttrs     = 48
	largeEventAttrBytes = 16_000
	largeTextBytes      = 512 << 10 // the text the values are cut from
)

// largeGen makes the large profile's batches from a generator's traces.
type largeGen struct {
	g *generator
	// text is order payloads, one JSON object a line, that values are cut from at
	// random offsets: varied, so that compression does not make them small.
	text string
	// stacks is a deep stack trace for each service (by index), in its language.
	stacks []string
}

func newLargeGen(g *generator) *largeGen {
	l := &largeGen{g: g}
	var b strings.Builder
	for b.Len() < largeTextBytes {
		fmt.Fprintf(&b, `{"order_id":"ord_%08x","sku":"SKU-%04d","qty":%d,"price_cents":%d,"warehouse":"eu-west-%d","customer":"cus_%06x","coupon":%q}`+"\n",
			g.rnd.Uint32(), g.rnd.IntN(10000), 1+g.rnd.IntN(9), 100+g.rnd.IntN(99900), 1+g.rnd.IntN(3), g.rnd.IntN(1<<24), coupons[g.rnd.IntN(len(coupons))])
	}
	l.text = b.String()
	for i := range g.services {
		l.stacks = append(l.stacks, deepStack(&g.services[i]))
	}
	return l
}

var coupons = []string{"", "WINTER10", "FREESHIP", "LOYAL-5", "BF2026-20PCT"}

// cut returns n bytes of the text from a random offset (ASCII: any cut is valid UTF-8).
func (l *largeGen) cut(n int) string {
	off := l.g.rnd.IntN(len(l.text) - n)
	return l.text[off : off+n]
}

// deepStack is the service's own stack trace with frames of a deep call chain inserted
// after its first line, to about largeStackBytes, in the service's language.
func deepStack(s *service) string {
	orig := s.exceptions[0].stacktrace
	head, rest, _ := strings.Cut(orig, "\n")
	var b strings.Builder
	b.WriteString(head + "\n")
	for i := 0; b.Len() < largeStackBytes-len(rest); i++ {
		switch s.lang {
		case "go":
			fmt.Fprintf(&b, "main.(*Pipeline).stage%d(0xc000124000, {0x7f1c2a, 0x4})\n\t/app/pipeline/stage%d.go:%d +0x1d4\n", i, i%40, 20+i%300)
		case "java":
			fmt.Fprintf(&b, "\tat com.example.pipeline.Stage%d.run(Stage%d.java:%d)\n", i, i%40, 20+i%300)
		default:
			fmt.Fprintf(&b, "  File \"/app/pipeline/stage%d.py\", line %d, in run\n    return self.next_stage(ctx)\n", i%40, 20+i%300)
		}
	}
	b.WriteString(rest)
	return b.String()
}

// batch is the large profile's generator.batch: about minSpans spans of one service
// drawn at random, with their logs, made large.
func (l *largeGen) batch(minSpans int, now time.Time) (ptrace.Traces, plog.Logs, batchCounts) {
	g := l.g
	i := g.rnd.IntN(len(g.services))
	s := &g.services[i]
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	setResource(rs.Resource(), s)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("otlpgen/" + s.lang)
	ld := plog.NewLogs()
	var logs plog.LogRecordSlice
	if g.logsPerTrace > 0 {
		rl := ld.ResourceLogs().AppendEmpty()
		setResource(rl.Resource(), s)
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName("otlpgen/" + s.lang)
		logs = sl.LogRecords()
	}
	var c counts
	for c.spans < max(minSpans, 1) {
		c.add(g.trace(s, ss.Spans(), logs, now))
	}
	for _, sp := range ss.Spans().All() {
		l.enlargeSpan(sp, l.stacks[i])
	}
	if g.logsPerTrace > 0 {
		for _, lr := range logs.All() {
			l.enlargeLog(lr, l.stacks[i])
		}
	}
	return td, ld, batchCounts{counts: c, byService: map[string]counts{s.name: c}}
}

func (l *largeGen) enlargeSpan(sp ptrace.Span, stack string) {
	if sp.ParentSpanID().IsEmpty() {
		a := sp.Attributes()
		for k := range largeRootAttrs {
			a.PutStr(fmt.Sprintf("app.request.payload.%d", k), l.cut(largeRootAttrBytes))
		}
	}
	for _, ev := range sp.Events().All() {
		if ev.Name() != "exception" {
			continue
		}
		a := ev.Attributes()
		a.PutStr("exception.stacktrace", stack)
		for k := range largeEventAttrs {
			a.PutStr(fmt.Sprintf("app.state.order.%d", k), l.cut(largeEventAttrBytes))
		}
	}
}

func (l *largeGen) enlargeLog(lr plog.LogRecord, stack string) {
	a := lr.Attributes()
	if _, ok := a.Get("exception.stacktrace"); ok {
		a.PutStr("exception.stacktrace", stack) // its body stays the error's message
	} else {
		lr.Body().SetStr(l.cut(largeBody))
	}
	a.PutStr("app.request.payload", l.cut(largeLogAttrBytes))
}
