package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// service is one simulated application.
type service struct {
	name, version, env, lang string
	sdkVersion               string // telemetry.sdk.version of its language's SDK
	routes                   []route
	dbSystem, dbName         string
	peer                     string // host of its http.client calls
	exceptions               []exception
}

type route struct {
	method, route, path string
}

type exception struct {
	typ, message, stacktrace string
}

var services = []service{
	{
		name: "checkout", version: "1.4.2", env: "demo", lang: "go", sdkVersion: "1.38.0",
		routes: []route{
			{"GET", "/cart/{id}", "/cart/8731"},
			{"POST", "/checkout", "/checkout"},
			{"GET", "/healthz", "/healthz"},
		},
		dbSystem: "postgresql", dbName: "shop", peer: "payments.internal:8080",
		exceptions: []exception{{
			typ:     "*net.OpError",
			message: "dial tcp 10.0.3.7:5432: connect: connection refused",
			stacktrace: "goroutine 42 [running]:\n" +
				"main.(*CartStore).Load(0xc000124000, {0x7f1c2a, 0x4})\n" +
				"\t/app/store/cart.go:88 +0x1d4\n" +
				"main.(*Server).handleCart(0xc0001a2000, {0x9b6e40, 0xc0002a0000}, 0xc000316000)\n" +
				"\t/app/server/cart.go:41 +0x9a\n" +
				"net/http.HandlerFunc.ServeHTTP(0xc000118f40, {0x9b6e40, 0xc0002a0000}, 0xc000316000)\n" +
				"\t/usr/local/go/src/net/http/server.go:2294 +0x29\n" +
				"net/http.serverHandler.ServeHTTP({0xc0001a8000}, {0x9b6e40, 0xc0002a0000}, 0xc000316000)\n" +
				"\t/usr/local/go/src/net/http/server.go:3301 +0x8e\n" +
				"created by net/http.(*Server).Serve in goroutine 1\n" +
				"\t/usr/local/go/src/net/http/server.go:3454 +0x485\n",
		}},
	},
	{
		name: "inventory", version: "2.11.0", env: "demo", lang: "java", sdkVersion: "1.54.1",
		routes: []route{
			{"GET", "/items/{sku}", "/items/SKU-1182"},
			{"POST", "/items/{sku}/reserve", "/items/SKU-1182/reserve"},
		},
		dbSystem: "mysql", dbName: "inventory", peer: "pricing.internal:9000",
		exceptions: []exception{{
			typ:     "java.lang.IllegalStateException",
			message: "Stock for SKU-1182 is negative",
			stacktrace: "java.lang.IllegalStateException: Stock for SKU-1182 is negative\n" +
				"\tat com.example.inventory.StockService.reserve(StockService.java:88)\n" +
				"\tat com.example.inventory.StockController.reserve(StockController.java:41)\n" +
				"\tat jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)\n" +
				"\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885)\n" +
				"Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30000ms.\n" +
				"\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:696)\n" +
				"\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)\n" +
				"\tat com.example.inventory.StockService.reserve(StockService.java:80)\n" +
				"\t... 3 more\n",
		}},
	},
	{
		name: "payments", version: "0.9.7", env: "demo", lang: "python", sdkVersion: "1.37.0",
		routes: []route{
			{"POST", "/charge", "/charge"},
			{"GET", "/charges/{charge_id}", "/charges/ch_3PZ1"},
		},
		dbSystem: "redis", dbName: "0", peer: "api.stripe.example:443",
		exceptions: []exception{{
			typ:     "payments.gateway.CardDeclined",
			message: "insufficient funds",
			stacktrace: "Traceback (most recent call last):\n" +
				"  File \"/app/payments/views.py\", line 57, in charge\n" +
				"    result = gateway.charge(card, amount)\n" +
				"  File \"/app/payments/gateway.py\", line 112, in charge\n" +
				"    raise CardDeclined(\"insufficient funds\")\n" +
				"payments.gateway.CardDeclined: insufficient funds\n",
		}},
	},
}

// serviceAt returns the i-th simulated service; beyond the built-in three, copies with
// numbered names.
func serviceAt(i int) service {
	s := services[i%len(services)]
	if n := i / len(services); n > 0 {
		s.name = fmt.Sprintf("%s-%d", s.name, n+1)
	}
	return s
}

