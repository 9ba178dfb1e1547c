package conformance

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The older semantic conventions (semconv v1.17, what otelhttp up to v0.4x
// and database instrumentations of that time wrote). otelhttp v0.72 can no
// longer emit them, so this instrumentation writes the same spans by hand:
// span named after the handler's operation, http.route from WithRouteTag,
// http.method/http.target/http.scheme/http.flavor/http.user_agent/
// net.host.name/net.host.port/net.sock.peer.addr/net.sock.peer.port/http.status_code, and db.system/db.statement/
// db.operation/db.sql.table. Logs and exceptions are as in otelSDK.
type otelOldSemconv struct {
	*otelSDK
}

func (o otelOldSemconv) wrapServer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := o.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		host, port := splitHostPort(r.Host)
		peer, peerPort := splitHostPort(r.RemoteAddr)
		ctx, span := o.tracer.Start(ctx, "server", trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
			attribute.String("http.method", r.Method),
			attribute.String("http.scheme", "http"),
			attribute.String("http.flavor", "1.1"),
			attribute.String("http.target", r.URL.RequestURI()),
			attribute.String("http.user_agent", r.UserAgent()),
			attribute.String("net.host.name", host),
			attribute.Int("net.host.port", port),
			attribute.String("net.sock.peer.addr", peer),
			attribute.Int("net.sock.peer.port", peerPort),
		))
		defer span.End()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		r = r.WithContext(ctx)
		captureHeaders(h).ServeHTTP(rec, r)
		if _, route, ok := strings.Cut(r.Pattern, " "); ok { // what otelhttp.WithRouteTag(route, h) recorded
			span.SetAttributes(attribute.String("http.route", route))
		}
		span.SetAttributes(attribute.Int("http.status_code", rec.status))
		if rec.status >= 500 {
			span.SetStatus(codes.Error, "")
		}
	})
}

func (o otelOldSemconv) client() *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		host, port := splitHostPort(r.URL.Host)
		ctx, span := o.tracer.Start(r.Context(), "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("http.method", r.Method),
			attribute.String("http.url", r.URL.String()),
			attribute.String("net.peer.name", host),
			attribute.Int("net.peer.port", port),
		))
		defer span.End()
		r = r.Clone(ctx)
		o.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
			return nil, err
		}
		span.SetAttributes(attribute.Int("http.status_code", resp.StatusCode))
		if resp.StatusCode >= 400 {
			span.SetStatus(codes.Error, "")
		}
		return resp, nil
	})}
}

func (o otelOldSemconv) query(ctx context.Context, q dbQuery) {
	_, span := o.tracer.Start(ctx, q.operation+" "+q.collection, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("db.system", q.system),
			attribute.String("db.statement", q.text),
			attribute.String("db.operation", q.operation),
			attribute.String("db.sql.table", q.collection),
		))
	span.End()
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func splitHostPort(hostport string) (string, int) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, 0
	}
	port, _ := strconv.Atoi(p)
	return host, port
}
