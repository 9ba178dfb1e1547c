package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// timelineHeader names the columns of --timeline-file: one line per second of
// the wall clock (Unix seconds), with what the sink stored and answered in it.
// stored_* count what was accepted (answered 2xx); ok, rate_limited, failed,
// resets and aborted count requests by how they ended (failed: any other
// status, invalid envelopes included; aborted: the client went away while held
// or delayed); held is the most requests held open at once in that second.
const timelineHeader = "# sec requests envelopes transactions spans logs errors ok rate_limited failed resets aborted held"

// bucket is one second of the timeline.
type bucket struct {
	requests, envelopes, transactions, spans, logs, errors uint64
	ok, rateLimited, failed, resets, aborted               uint64
	held                                                   int64
}

// timeline keeps the seconds not yet written; its owner (stats) locks it.
type timeline struct {
	buckets map[int64]*bucket
	// next is the first second not yet written.
	next int64
}

func newTimeline(start time.Time) *timeline {
	return &timeline{buckets: map[int64]*bucket{}, next: start.Unix()}
}

// at returns the bucket of now, noting held as its most held so far.
func (t *timeline) at(now time.Time, held int64) *bucket {
	sec := max(now.Unix(), t.next)
	b := t.buckets[sec]
	if b == nil {
		b = &bucket{}
		t.buckets[sec] = b
	}
	b.held = max(b.held, held)
	return b
}

func (t *timeline) request(now time.Time, status int, held int64) {
	b := t.at(now, held)
	b.requests++
	switch {
	case status == statusReset:
		b.resets++
	case status == statusAborted:
		b.aborted++
	case status == http.StatusTooManyRequests:
		b.rateLimited++
	case status >= 200 && status < 300:
		b.ok++
	default:
		b.failed++
	}
}

func (t *timeline) accepted(now time.Time, sum *envSummary, held int64) {
	b := t.at(now, held)
	b.envelopes++
	for _, it := range sum.items {
		switch it.typ {
		case envelope.ItemTypeTransaction:
			b.transactions++
			b.spans += uint64(it.spans) + 1
		case envelope.ItemTypeSpan:
			b.spans += uint64(it.itemCount)
		case envelope.ItemTypeLog:
			b.logs += uint64(it.itemCount)
		case envelope.ItemTypeEvent:
			b.errors++
		}
	}
}

// take returns the lines of the seconds before until (all of them when until
// is zero), one per second with none left out, and forgets them. held is the
// number held now, for seconds in which nothing happened.
func (t *timeline) take(until time.Time, held int64) []string {
	last := until.Unix() - 1
	if until.IsZero() {
		last = t.next - 1
		for sec := range t.buckets {
			last = max(last, sec)
		}
	}
	var out []string
	for ; t.next <= last; t.next++ {
		b := t.buckets[t.next]
		if b == nil {
			b = &bucket{held: held}
		}
		delete(t.buckets, t.next)
		out = append(out, fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d %d %d %d", t.next, b.requests, b.envelopes,
			b.transactions, b.spans, b.logs, b.errors, b.ok, b.rateLimited, b.failed, b.resets, b.aborted, b.held))
	}
	return out
}

// takeTimeline returns the timeline lines of the seconds before until (all
// when until is zero); none without --timeline-file.
func (s *stats) takeTimeline(until time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tl == nil {
		return nil
	}
	return s.tl.take(until, s.t.Held)
}

// timelineWriter appends timeline lines to --timeline-file.
type timelineWriter struct {
	f *os.File
	w *bufio.Writer
}

func newTimelineWriter(path string) (*timelineWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	tw := &timelineWriter{f: f, w: bufio.NewWriter(f)}
	_, _ = tw.w.WriteString(timelineHeader + "\n") // a bufio.Writer keeps its first error for Flush
	return tw, tw.w.Flush()
}

func (tw *timelineWriter) write(lines []string) {
	if len(lines) == 0 {
		return
	}
	for _, l := range lines {
		_, _ = tw.w.WriteString(l) // a bufio.Writer keeps its first error for Flush, checked below
		_ = tw.w.WriteByte('\n')
	}
	if err := tw.w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "sentrysink: timeline file:", err)
	}
}

func (tw *timelineWriter) Close() error {
	_ = tw.w.Flush()
	return tw.f.Close()
}