// counts is what one generated batch holds.
type counts struct {
	traces, spans, logs, exceptions int
	// spanExceptions are the exceptions carried by span events (the rest are in logs).
	spanExceptions int
}

func (c *counts) add(o counts) {
	c.traces += o.traces
	c.spans += o.spans
	c.logs += o.logs
	c.exceptions += o.exceptions
	c.spanExceptions += o.spanExceptions
}

// batchCounts is what one batch holds, in all and by service name.
type batchCounts struct {
	counts
	byService map[string]counts
}

// generator builds batches of realistic traces and logs. It is not safe for concurrent use.
type generator struct {
	rnd           *rand.Rand
	services      []service
	logsPerTrace  int
	exceptionRate float64
	// spansPerTrace, when 3 or more, makes every trace exactly that long (request-shaped:
	// the server root, db and http.client children, from 4 on an internal span, then
	// db and http.client children in turn); 0 keeps the default shape of 3 or 4 spans.
	spansPerTrace int
	// exceptionLogOnSpan logs each exception with the id of the span that records it
	// (the root) instead of the db span where it happened: the exporter then merges
	// the two renderings into one error event (its dedupe key holds the span id).
	exceptionLogOnSpan bool
	// recent, when set, records each trace's root span for the profiles' sample links.
	recent *recentSpans
}

func newGenerator(seed uint64, nServices, logsPerTrace int, exceptionRate float64) *generator {
	g := &generator{
		rnd:           rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		logsPerTrace:  logsPerTrace,
		exceptionRate: exceptionRate,
	}
	for i := range max(nServices, 1) {
		g.services = append(g.services, serviceAt(i))
	}
	return g
}

func (g *generator) traceID() pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], g.rnd.Uint64()|1)
	binary.BigEndian.PutUint64(id[8:], g.rnd.Uint64())
	return id
}

func (g *generator) spanID() pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], g.rnd.Uint64()|1)
	return id
}

func (g *generator) ms(lo, hi int) time.Duration {
	return time.Duration(lo+g.rnd.IntN(hi-lo+1)) * time.Millisecond
}

var severities = []struct {
	num  plog.SeverityNumber
	text string
}{
	{plog.SeverityNumberDebug, "DEBUG"},
	{plog.SeverityNumberInfo, "INFO"},
	{plog.SeverityNumberInfo, "INFO"},
	{plog.SeverityNumberInfo, "INFO"},
	{plog.SeverityNumberWarn, "WARN"},
	{plog.SeverityNumberError, "ERROR"},
}

// batch builds about minSpans spans (whole traces, so a little more) and their logs,
// grouped by service into one ResourceSpans and one ResourceLogs each.
func (g *generator) batch(minSpans int, now time.Time) (ptrace.Traces, plog.Logs, batchCounts) {
	td := ptrace.NewTraces()
	ld := plog.NewLogs()
	spansBy := make([]ptrace.SpanSlice, len(g.services))
	logsBy := make([]plog.LogRecordSlice, len(g.services))
	for i := range g.services {
		s := &g.services[i]
		rs := td.ResourceSpans().AppendEmpty()
		setResource(rs.Resource(), s)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("otlpgen/" + s.lang)
		ss.Scope().SetVersion("0.1.0")
		spansBy[i] = ss.Spans()
		if g.logsPerTrace > 0 {
			rl := ld.ResourceLogs().AppendEmpty()
			setResource(rl.Resource(), s)
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName("otlpgen/" + s.lang)
			logsBy[i] = sl.LogRecords()
		}
	}
	by := make([]counts, len(g.services))
	var c counts
	for c.spans < max(minSpans, 1) {
		i := g.rnd.IntN(len(g.services))
		var lr plog.LogRecordSlice
		if g.logsPerTrace > 0 {
			lr = logsBy[i]
		}
		t := g.trace(&g.services[i], spansBy[i], lr, now)
		c.add(t)
		by[i].add(t)
	}
	bc := batchCounts{counts: c, byService: make(map[string]counts, len(g.services))}
	for i := range g.services {
		bc.byService[g.services[i].name] = by[i]
	}
	return td, ld, bc
}

