package translate

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// name is a span or transaction name built from up to three parts (for example
// method, " ", route), so building it costs no allocation.
type name [3]string

func (n name) String() string { return n[0] + n[1] + n[2] }

func (n name) empty() bool { return n[0] == "" && n[1] == "" && n[2] == "" }

// Transaction sources (transaction_info.source, sentry.segment.name.source). Relay sets
// "unknown" itself; clients must not send it.
const (
	sourceRoute  = "route"
	sourceURL    = "url"
	sourceTask   = "task"
	sourceCustom = "custom"
)

// semInfo is what the semantic conventions say about a span.
type semInfo struct {
	op     string
	name   name
	source string
	status string // Sentry span status
	http   bool   // an HTTP span: method, status code or route
	scrub  bool   // has an attribute scrubFor may change (semAttrs.scrub)
}

// semAttrs are the attributes the conventions look at, found in one pass.
type semAttrs struct {
	method, urlFull, urlPath, route, serverAddr          string
	httpCode                                             int64
	dbSystem, dbQuery, dbOperation, dbCollection         string
	rpcSystem, rpcService, rpcMethod                     string
	grpcCode                                             int64
	hasGRPC                                              bool
	msgSystem, msgOperation, msgDestination, faasTrigger string
	sentryOp                                             string
	scrub                                                bool // has an attribute scrubFor may change
}

func (a *semAttrs) scan(m pcommon.Map) {
	for k, v := range m.All() {
		if len(k) < 7 { // no key below is shorter ("user.id"): skip the switch cheaply
			continue
		}
		switch k {
		case "http.request.method", "http.method":
			a.method = str(v)
		case "url.full", "http.url":
			a.urlFull, a.scrub = str(v), true
		case "url.path":
			a.urlPath = str(v)
		case "http.target":
			a.urlPath, a.scrub = str(v), true
		case "url.query", "client.address", "http.client_ip", "net.sock.peer.addr", "net.peer.ip",
			"network.peer.address", "network.peer.port",
			"enduser.id", "user.id", "user.email", "user.name", "user.ip_address":
			a.scrub = true // see scrubFor
		case "http.route":
			a.route = str(v)
		case "server.address", "net.peer.name", "net.host.name":
			if a.serverAddr == "" || k == "server.address" {
				a.serverAddr = str(v)
			}
		case "http.response.status_code", "http.status_code":
			a.httpCode = intOf(v)
		case "db.system.name", "db.system":
			a.dbSystem = str(v)
		case "db.query.text", "db.statement":
			a.dbQuery = str(v)
		case "db.operation.name", "db.operation":
			a.dbOperation = str(v)
		case "db.collection.name", "db.sql.table":
			a.dbCollection = str(v)
		case "rpc.system":
			a.rpcSystem = str(v)
		case "rpc.service":
			a.rpcService = str(v)
		case "rpc.method":
			a.rpcMethod = str(v)
		case "rpc.grpc.status_code":
			a.grpcCode, a.hasGRPC = intOf(v), true
		case "messaging.system":
			a.msgSystem = str(v)
		case "messaging.operation.type", "messaging.operation":
			a.msgOperation = str(v)
		case "messaging.destination.name", "messaging.destination":
			a.msgDestination = str(v)
		case "faas.trigger":
			a.faasTrigger = str(v)
		case "sentry.op":
			a.sentryOp = str(v)
		default:
			if k[0] == 'h' && len(k) > len("http.request.header.") &&
				(strings.HasPrefix(k, "http.request.header.") || strings.HasPrefix(k, "http.response.header.")) {
				a.scrub = true
			}
		}
	}
}

func str(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

func intOf(v pcommon.Value) int64 {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		if f := v.Double(); f > 0 && f < 1000 {
			return int64(f)
		}
	case pcommon.ValueTypeStr:
		i, _ := strconv.ParseInt(v.Str(), 10, 64)
		return i
	}
	return 0
}

