package conformance

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"testing"
	"time"

	"github.com/getsentry/sentry-go"
	sentryhttp "github.com/getsentry/sentry-go/http"
	sentryhttpclient "github.com/getsentry/sentry-go/httpclient"
)

// The program instrumented with sentry-go v0.50.0 as its documentation shows:
// sentryhttp around the server, the Sentry round tripper on the client,
// StartSpan for the database call, CaptureException, and the logs API.

// Settings both sides share, so that they describe the same deployment.
const (
	release     = "1.0.0"
	environment = "conformance"
	serviceName = "shop"
)

type sentryGo struct {
	hub *sentry.Hub
	hc  *http.Client
}

func newSentryGo(t *testing.T, dsn string) *sentryGo {
	t.Helper()
	client, err := sentry.NewClient(sentry.ClientOptions{
		Dsn:              dsn,
		EnableTracing:    true,
		TracesSampleRate: 1,
		Release:          release,
		Environment:      environment,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close) // after flush: stops the transport's and the log batcher's goroutines
	return &sentryGo{
		hub: sentry.NewHub(client, sentry.NewScope()),
		hc:  &http.Client{Transport: sentryhttpclient.NewSentryRoundTripper(nil)},
	}
}

// wrapServer gives each request its own clone of the hub (what sentryhttp
// does with the global hub) and then lets sentryhttp start the transaction.
func (s *sentryGo) wrapServer(h http.Handler) http.Handler {
	traced := sentryhttp.New(sentryhttp.Options{}).Handle(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traced.ServeHTTP(w, r.WithContext(sentry.SetHubOnContext(r.Context(), s.hub.Clone())))
	})
}

func (s *sentryGo) client() *http.Client { return s.hc }

func (*sentryGo) query(ctx context.Context, q dbQuery) {
	span := sentry.StartSpan(ctx, "db", sentry.WithDescription(q.text))
	span.SetData("db.system", q.system)
	span.SetData("db.operation", q.operation)
	span.SetData("db.collection.name", q.collection)
	span.Status = sentry.SpanStatusOK // the query succeeded, as a database integration records it
	span.Finish()
}

func (*sentryGo) recordError(ctx context.Context, err error) {
	sentry.GetHubFromContext(ctx).CaptureException(err)
}

func (*sentryGo) recordAndLogError(ctx context.Context, err error, msg string) {
	sentry.GetHubFromContext(ctx).CaptureException(err)
	sentry.NewLogger(ctx).Error().
		String("exception.type", fmt.Sprintf("%T", err)).
		String("exception.message", err.Error()).
		String("exception.stacktrace", string(debug.Stack())).
		Emit(msg)
}

func (*sentryGo) logError(ctx context.Context, err error, msg string) {
	sentry.GetHubFromContext(ctx).CaptureException(err)
	sentry.NewLogger(ctx).Error().
		String("exception.type", fmt.Sprintf("%T", err)).
		String("exception.message", err.Error()).
		String("exception.stacktrace", string(debug.Stack())).
		Emit(msg)
}

func (*sentryGo) log(ctx context.Context, level, msg string, attrs ...logAttr) {
	l := sentry.NewLogger(ctx)
	var e sentry.LogEntry
	switch level {
	case "warn":
		e = l.Warn()
	case "error":
		e = l.Error()
	default:
		e = l.Info()
	}
	for _, a := range attrs {
		switch v := a.value.(type) {
		case string:
			e = e.String(a.key, v)
		case int64:
			e = e.Int64(a.key, v)
		case bool:
			e = e.Bool(a.key, v)
		}
	}
	e.Emit(msg)
}

// flush waits until everything was sent (a bound, not a timed assertion).
func (s *sentryGo) flush(t *testing.T) {
	if !s.hub.Flush(30 * time.Second) {
		t.Fatal("sentry-go did not flush")
	}
}