func setResource(r pcommon.Resource, s *service) {
	a := r.Attributes()
	a.PutStr("service.name", s.name)
	a.PutStr("service.version", s.version)
	a.PutStr("deployment.environment.name", s.env)
	a.PutStr("telemetry.sdk.language", s.lang)
	a.PutStr("telemetry.sdk.name", "opentelemetry")
	a.PutStr("telemetry.sdk.version", s.sdkVersion)
	a.PutStr("host.name", s.name+"-7c9f")
	a.PutStr("container.id", containerID(s))
}

// containerID is the container service s runs in, as the container detector (traces) and
// the eBPF profiler (profiles) both name it: what links its transactions to its profile.
func containerID(s *service) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(s.name)))
}

// trace appends one trace: an http.server root with a db child, an http.client child and
// sometimes an internal span; an error with an exception event at the given ratio; and
// logs attached to its spans.
func (g *generator) trace(s *service, spans ptrace.SpanSlice, logs plog.LogRecordSlice, now time.Time) counts {
	var c counts
	c.traces = 1
	tid := g.traceID()
	rt := s.routes[g.rnd.IntN(len(s.routes))]
	failed := g.rnd.Float64() < g.exceptionRate

	rootDur := g.ms(20, 250)
	start := now.Add(-rootDur)
	root := spans.AppendEmpty()
	rootID := g.spanID()
	root.SetTraceID(tid)
	root.SetSpanID(rootID)
	root.SetName(rt.method + " " + rt.route)
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	g.recent.add(s.name, tid, rootID)
	ra := root.Attributes()
	ra.PutStr("http.request.method", rt.method)
	ra.PutStr("http.route", rt.route)
	ra.PutStr("url.path", rt.path)
	ra.PutStr("url.scheme", "http")
	ra.PutStr("server.address", s.name+".internal")
	ra.PutInt("server.port", 8080)
	ra.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) otlpgen/0.1")
	ra.PutStr("client.address", fmt.Sprintf("10.0.%d.%d", g.rnd.IntN(8), 2+g.rnd.IntN(250)))
	status := 200
	if failed {
		status = 500
	}
	ra.PutInt("http.response.status_code", int64(status))
	c.spans++

	// db child
	db := spans.AppendEmpty()
	dbID := g.spanID()
	dbStart := start.Add(g.ms(1, 5))
	dbEnd := dbStart.Add(g.ms(1, 15))
	db.SetTraceID(tid)
	db.SetSpanID(dbID)
	db.SetParentSpanID(rootID)
	db.SetKind(ptrace.SpanKindClient)
	db.SetStartTimestamp(pcommon.NewTimestampFromTime(dbStart))
	db.SetEndTimestamp(pcommon.NewTimestampFromTime(dbEnd))
	da := db.Attributes()
	da.PutStr("db.system.name", s.dbSystem)
	da.PutStr("db.namespace", s.dbName)
	if s.dbSystem == "redis" {
		db.SetName("GET")
		da.PutStr("db.operation.name", "GET")
		da.PutStr("db.query.text", "GET charge:ch_3PZ1")
	} else {
		db.SetName("SELECT " + s.dbName + ".items")
		da.PutStr("db.operation.name", "SELECT")
		da.PutStr("db.collection.name", "items")
		da.PutStr("db.query.text", itemsQuery)
	}
	da.PutStr("server.address", s.dbSystem+".internal")
	c.spans++

	// http.client child
	hc := spans.AppendEmpty()
	hcID := g.spanID()
	hcStart := dbEnd.Add(g.ms(0, 3))
	hcEnd := hcStart.Add(g.ms(2, max(3, int(rootDur/time.Millisecond)/2)))
	if hcEnd.After(now) {
		hcEnd = now
	}
	hc.SetTraceID(tid)
	hc.SetSpanID(hcID)
	hc.SetParentSpanID(rootID)
	hc.SetName("POST")
	hc.SetKind(ptrace.SpanKindClient)
	hc.SetStartTimestamp(pcommon.NewTimestampFromTime(hcStart))
	hc.SetEndTimestamp(pcommon.NewTimestampFromTime(hcEnd))
	ha := hc.Attributes()
	ha.PutStr("http.request.method", "POST")
	ha.PutStr("url.full", "https://"+s.peer+"/v1/quote")
	putPeer(ha, s.peer)
	ha.PutInt("http.response.status_code", 200)
	c.spans++

	// sometimes (always in a request-shaped trace) an internal span under the http.client call
	if g.spansPerTrace >= 4 || g.spansPerTrace == 0 && g.rnd.IntN(2) == 0 {
		in := spans.AppendEmpty()
		in.SetTraceID(tid)
		in.SetSpanID(g.spanID())
		in.SetParentSpanID(hcID)
		in.SetName("serialize quote")
		in.SetKind(ptrace.SpanKindInternal)
		in.SetStartTimestamp(pcommon.NewTimestampFromTime(hcStart))
		in.SetEndTimestamp(pcommon.NewTimestampFromTime(hcStart.Add(time.Millisecond)))
		in.Attributes().PutInt("quote.items", int64(1+g.rnd.IntN(9)))
		c.spans++
	}
	for i := 4; i < g.spansPerTrace; i++ {
		g.child(s, spans, tid, rootID, i, start, now)
		c.spans++
	}

	var exc exception
	if failed {
		exc = s.exceptions[g.rnd.IntN(len(s.exceptions))]
		// the error happened in the db call and surfaced in the server span
		db.Status().SetCode(ptrace.StatusCodeError)
		db.Status().SetMessage(exc.message)
		root.Status().SetCode(ptrace.StatusCodeError)
		root.Status().SetMessage(exc.message)
		ev := root.Events().AppendEmpty()
		ev.SetName("exception")
		ev.SetTimestamp(pcommon.NewTimestampFromTime(dbEnd))
		ea := ev.Attributes()
		ea.PutStr("exception.type", exc.typ)
		ea.PutStr("exception.message", exc.message)
		ea.PutStr("exception.stacktrace", exc.stacktrace)
		ea.PutBool("exception.escaped", true)
		c.exceptions++
		c.spanExceptions++
	}

	if logs == (plog.LogRecordSlice{}) {
		return c
	}
	for j := range g.logsPerTrace {
		lr := logs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(j) * time.Millisecond)))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
		lr.SetTraceID(tid)
		if j%2 == 0 {
			lr.SetSpanID(rootID)
		} else {
			lr.SetSpanID(dbID)
		}
		g.logRecord(lr, s, rt)
		c.logs++
	}
	if failed {
		// one more log: the error with exception.* attributes
		lr := logs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(dbEnd))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
		lr.SetTraceID(tid)
		lr.SetSpanID(dbID)
		if g.exceptionLogOnSpan {
			lr.SetSpanID(rootID)
		}
		lr.SetSeverityNumber(plog.SeverityNumberError)
		lr.SetSeverityText("ERROR")
		lr.Body().SetStr(rt.method + " " + rt.route + " failed: " + exc.message)
		la := lr.Attributes()
		putCode(la, s, "handle"+rt.method, 212)
		la.PutStr("exception.type", exc.typ)
		la.PutStr("exception.message", exc.message)
		la.PutStr("exception.stacktrace", exc.stacktrace)
		c.logs++
		c.exceptions++
	}
	return c
}

