package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// --fail-ratio answers about that share of the requests --fail-status, stores
// nothing of them, and draws the same answers for the same --seed.
func TestFailRatio(t *testing.T) {
	statuses := func(seed uint64) ([]int, Totals) {
		h, st, _ := newTestHandler(handlerConfig{Answers: newAnswerer(seed, 0.2, 503, false)})
		var got []int
		for range 1000 {
			got = append(got, post(t, h, "/api/1/envelope/", logEnv, nil).status)
		}
		return got, st.snapshot(time.Now())
	}
	a, tot := statuses(7)
	failed := tot.RequestsStatus["503"]
	if failed < 150 || failed > 250 {
		t.Errorf("%d of 1000 answered 503 at --fail-ratio 0.2", failed)
	}
	if tot.RequestsStatus["200"]+failed != 1000 || tot.Envelopes != 1000-failed || tot.Logs != 2*(1000-failed) {
		t.Errorf("totals %+v: the failed requests must store nothing", tot)
	}
	if b, _ := statuses(7); !slices.Equal(a, b) {
		t.Error("the same seed drew different answers")
	}
	if c, _ := statuses(8); slices.Equal(a, c) {
		t.Error("another seed drew the same answers")
	}
}

// --chaos answers resets, 503s, 429s (with a chaos X-Sentry-Rate-Limits value
// and Retry-After: 1) and 200s at TestInvariantUnderChaos's odds, and stores
// exactly the envelopes it answered 200.
func TestChaos(t *testing.T) {
	st := newStats(time.Now())
	st.tl = newTimeline(time.Now())
	h := newHandler(handlerConfig{Answers: newAnswerer(3, 0, 0, true), Limits: envelope.RelayDefaults()}, st)
	srv := httptest.NewServer(h)
	defer srv.Close()
	count := map[string]int{}
	for range 400 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/1/envelope/", bytes.NewReader(transactionEnv))
		req.Header.Set("X-Sentry-Auth", auth)
		// a fresh connection each time: a reset connection is not reused
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(err.Error(), "EOF") {
				t.Fatalf("a reset surfaced as %v", err)
			}
			count["reset"]++
			continue
		}
		resp.Body.Close()
		count[http.StatusText(resp.StatusCode)]++
		if resp.StatusCode == http.StatusTooManyRequests {
			if resp.Header.Get("Retry-After") != "1" || !slices.Contains(chaosLimits, resp.Header.Get("X-Sentry-Rate-Limits")) {
				t.Errorf("429 with headers %v", resp.Header)
			}
		}
	}
	for kind, want := range map[string]int{"reset": 40, "Service Unavailable": 40, "Too Many Requests": 80, "OK": 240} {
		if got := count[kind]; got < want/2 || got > want*2 {
			t.Errorf("%s: %d of 400, want about %d (all: %v)", kind, got, want, count)
		}
	}
	tot := st.snapshot(time.Now())
	if tot.Envelopes != uint64(count["OK"]) || tot.Spans != 3*tot.Envelopes || tot.RequestsStatus["reset"] != uint64(count["reset"]) {
		t.Errorf("stored %d envelopes, %d spans, %d resets; answered %v", tot.Envelopes, tot.Spans, tot.RequestsStatus["reset"], count)
	}
	// what the timeline saw adds up to the totals
	var sum [13]uint64
	for _, l := range st.takeTimeline(time.Time{}) {
		for i, f := range strings.Fields(l) {
			var v uint64
			for _, c := range f {
				v = v*10 + uint64(c-'0')
			}
			sum[i] += v
		}
	}
	if sum[1] != tot.Requests || sum[2] != tot.Envelopes || sum[4] != tot.Spans || sum[7] != uint64(count["OK"]) ||
		sum[8] != uint64(count["Too Many Requests"]) || sum[9] != uint64(count["Service Unavailable"]) || sum[10] != uint64(count["reset"]) {
		t.Errorf("timeline sums %v, totals %+v, answers %v", sum, tot, count)
	}
}

// The schedule: --hang-for holds one window from --hang-at after the origin;
// --flap is up, down, up… from the origin.
func TestScheduleWindows(t *testing.T) {
	origin := time.Unix(1000, 0)
	at := func(s *schedule, d time.Duration) time.Duration {
		s.origin = origin
		u := s.downUntil(origin.Add(d))
		if u.IsZero() {
			return -1
		}
		return u.Sub(origin)
	}
	hang := &schedule{hangAt: 2 * time.Second, hangFor: 3 * time.Second}
	flap := &schedule{flap: 10 * time.Second}
	for _, c := range []struct {
		s    *schedule
		at   time.Duration
		want time.Duration // -1: up
	}{
		{hang, 0, -1}, {hang, 1999 * time.Millisecond, -1}, {hang, 2 * time.Second, 5 * time.Second},
		{hang, 4 * time.Second, 5 * time.Second}, {hang, 5 * time.Second, -1}, {hang, time.Hour, -1},
		{flap, 0, -1}, {flap, 9 * time.Second, -1}, {flap, 10 * time.Second, 20 * time.Second},
		{flap, 19 * time.Second, 20 * time.Second}, {flap, 20 * time.Second, -1}, {flap, 35 * time.Second, 40 * time.Second},
	} {
		if got := at(c.s, c.at); got != c.want {
			t.Errorf("%+v at %s: down until %s, want %s", c.s, c.at, got, c.want)
		}
	}
	var none *schedule
	if !none.downUntil(origin).IsZero() {
		t.Error("no schedule: down")
	}
	// the origin is the first request's time
	s := &schedule{hangFor: time.Second}
	if u := s.downUntil(origin); !u.Equal(origin.Add(time.Second)) {
		t.Errorf("first request at the origin: down until %s", u)
	}
}