// semantics derives op, name, source and status of a span from its kind,
// status and attributes.
func semantics(sp ptrace.Span) semInfo {
	var a semAttrs
	a.scan(sp.Attributes())
	kind := sp.Kind()
	si := semInfo{source: sourceCustom, name: name{sp.Name()}}
	switch {
	case a.method != "" || a.httpCode != 0 || a.route != "":
		si.http = true
		httpSemantics(&si, &a, kind, sp.Name())
	case a.dbSystem != "":
		si.op, si.source = "db", sourceTask
		switch {
		case a.dbQuery != "":
			si.name = name{a.dbQuery}
		case a.dbOperation != "" && a.dbCollection != "":
			si.name = join(a.dbOperation, a.dbCollection)
		}
	case a.rpcSystem != "" || a.hasGRPC:
		si.op, si.source = "rpc", sourceRoute
		if a.rpcService != "" && a.rpcMethod != "" {
			si.name = name{a.rpcService, "/", a.rpcMethod}
		}
	case a.msgSystem != "":
		si.op, si.source = messagingOp(a.msgOperation, kind), sourceRoute
	case a.faasTrigger != "":
		si.op, si.source = a.faasTrigger, sourceRoute // the trigger value, as both official OTel mappings do
	default:
		si.op = kindOp(kind)
	}
	if a.sentryOp != "" {
		si.op = a.sentryOp
	}
	if si.name.empty() {
		si.name = name{si.op}
	}
	si.status = status(sp.Status(), a.httpCode, a.grpcCode, a.hasGRPC)
	si.scrub = a.scrub
	return si
}

// httpSemantics sets the op, and the name and its source where the
// attributes say more than the span name, of an HTTP span.
func httpSemantics(si *semInfo, a *semAttrs, kind ptrace.SpanKind, spanName string) {
	switch kind {
	case ptrace.SpanKindServer:
		si.op = "http.server"
		switch {
		case a.route != "":
			si.name, si.source = join(a.method, a.route), sourceRoute
		case routeName(spanName, a.method):
			// otelhttp v0.72 around a ServeMux records no http.route but names
			// the span "GET /users/{id}"; the conventions make a server span
			// name's target the low-cardinality route.
			si.name, si.source = name{spanName}, sourceRoute
		case a.urlPath != "":
			si.name, si.source = join(a.method, stripQuery(a.urlPath)), sourceURL
		case a.urlFull != "":
			si.name, si.source = join(a.method, urlPath(a.urlFull)), sourceURL
		}
	case ptrace.SpanKindClient:
		si.op = "http.client"
		switch {
		case a.urlFull != "":
			si.name, si.source = join(a.method, stripURL(a.urlFull)), sourceURL
		case a.serverAddr != "" && a.urlPath != "":
			si.name = name{a.method, " " + a.serverAddr, stripQuery(a.urlPath)} // rare: allocates
			si.source = sourceURL
		}
	default:
		si.op = "http"
	}
}

// routeName reports whether a server span's name is "<method> /<route>", the
// form the HTTP conventions give it ("{method} {http.route}"): the method the
// span records, one space, then a path without query, fragment or blanks.
func routeName(spanName, method string) bool {
	if method == "" || len(spanName) < len(method)+2 || spanName[:len(method)] != method ||
		spanName[len(method)] != ' ' || spanName[len(method)+1] != '/' {
		return false
	}
	return !strings.ContainsAny(spanName[len(method)+1:], "?# \t")
}

// join is "a b", or b alone when a is empty.
func join(a, b string) name {
	if a == "" {
		return name{b}
	}
	return name{a, " ", b}
}

func stripQuery(p string) string {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '?' || c == '#' {
			return p[:i]
		}
	}
	return p
}

// stripURL drops the userinfo, query and fragment of a URL: they carry secrets
// and make names unbounded.
func stripURL(u string) string { return stripUserinfo(stripQuery(u)) }

// urlPath is the path of a full URL.
func urlPath(u string) string {
	u = stripQuery(u)
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			return rest[j:]
		}
		return "/"
	}
	return u
}

// messagingOp follows Sentry's queue module ops (queue.publish, queue.process, …).
func messagingOp(op string, kind ptrace.SpanKind) string {
	switch op {
	case "publish", "send":
		return "queue.publish"
	case "create":
		return "queue.create"
	case "receive":
		return "queue.receive"
	case "process", "deliver":
		return "queue.process"
	case "settle":
		return "queue.settle"
	}
	switch kind {
	case ptrace.SpanKindProducer:
		return "queue.publish"
	case ptrace.SpanKindConsumer:
		return "queue.process"
	}
	return "message"
}

