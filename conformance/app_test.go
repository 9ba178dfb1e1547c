package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The web program both sides instrument: a shop with a parametrised route, a
// database query, an outgoing HTTP call to itself, two exceptions caught and
// recorded (one of them also logged), one exception only logged (in the
// downstream request) and logs with attributes. It knows
// telemetry only through instrumentation, which each side implements the way
// its SDK's documentation shows.

// instrumentation is what the program asks of a telemetry SDK.
type instrumentation interface {
	// wrapServer instruments the server (the ServeMux with all routes).
	wrapServer(h http.Handler) http.Handler
	// client is the instrumented HTTP client for outgoing calls.
	client() *http.Client
	// query runs a database call as a child span of ctx's span.
	query(ctx context.Context, q dbQuery)
	// recordError records a caught exception on the current span.
	recordError(ctx context.Context, err error)
	// recordAndLogError records a caught exception and also logs it at error
	// level (OTel: a log record with exception.* attributes).
	recordAndLogError(ctx context.Context, err error, msg string)
	// logError reports a caught exception only by logging it at error level
	// (OTel: a log record with exception.* attributes, nothing on the span;
	// sentry-go: CaptureException and the log).
	logError(ctx context.Context, err error, msg string)
	// log emits a log record with attributes, linked to ctx's span.
	log(ctx context.Context, level, msg string, attrs ...logAttr)
}

// dbQuery is what a database instrumentation knows of one call.
type dbQuery struct {
	system, operation, collection, text string
}

// logAttr is one log attribute: a string, int64 or bool value.
type logAttr struct {
	key   string
	value any
}

// paymentError is the exception the payment provider answers with.
type paymentError struct{ code string }

func (e *paymentError) Error() string { return "card declined: " + e.code }

// stockError is the exception of a stock check that failed but did not fail
// the request.
type stockError struct{ sku string }

func (e *stockError) Error() string { return "stock check failed for " + e.sku }

// validationError is the exception of a bad order.
type validationError struct{ field string }

func (e *validationError) Error() string { return "invalid order: " + e.field + " must be positive" }

// shop is the program; self is its own base URL for the outgoing call.
type shop struct {
	in   instrumentation
	self string
}

func (s *shop) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", s.user)
	mux.HandleFunc("GET /checkout", s.checkout)
	mux.HandleFunc("GET /inventory/{sku}", s.inventory)
	mux.HandleFunc("POST /orders", s.order)
	return mux
}

func (s *shop) user(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s.in.query(ctx, dbQuery{
		system: "postgresql", operation: "SELECT", collection: "users",
		text: "SELECT id, name FROM users WHERE id = $1",
	})
	s.in.log(ctx, "info", "user loaded", logAttr{"app.user_id", r.PathValue("id")}, logAttr{"app.cache_hit", false})
	w.Header().Set("Content-Type", "application/json")
	// The test's own client is the only caller, and JSON is no page to script.
	fmt.Fprintf(w, `{"id":%q}`, r.PathValue("id")) //nolint:gosec // G705: see above
}

func (s *shop) checkout(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s.in.log(ctx, "info", "checkout started", logAttr{"app.cart_items", int64(3)})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.self+"/inventory/sku-42", http.NoBody)
	if resp, err := s.in.client().Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	err := error(&paymentError{code: "insufficient_funds"})
	s.in.recordAndLogError(ctx, err, "checkout failed")
	http.Error(w, "payment failed", http.StatusBadGateway)
}

func (s *shop) inventory(w http.ResponseWriter, r *http.Request) {
	s.in.query(r.Context(), dbQuery{
		system: "postgresql", operation: "SELECT", collection: "stock",
		text: "SELECT count FROM stock WHERE sku = $1",
	})
	s.in.logError(r.Context(), &stockError{sku: r.PathValue("sku")}, "stock check degraded")
	fmt.Fprint(w, `{"count":1}`)
}

func (s *shop) order(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	_, _ = io.Copy(io.Discard, r.Body)
	err := error(&validationError{field: "quantity"})
	s.in.recordError(ctx, err)
	s.in.log(ctx, "warn", "order rejected", logAttr{"app.reason", "quantity"})
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// What the program's clients send in headers; both sides must report the
// user agent and the request id.
const (
	userAgent = "conformance-client/1.0"
	requestID = "req-7f3a"
)

// capturedHeaders are the request headers the OTel side records as
// http.request.header.<name> (string array) attributes, as instrumentations
// configured to capture headers do (Java/.NET/Python agents:
// OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_SERVER_REQUEST; otelhttp has no
// such option, so the program adds them to its server span).
var capturedHeaders = []string{"X-Request-Id", "Authorization", "Cookie"}

// drive sends the program's traffic, one trace per request (plain client:
// each request starts its own trace).
func drive(t *testing.T, base string) {
	t.Helper()
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/users/42?fields=name", ""},
		{http.MethodGet, "/checkout?cart=7", ""},
		{http.MethodPost, "/orders?dry_run=1", `{"quantity":0}`},
	} {
		req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", userAgent)
		req.Header.Set("X-Request-Id", requestID)
		req.Header.Set("Authorization", "Bearer secret-token") // never to be sent without send_default_pii
		req.Header.Set("Cookie", "session=secret-session")     // never to be sent without send_default_pii
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