// child appends the i-th extra child of a request-shaped trace under the root: db
// queries and http.client calls in turn, laid one after another inside the root.
func (g *generator) child(s *service, spans ptrace.SpanSlice, tid pcommon.TraceID, rootID pcommon.SpanID, i int, start, end time.Time) {
	sp := spans.AppendEmpty()
	sp.SetTraceID(tid)
	sp.SetSpanID(g.spanID())
	sp.SetParentSpanID(rootID)
	sp.SetKind(ptrace.SpanKindClient)
	from := start.Add(time.Duration(i) * time.Millisecond)
	to := from.Add(g.ms(1, 4))
	if to.After(end) {
		to = end
	}
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(from))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(to))
	a := sp.Attributes()
	if i%2 == 0 && s.dbSystem == "redis" {
		sp.SetName("HGETALL")
		a.PutStr("db.system.name", s.dbSystem)
		a.PutStr("db.namespace", s.dbName)
		a.PutStr("db.operation.name", "HGETALL")
		a.PutStr("db.query.text", "HGETALL customer:cus_Q8v2Lm:payment_methods")
		a.PutStr("server.address", s.dbSystem+".internal")
		a.PutInt("server.port", 6379)
		return
	}
	if i%2 == 0 {
		sp.SetName("SELECT " + s.dbName + ".orders")
		a.PutStr("db.system.name", s.dbSystem)
		a.PutStr("db.namespace", s.dbName)
		a.PutStr("db.operation.name", "SELECT")
		a.PutStr("db.collection.name", "orders")
		a.PutStr("db.query.text", ordersQuery)
		a.PutStr("server.address", s.dbSystem+".internal")
		return
	}
	sp.SetName("GET")
	a.PutStr("http.request.method", "GET")
	a.PutStr("url.full", "https://"+s.peer+"/v1/rates?currency=EUR")
	putPeer(a, s.peer)
	a.PutInt("http.response.status_code", 200)
}

