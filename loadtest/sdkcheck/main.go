// Command sdkcheck checks a real-SDK run (make sdktraffic, make scaleout;
// docs/sdk-traffic.md): it compares what sdkapp sent (--app) with what the local Sentry
// sink stored (--records, sentrysink --record-file) and with the collectors' own counters
// (--collector NAME=FILE for each otelcol-sentry, --front FILE for the loadbalancing
// front), prints one line per check and exits 1 if any fails.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

func main() {
	ok, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkcheck:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type config struct {
	app        string
	records    multiFlag
	collectors multiFlag
	front      string
	mode       string
	tolerance  float64
	killed     bool
	together   bool
	profiles   bool
}

func run(args []string) (bool, error) {
	var c config
	fs := flag.NewFlagSet("sdkcheck", flag.ContinueOnError)
	fs.StringVar(&c.app, "app", "", "sdkapp's --summary-file")
	fs.Var(&c.records, "records", "a sentrysink --record-file (repeatable)")
	fs.Var(&c.collectors, "collector", "NAME=FILE: an otelcol-sentry's metrics, Prometheus text or console-reader JSON (repeatable)")
	fs.StringVar(&c.front, "front", "", "the front (loadbalancing) collector's metrics, Prometheus text")
	fs.StringVar(&c.mode, "mode", "transactions", "the exporter's traces_as: transactions or spans")
	fs.Float64Var(&c.tolerance, "tolerance", 0.01, "allowed share of requests not assembled into one transaction (segment)")
	fs.BoolVar(&c.killed, "killed", false, "a replica was stopped during the run: check only that every item is stored once or counted")
	fs.BoolVar(&c.together, "together", false, "each replica sends to its own project: check that every request's spans, logs and error event share one")
	fs.BoolVar(&c.profiles, "profiles", false, "sdkapp sent profiles (--profiles-endpoint): check that every replica's transactions name the profiler_id their service's chunks carry")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	if c.app == "" || len(c.records) == 0 {
		return false, fmt.Errorf("--app and --records are required")
	}
	if c.mode != "transactions" && c.mode != "spans" {
		return false, fmt.Errorf("--mode must be transactions or spans")
	}
	var app appSummary
	b, err := os.ReadFile(c.app)
	if err != nil {
		return false, err
	}
	if err = json.Unmarshal(b, &app); err != nil {
		return false, fmt.Errorf("%s: %w", c.app, err)
	}
	var recs []record
	for _, f := range c.records {
		r, rerr := readRecords(f)
		if rerr != nil {
			return false, rerr
		}
		recs = append(recs, r...)
	}
	cols := map[string]metrics{}
	var names []string
	for _, kv := range c.collectors {
		name, file, ok := strings.Cut(kv, "=")
		if !ok {
			return false, fmt.Errorf("--collector %q: want NAME=FILE", kv)
		}
		m, merr := readMetrics(file)
		if merr != nil {
			return false, fmt.Errorf("%s: %w", file, merr)
		}
		cols[name] = m
		names = append(names, name)
	}
	var front metrics
	if c.front != "" {
		if front, err = readMetrics(c.front); err != nil {
			return false, fmt.Errorf("%s: %w", c.front, err)
		}
	}
	ch := &checker{c: c, app: &app, recs: recs, cols: cols, names: names, front: front}
	ch.check()
	return ch.failures == 0, nil
}

// appSummary is sdkapp's --summary-file.
type appSummary struct {
	Requests   int `json:"requests"`
	Spans      int `json:"spans"`
	Logs       int `json:"logs"`
	Exceptions int `json:"exceptions"`
	SDK        struct {
		SpansExported int64 `json:"spans_exported"`
		SpansFailed   int64 `json:"spans_failed"`
		LogsExported  int64 `json:"logs_exported"`
		LogsFailed    int64 `json:"logs_failed"`
	} `json:"sdk"`
	Profiles struct {
		Exported int64 `json:"exported"`
		Failed   int64 `json:"failed"`
	} `json:"profiles"`
	List []struct {
		Service   string   `json:"service"`
		Name      string   `json:"name"`
		TraceID   string   `json:"trace_id"`
		Root      string   `json:"root"`
		Children  []string `json:"children"`
		Slow      bool     `json:"slow"`
		Head      string   `json:"head"`
		Exception *struct {
			SpanID  string `json:"span_id"`
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"exception"`
		Logs []string `json:"logs"`
	} `json:"list"`
}

// record is one line of sentrysink --record-file.
type record struct {
	Project   string   `json:"project"`
	Type      string   `json:"type"`
	TraceID   string   `json:"trace_id"`
	SpanID    string   `json:"span_id"`
	Parent    string   `json:"parent"`
	Name      string   `json:"name"`
	Children  []string `json:"children"`
	Segment   bool     `json:"segment"`
	SegmentID string   `json:"segment_id"`
	Body      string   `json:"body"`
	Exception string   `json:"exception"`
	DSC       string   `json:"dsc_transaction"`
	Profiler  string   `json:"profiler_id"`
}

func readRecords(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

type checker struct {
	c        config
	app      *appSummary
	recs     []record
	cols     map[string]metrics
	names    []string
	front    metrics
	failures int
	// fragmentsCounted sums the collectors' assembly_fragments.
	fragmentsCounted int64
}

func (ch *checker) line(ok bool, what string, got, want any) {
	if ok {
		fmt.Printf("  ok    %-66s %v\n", what, got)
		return
	}
	ch.failures++
	fmt.Printf("  FAIL  %-66s got %v, want %v\n", what, got, want)
}

func (ch *checker) eq(what string, got, want int64) { ch.line(got == want, what, got, want) }

func (*checker) info(format string, a ...any) { fmt.Printf("  info  "+format+"\n", a...) }

// spanRole says where a span id belongs: its request and whether it is the root.
type spanRole struct {
	req  int
	root bool
}

func (ch *checker) check() {
	app := ch.app
	fmt.Printf("=== what the SDK sent: %d requests, %d spans, %d logs, %d exceptions\n", app.Requests, app.Spans, app.Logs, app.Exceptions)
	ch.eq("SDK: spans exported (the collector answered 2xx)", app.SDK.SpansExported, int64(app.Spans))
	ch.eq("SDK: logs exported", app.SDK.LogsExported, int64(app.Logs))
	ch.eq("SDK: spans and logs in failed exports", app.SDK.SpansFailed+app.SDK.LogsFailed, 0)

	roles := map[string]spanRole{}
	bodies := map[string]int{}
	excSpan := map[string]int{}
	for i := range app.List {
		r := &app.List[i]
		roles[r.Root] = spanRole{i, true}
		for _, c := range r.Children {
			roles[c] = spanRole{req: i}
		}
		for _, b := range r.Logs {
			bodies[b] = i
		}
		if r.Exception != nil {
			excSpan[r.Exception.SpanID] = i
		}
	}

	// every span, log and error event stored once
	spanSeen := map[string]int{}
	logSeen := map[string]int{}
	eventSeen := map[string]int{}
	projects := make([]map[string]bool, len(app.List))
	for i := range projects {
		projects[i] = map[string]bool{}
	}
	note := func(id, project string) {
		if r, ok := roles[id]; ok {
			projects[r.req][project] = true
		}
	}
	var stored struct{ tx, spans, logs, events, unknown int64 }
	for k := range ch.recs {
		r := &ch.recs[k]
		switch r.Type {
		case "transaction":
			stored.tx++
			spanSeen[r.SpanID]++
			note(r.SpanID, r.Project)
			for _, c := range r.Children {
				spanSeen[c]++
				note(c, r.Project)
			}
			stored.spans += 1 + int64(len(r.Children))
		case "span":
			spanSeen[r.SpanID]++
			note(r.SpanID, r.Project)
			stored.spans++
		case "log":
			logSeen[r.Body]++
			if i, ok := bodies[r.Body]; ok {
				projects[i][r.Project] = true
			}
			stored.logs++
		case "event":
			eventSeen[r.SpanID]++
			note(r.SpanID, r.Project)
			stored.events++
		}
	}
	missing, dup, foreign := countSeen(spanSeen, roles)
	fmt.Printf("=== stored: %d spans, %d logs, %d error events, %d transactions\n", stored.spans, stored.logs, stored.events, stored.tx)
	ch.eq("spans stored twice or more", dup, 0)
	ch.eq("spans stored that the SDK did not send", foreign, 0)
	var logMissing, logDup, logForeign int64
	for b, n := range logSeen {
		if _, ok := bodies[b]; !ok {
			logForeign += int64(n)
		} else if n > 1 {
			logDup += int64(n - 1)
		}
	}
	logMissing = int64(len(bodies))
	for b := range bodies {
		if logSeen[b] > 0 {
			logMissing--
		}
	}
	ch.eq("logs stored twice or more", logDup, 0)
	ch.eq("logs stored that the SDK did not send", logForeign, 0)
	var evDup, evForeign, evMissing int64
	for id, n := range eventSeen {
		if _, ok := excSpan[id]; !ok {
			evForeign += int64(n)
		} else if n > 1 {
			evDup += int64(n - 1)
		}
	}
	for id := range excSpan {
		if eventSeen[id] == 0 {
			evMissing++
		}
	}
	ch.eq("exceptions stored as two or more error events", evDup, 0)
	ch.eq("error events for no exception of the SDK's (wrong span id)", evForeign, 0)

	// the collectors' counters
	dropped := ch.accounting(stored.spans, stored.logs, stored.events, stored.tx)
	ch.eq("spans: stored + counted = sent by the SDK", stored.spans-dup+dropped.spans, int64(app.Spans))
	ch.eq("logs: stored + counted = sent by the SDK", stored.logs-logDup+dropped.logs, int64(app.Logs))
	if ch.c.killed {
		ch.info("missing (not stored): %d spans, %d logs, %d exceptions; counted not stored: %d spans, %d logs, %d error items",
			missing, logMissing, evMissing, dropped.spans, dropped.logs, dropped.errorsLost)
		return
	}
	ch.eq("spans missing", missing, 0)
	ch.eq("logs missing", logMissing, 0)
	ch.eq("exceptions without an error event", evMissing, 0)

	// one transaction (segment) per request, with all its children
	if ch.c.mode == "transactions" {
		ch.transactions(roles)
	} else {
		ch.segments(roles)
	}
	ch.errorEvents(excSpan)
	if ch.c.profiles {
		ch.profilers(roles)
	}
	if ch.c.together {
		split := 0
		for i := range projects {
			if len(projects[i]) > 1 {
				split++
			}
		}
		ch.eq("requests whose spans, logs and error event went to more than one replica", int64(split), 0)
		bySvc := map[string]map[string]bool{}
		for i := range projects {
			svc := app.List[i].Service
			if bySvc[svc] == nil {
				bySvc[svc] = map[string]bool{}
			}
			for p := range projects[i] {
				bySvc[svc][p] = true
			}
		}
		spread, place := 0, map[string][]string{}
		for svc, ps := range bySvc {
			if len(ps) > 1 {
				spread++
			}
			for p := range ps {
				place[p] = append(place[p], svc)
			}
		}
		for p := range place {
			sort.Strings(place[p])
		}
		ch.info("services by project (replica): %v", place)
		ch.eq("services whose data went to more than one replica", int64(spread), 0)
	}
}

func countSeen(seen map[string]int, roles map[string]spanRole) (missing, dup, foreign int64) {
	for id, n := range seen {
		if _, ok := roles[id]; !ok {
			foreign += int64(n)
		} else if n > 1 {
			dup += int64(n - 1)
		}
	}
	for id := range roles {
		if seen[id] == 0 {
			missing++
		}
	}
	return missing, dup, foreign
}

func (ch *checker) withinTolerance(bad int) bool {
	return float64(bad) <= ch.c.tolerance*float64(ch.app.Requests)
}

func (ch *checker) transactions(roles map[string]spanRole) {
	app := ch.app
	fmt.Printf("=== traces_as: transactions — one transaction per request, with all %d children\n", len(app.List[0].Children))
	complete, rootTx, fragments, wrongName, slowComplete, slow := 0, 0, 0, 0, 0, 0
	for k := range app.List {
		r := &app.List[k]
		if r.Slow {
			slow++
		}
	}
	var tx, fragmentSpans int64
	// splitReqs: the requests a child of which came out as its own transaction. An
	// after_root fragment is one transaction per late child, so a single request whose
	// export the front delivered after its root's makes up to 9 fragments: the tolerance
	// is a share of requests, and it is applied to requests, not to fragments.
	splitReqs := map[int]bool{}
	for k := range ch.recs {
		r := &ch.recs[k]
		if r.Type != "transaction" {
			continue
		}
		tx++
		role, ok := roles[r.SpanID]
		if !ok {
			continue
		}
		if !role.root {
			fragments++
			fragmentSpans += 1 + int64(len(r.Children))
			splitReqs[role.req] = true
			continue
		}
		rootTx++
		req := app.List[role.req]
		if r.Name != req.Name {
			wrongName++
		}
		if sameSet(r.Children, req.Children) {
			complete++
			if req.Slow {
				slowComplete++
			}
		}
	}
	ch.eq("root transactions = requests (each request's root once)", int64(rootTx), int64(app.Requests))
	ch.eq(fmt.Sprintf("transactions = root transactions + fragments (%d for %d requests)", tx, app.Requests), tx, int64(rootTx+fragments))
	ch.line(ch.withinTolerance(len(splitReqs)), fmt.Sprintf("requests split into more than one transaction (%d fragments), within %.0f %%", fragments, 100*ch.c.tolerance),
		len(splitReqs), 0)
	ch.line(ch.withinTolerance(app.Requests-complete), "requests whose transaction holds all their children, within tolerance", complete, app.Requests)
	if len(ch.cols) > 0 {
		ch.eq("spans in fragments = assembly_fragments counted by the collectors", fragmentSpans, ch.fragmentsCounted)
	}
	ch.eq("root transactions named other than their request", int64(wrongName), 0)
	ch.dsc(roles)
	if slow > 0 {
		ch.line(slowComplete == slow, "split requests (root seconds after its children) complete", slowComplete, slow)
	}
}

// dsc checks the trace header of the transactions of handed-over jobs (a segment of a
// trace whose head is another service's request, exported seconds earlier): on the
// replica (project) that stored the head, it names the head; on another replica, which
// never saw the head, it names the job's own segment (docs/scale-out.md, trade-offs).
func (ch *checker) dsc(roles map[string]spanRole) {
	app := ch.app
	headProject := map[string]string{} // request name+trace -> project of its root transaction
	for k := range ch.recs {
		r := &ch.recs[k]
		if role, ok := roles[r.SpanID]; ok && r.Type == "transaction" && role.root && app.List[role.req].Head == "" {
			headProject[r.TraceID] = r.Project
		}
	}
	var same, sameHead, other, otherOwn, jobs int
	for k := range ch.recs {
		r := &ch.recs[k]
		role, ok := roles[r.SpanID]
		if !ok || r.Type != "transaction" || !role.root || app.List[role.req].Head == "" {
			continue
		}
		jobs++
		job := app.List[role.req]
		if headProject[r.TraceID] == r.Project {
			same++
			if r.DSC == job.Head {
				sameHead++
			}
		} else {
			other++
			if r.DSC == job.Name {
				otherOwn++
			}
		}
	}
	if jobs == 0 {
		return
	}
	fmt.Printf("=== trace header (DSC) of the %d segments handed to another service after their trace's head\n", jobs)
	ch.line(sameHead == same, "on the head's replica: DSC transaction = the head's name", fmt.Sprintf("%d of %d", sameHead, same), fmt.Sprintf("%d of %d", same, same))
	ch.line(otherOwn == other, "on another replica: DSC transaction = the segment's own name (trade-off)", fmt.Sprintf("%d of %d", otherOwn, other), fmt.Sprintf("%d of %d", other, other))
}

func (ch *checker) segments(roles map[string]spanRole) {
	app := ch.app
	fmt.Println("=== traces_as: spans — one segment per request, every span carrying its root's segment id")
	segOfReq := make([]int, len(app.List))
	childSegment, wrongID, noID := 0, 0, 0
	noIDReqs := map[int]bool{} // the tolerance is a share of requests, as in transactions
	for k := range ch.recs {
		r := &ch.recs[k]
		if r.Type != "span" {
			continue
		}
		role, ok := roles[r.SpanID]
		if !ok {
			continue
		}
		root := app.List[role.req].Root
		if r.Segment {
			segOfReq[role.req]++
			if !role.root {
				childSegment++
			}
		}
		switch r.SegmentID {
		case root:
		case "":
			noID++
			noIDReqs[role.req] = true
		default:
			wrongID++
		}
	}
	one := 0 // requests whose only segment is their root (child segments are counted above)
	for _, n := range segOfReq {
		if n == 1 {
			one++
		}
	}
	ch.line(ch.withinTolerance(app.Requests-one), "requests with exactly one segment span (their root), within tolerance", one, app.Requests)
	ch.eq("child spans marked is_segment", int64(childSegment), 0)
	ch.eq("spans whose sentry.segment.id is another span than their root", int64(wrongID), 0)
	ch.line(ch.withinTolerance(len(noIDReqs)), fmt.Sprintf("requests with spans without sentry.segment.id (%d spans), within tolerance", noID), len(noIDReqs), 0)
}

func (ch *checker) errorEvents(excSpan map[string]int) {
	app := ch.app
	fmt.Println("=== error events: one per exception, on its span, with its request's transaction")
	wrongTx, wrongTrace := 0, 0
	for k := range ch.recs {
		r := &ch.recs[k]
		if r.Type != "event" {
			continue
		}
		i, ok := excSpan[r.SpanID]
		if !ok {
			continue
		}
		req := app.List[i]
		if r.TraceID != req.TraceID {
			wrongTrace++
		}
		if r.Name != req.Name {
			wrongTx++
		}
	}
	ch.eq("error events with another trace id than their exception", int64(wrongTrace), 0)
	ch.eq("error events whose transaction is not their request's", int64(wrongTx), 0)
}

type droppedTotals struct {
	spans, logs, errorsLost int64
}

const (
	sent    = "otelcol_exporter_sentry_sent_items"
	dropped = "otelcol_exporter_sentry_dropped_items"
)

// accounting checks each collector's invariant (items in = sent + dropped, per category)
// and the chain from the SDK through the front to the replicas, and returns what the
// collectors counted as not stored.
func (ch *checker) accounting(storedSpans, storedLogs, storedEvents, storedTx int64) droppedTotals {
	var d droppedTotals
	if len(ch.cols) == 0 {
		return d
	}
	fmt.Println("=== the collectors' counters (in = sent_items + dropped_items, per category)")
	var accSpans, accLogs, sentSpans, sentLogs, sentErrors, sentTx, dedup int64
	for _, name := range ch.names {
		m := ch.cols[name]
		aS := m.sum("otelcol_receiver_accepted_spans")
		aL := m.sum("otelcol_receiver_accepted_log_records")
		sS, dS := m.sum(sent, "category=span"), m.sum(dropped, "category=span")
		sL, dL := m.sum(sent, "category=log_item"), m.sum(dropped, "category=log_item")
		sE, dE := m.sum(sent, "category=error"), m.sum(dropped, "category=error")
		dd := m.sum(dropped, "category=error", "reason=deduplicated")
		ch.eq(fmt.Sprintf("%s: spans accepted = sent %d + dropped %d", name, sS, dS), sS+dS, aS)
		ch.eq(fmt.Sprintf("%s: logs accepted = sent %d + dropped %d", name, sL, dL), sL+dL, aL)
		ch.info("%s: errors sent %d, dropped %v; transactions sent %d, dropped %d", name, sE,
			m.byLabel(dropped, "reason", "category=error"), m.sum(sent, "category=transaction"), m.sum(dropped, "category=transaction"))
		if r := m.byLabel(dropped, "reason", "category=span"); len(r) > 0 {
			ch.info("%s: spans dropped by reason %v", name, r)
		}
		ch.fragmentsCounted += m.sum("otelcol_exporter_sentry_assembly_fragments")
		if f := m.byLabel("otelcol_exporter_sentry_assembly_fragments", "assembly_reason"); len(f) > 0 {
			ch.info("%s: spans sent without their root by assembly (fragments), by reason %v", name, f)
		}
		accSpans += aS
		accLogs += aL
		sentSpans += sS
		sentLogs += sL
		sentErrors += sE
		sentTx += m.sum(sent, "category=transaction")
		dedup += dd
		d.spans += dS
		d.logs += dL
		d.errorsLost += dE - dd
	}
	ch.eq("sent_items{span} = spans the sink stored", sentSpans, storedSpans)
	ch.eq("sent_items{log_item} = logs the sink stored", sentLogs, storedLogs)
	ch.eq("sent_items{error} = error events the sink stored", sentErrors, storedEvents)
	if ch.c.mode == "transactions" {
		ch.eq("sent_items{transaction} = transactions the sink stored", sentTx, storedTx)
	}
	if !ch.c.killed {
		ch.eq("dropped_items{error,reason=deduplicated} = exceptions (span event + log record merged)", dedup, int64(ch.app.Exceptions))
	}
	if ch.front == nil {
		ch.eq("spans accepted by the collectors = exported by the SDK", accSpans, ch.app.SDK.SpansExported)
		ch.eq("logs accepted by the collectors = exported by the SDK", accLogs, ch.app.SDK.LogsExported)
		return d
	}
	f := ch.front
	fmt.Println("=== the front (loadbalancing) collector")
	fAS := f.sum("otelcol_receiver_accepted_spans")
	fAL := f.sum("otelcol_receiver_accepted_log_records")
	failedS := f.sum("otelcol_exporter_send_failed_spans") + f.sum("otelcol_exporter_enqueue_failed_spans")
	failedL := f.sum("otelcol_exporter_send_failed_log_records") + f.sum("otelcol_exporter_enqueue_failed_log_records")
	ch.eq("front: spans accepted = exported by the SDK", fAS, ch.app.SDK.SpansExported)
	ch.eq("front: logs accepted = exported by the SDK", fAL, ch.app.SDK.LogsExported)
	ch.eq(fmt.Sprintf("front: spans accepted = replicas accepted %d + front failed %d", accSpans, failedS), accSpans+failedS, fAS)
	ch.eq(fmt.Sprintf("front: logs accepted = replicas accepted %d + front failed %d", accLogs, failedL), accLogs+failedL, fAL)
	if !ch.c.killed {
		ch.eq("front: spans and logs it failed to send", failedS+failedL, 0)
	}
	d.spans += failedS
	d.logs += failedL
	return d
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y)
}