// A request that arrives during a --hang-for window is held until the heal,
// then stored and answered; one after the heal is answered at once.
func TestHangForHeals(t *testing.T) {
	const window = 150 * time.Millisecond
	stop := make(chan struct{})
	defer close(stop)
	h, st, _ := newTestHandler(handlerConfig{Schedule: &schedule{hangFor: window}, Stop: stop})
	start := time.Now()
	if r := post(t, h, "/api/1/envelope/", logEnv, nil); r.status != 200 {
		t.Fatalf("held request answered %d, want 200 after the heal", r.status)
	}
	if d := time.Since(start); d < window {
		t.Errorf("answered after %s, inside the %s window", d, window)
	}
	tot := st.snapshot(time.Now())
	if tot.MaxHeld != 1 || tot.Held != 0 || tot.Logs != 2 || tot.FaultOriginMs < start.UnixMilli() || tot.FaultOriginMs > start.Add(window).UnixMilli() {
		t.Errorf("totals %+v", tot)
	}
	if r := post(t, h, "/api/1/envelope/", logEnv, nil); r.status != 200 {
		t.Fatalf("after the heal: %d", r.status)
	}
	if tot := st.snapshot(time.Now()); tot.MaxHeld != 1 || tot.Logs != 4 {
		t.Errorf("after the heal: totals %+v", tot)
	}
}

// A held request whose client gives up is counted aborted, not stored.
func TestHangForClientGivesUp(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	st := newStats(time.Now())
	h := newHandler(handlerConfig{Schedule: &schedule{hangFor: time.Hour}, Stop: stop, Limits: envelope.RelayDefaults()}, st)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Timeout: 100 * time.Millisecond}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/1/envelope/", bytes.NewReader(logEnv))
	req.Header.Set("X-Sentry-Auth", auth)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d during the hang", resp.StatusCode)
	}
	for i := 0; st.snapshot(time.Now()).Aborted != 1; i++ {
		if i > 500 {
			t.Fatal("the abandoned request was not counted aborted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tot := st.snapshot(time.Now()); tot.Logs != 0 || tot.Held != 0 {
		t.Errorf("totals %+v", tot)
	}
}

// The timeline has one line per second, none left out, and what each saw.
func TestTimelineLines(t *testing.T) {
	t0 := time.Unix(2000, 0)
	tl := newTimeline(t0)
	sum := summarize(mustParse(t, transactionEnv))
	tl.accepted(t0.Add(100*time.Millisecond), &sum, 0)
	tl.request(t0.Add(100*time.Millisecond), 200, 0)
	tl.request(t0.Add(2500*time.Millisecond), 503, 2)
	tl.request(t0.Add(2600*time.Millisecond), statusReset, 0)
	tl.request(t0.Add(3100*time.Millisecond), 429, 0)
	got := tl.take(t0.Add(3*time.Second), 1)
	want := []string{
		"2000 1 1 1 3 0 0 1 0 0 0 0 0",
		"2001 0 0 0 0 0 0 0 0 0 0 0 1",
		"2002 2 0 0 0 0 0 0 0 1 1 0 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rest := tl.take(time.Time{}, 0); !slices.Equal(rest, []string{"2003 1 0 0 0 0 0 0 1 0 0 0 0"}) {
		t.Errorf("the rest: %q", rest)
	}
	if len(strings.Fields(timelineHeader)) != 14 { // "#" and 13 columns
		t.Errorf("header %q does not name the 13 columns", timelineHeader)
	}
}

func mustParse(t *testing.T, b []byte) *envelope.Envelope {
	t.Helper()
	env, err := envelope.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestPrintMetrics(t *testing.T) {
	console := `{"Resource":[],"ScopeMetrics":[{"Scope":{"Name":"x"},"Metrics":[
 {"Name":"otelcol_exporter_sentry_sent_items","Data":{"DataPoints":[{"Attributes":[{"Key":"category","Value":{"Type":"STRING","Value":"span"}}],"Value":1}]}}]}]}
{"Resource":[],"ScopeMetrics":[{"Scope":{"Name":"x"},"Metrics":[
 {"Name":"otelcol_exporter_sentry_sent_items","Data":{"DataPoints":[{"Attributes":[{"Key":"project","Value":{"Type":"STRING","Value":"1"}},{"Key":"category","Value":{"Type":"STRING","Value":"span"}}],"Value":10}]}},
 {"Name":"otelcol_exporter_sentry_dropped_items","Data":{"DataPoints":[{"Attributes":[{"Key":"category","Value":{"Type":"STRING","Value":"error"}},{"Key":"reason","Value":{"Type":"STRING","Value":"deduplicated"}}],"Value":3}]}},
 {"Name":"otelcol_process_uptime","Data":{"DataPoints":[{"Attributes":[],"Value":1.5}]}},
 {"Name":"some_histogram","Data":{"DataPoints":[{"Attributes":[],"Count":4}]}}]}]}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "console.out")
	if err := os.WriteFile(path, []byte(console), 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := printMetrics(&b, path); err != nil {
		t.Fatal(err)
	}
	want := `otelcol_exporter_sentry_dropped_items{category="error",reason="deduplicated"} 3
otelcol_exporter_sentry_sent_items{category="span",project="1"} 10
otelcol_process_uptime{} 1.5
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	prom := "otelcol_exporter_queue_size{data_type=\"traces\"} 0\n"
	if err := os.WriteFile(path, []byte(prom), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := printMetrics(&b, path); err != nil || b.String() != prom {
		t.Errorf("Prometheus text: %q, %v", b.String(), err)
	}
	if err := os.WriteFile(path, []byte("{\"no\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := printMetrics(&b, path); err == nil {
		t.Error("no export: no error")
	}
}