// The db.query.text of the SQL services' db spans: about 90 characters, as an ORM writes them.
const (
	itemsQuery  = "SELECT id, sku, qty, price, updated_at FROM items WHERE sku = $1 AND warehouse_id = $2 LIMIT 1"
	ordersQuery = "SELECT id, status, total, currency FROM orders WHERE customer_id = $1 ORDER BY id DESC LIMIT 20"
)

// putPeer sets server.address and server.port of an http.client span from a host:port.
func putPeer(a pcommon.Map, peer string) {
	host, port, err := net.SplitHostPort(peer)
	if err != nil {
		a.PutStr("server.address", peer)
		return
	}
	a.PutStr("server.address", host)
	if n, err := strconv.Atoi(port); err == nil {
		a.PutInt("server.port", int64(n))
	}
}

// codeFiles is where each language's logging call sites live.
var codeFiles = map[string]string{
	"go":     "/app/server/handlers.go",
	"java":   "com/example/inventory/StockController.java",
	"python": "/app/payments/views.py",
}

// putCode sets the code.* attributes a logging bridge records for its call site.
func putCode(a pcommon.Map, s *service, function string, line int) {
	a.PutStr("code.function.name", function)
	a.PutStr("code.file.path", codeFiles[s.lang])
	a.PutInt("code.line.number", int64(line))
}

// logRecord fills one log record of a request to route rt: a severity, a body as an
// application writes it, the call site, the request's method and route, and what the
// message is about.
func (g *generator) logRecord(lr plog.LogRecord, s *service, rt route) {
	sev := severities[g.rnd.IntN(len(severities))]
	lr.SetSeverityNumber(sev.num)
	lr.SetSeverityText(sev.text)
	la := lr.Attributes()
	putCode(la, s, "handle"+rt.method, 40+g.rnd.IntN(120))
	la.PutStr("http.request.method", rt.method)
	la.PutStr("http.route", rt.route)
	switch sev.num {
	case plog.SeverityNumberDebug:
		key := "route:" + rt.path
		lr.Body().SetStr(fmt.Sprintf("cache lookup for %s took %dµs (hit=%t)", key, g.rnd.IntN(900), g.rnd.IntN(2) == 0))
		la.PutStr("cache.key", key)
	case plog.SeverityNumberWarn:
		ms := 100 + g.rnd.IntN(400)
		lr.Body().SetStr(fmt.Sprintf("slow %s query on %s: %dms over the 100ms budget", s.dbSystem, s.dbName, ms))
		la.PutStr("db.system.name", s.dbSystem)
		la.PutDouble("db.duration_ms", float64(ms))
	case plog.SeverityNumberError:
		lr.Body().SetStr("upstream " + s.peer + " answered 503 Service Unavailable, retrying in 200ms")
		la.PutStr("server.address", s.peer)
		la.PutInt("retry.attempt", int64(1+g.rnd.IntN(3)))
	default:
		lr.Body().SetStr(fmt.Sprintf("%s %s completed with 200 in %dms", rt.method, rt.path, 2+g.rnd.IntN(240)))
		la.PutInt("http.response.status_code", 200)
		la.PutInt("http.response.body.size", int64(g.rnd.IntN(4096)))
		la.PutStr("enduser.id", fmt.Sprintf("user-%d", 1000+g.rnd.IntN(9000)))
	}
}