func kindOp(k ptrace.SpanKind) string {
	switch k {
	case ptrace.SpanKindServer:
		return "server"
	case ptrace.SpanKindClient:
		return "client"
	case ptrace.SpanKindProducer:
		return "producer"
	case ptrace.SpanKindConsumer:
		return "consumer"
	}
	return "default"
}

// status maps OTel status plus the HTTP or gRPC code to a Sentry span status.
// An explicit OK wins; otherwise the codes decide; an error without a code is
// internal_error (as in sentry-go's and @sentry/opentelemetry's mappings)
// unless its message already is a Sentry status.
func status(st ptrace.Status, httpCode, grpcCode int64, hasGRPC bool) string {
	if st.Code() == ptrace.StatusCodeOk {
		return "ok"
	}
	derived := ""
	switch {
	case hasGRPC && grpcCode >= 0 && grpcCode < int64(len(grpcStatus)):
		derived = grpcStatus[grpcCode]
	case httpCode >= 400 && httpCode < 600:
		derived = httpStatus(httpCode)
	case httpCode >= 100 && httpCode < 400:
		derived = "ok"
	}
	if st.Code() != ptrace.StatusCodeError {
		if derived == "" {
			return "ok"
		}
		return derived
	}
	if derived != "" && derived != "ok" {
		return derived
	}
	if m := st.Message(); m != "" && knownStatus(m) && m != "ok" {
		return sentryStatus[m]
	}
	return "internal_error"
}

// grpcStatus is indexed by gRPC code 0..16.
var grpcStatus = [...]string{
	"ok", "cancelled", "unknown_error", "invalid_argument", "deadline_exceeded",
	"not_found", "already_exists", "permission_denied", "resource_exhausted",
	"failed_precondition", "aborted", "out_of_range", "unimplemented",
	"internal_error", "unavailable", "data_loss", "unauthenticated",
}

// httpStatus follows Sentry SDKs' getSpanStatusFromHttpCode.
func httpStatus(c int64) string {
	switch c {
	case 400:
		return "invalid_argument"
	case 401:
		return "unauthenticated"
	case 403:
		return "permission_denied"
	case 404:
		return "not_found"
	case 409:
		return "already_exists"
	case 413:
		return "failed_precondition"
	case 429:
		return "resource_exhausted"
	case 499:
		return "cancelled"
	case 501:
		return "unimplemented"
	case 503:
		return "unavailable"
	case 504:
		return "deadline_exceeded"
	}
	if c < 500 {
		return "invalid_argument"
	}
	return "internal_error"
}

var sentryStatus = func() map[string]string {
	m := map[string]string{"unknown": "unknown_error"}
	for _, s := range grpcStatus {
		m[s] = s
	}
	return m
}()

func knownStatus(s string) bool { _, ok := sentryStatus[s]; return ok }

// v2Status is the span v2 status: "ok" or "error".
func v2Status(sentry string) string {
	if sentry == "ok" {
		return "ok"
	}
	return "error"
}

// platform maps telemetry.sdk.language to a Sentry event platform.
func platform(lang string) string {
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
	return "other"
}

// kindValue is written as sentry.kind on span v2 items: the lower-case span
// kind, as in @sentry/conventions' examples.
func kindValue(k ptrace.SpanKind) string {
	switch k {
	case ptrace.SpanKindInternal:
		return "internal"
	case ptrace.SpanKindServer, ptrace.SpanKindClient, ptrace.SpanKindProducer, ptrace.SpanKindConsumer:
		return kindOp(k) // the op of a span with no other semantics is its kind's name
	}
	return ""
}

// kindName is written as otel.kind, like Sentry's OTel span processors do.
func kindName(k ptrace.SpanKind) string {
	switch k {
	case ptrace.SpanKindServer:
		return "SERVER"
	case ptrace.SpanKindClient:
		return "CLIENT"
	case ptrace.SpanKindProducer:
		return "PRODUCER"
	case ptrace.SpanKindConsumer:
		return "CONSUMER"
	case ptrace.SpanKindInternal:
		return "INTERNAL"
	}
	return ""
}
