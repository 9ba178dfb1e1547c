package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"sync"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// Record is one line of --record-file: one stored transaction, span (span v2), log,
// error event or profile chunk, with the ids a checker needs to tell which request it belongs to and
// whether it was stored twice (make sdktraffic, make scaleout: loadtest/sdkcheck).
type Record struct {
	Project string `json:"project"`
	// Type is the envelope item type: transaction, span, log, event or profile_chunk.
	Type    string `json:"type"`
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
	// Parent is a span's parent_span_id (span v2).
	Parent string `json:"parent,omitempty"`
	// Name is a transaction's name (`transaction`), a span's name, an error event's
	// `transaction`, or a profile chunk's first frame's `module`.
	Name string `json:"name,omitempty"`
	// ProfilerID is a transaction's contexts.profile.profiler_id, or a profile chunk's
	// profiler_id; Thread a transaction's contexts.trace.data["thread.id"] as Sentry
	// stores it (a number as its decimal text).
	ProfilerID string `json:"profiler_id,omitempty"`
	Thread     string `json:"thread_id,omitempty"`
	// Children are the span ids of a transaction's child spans.
	Children []string `json:"children,omitempty"`
	// Segment and SegmentID are a span v2 item's is_segment and sentry.segment.id.
	Segment   bool   `json:"segment,omitempty"`
	SegmentID string `json:"segment_id,omitempty"`
	// Body is a log's body; Exception an error event's last exception "Type: value".
	Body      string `json:"body,omitempty"`
	Exception string `json:"exception,omitempty"`
	// DSCTransaction is the `transaction` of the envelope's trace header (DSC).
	DSCTransaction string `json:"dsc_transaction,omitempty"`
}

// recorder appends Records to a file as JSON lines.
type recorder struct {
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

func newRecorder(path string) (*recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &recorder{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

// record writes the records of an accepted envelope.
func (r *recorder) record(project string, env *envelope.Envelope) {
	recs := records(project, env)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range recs {
		b, _ := json.Marshal(&recs[i])
		// A bufio.Writer keeps its first error and stops writing; Close returns it.
		_, _ = r.w.Write(b)
		_ = r.w.WriteByte('\n')
	}
}

func (r *recorder) Flush() {
	r.mu.Lock()
	r.w.Flush()
	r.mu.Unlock()
}

func (r *recorder) Close() error {
	r.mu.Lock()
	err := r.w.Flush()
	r.mu.Unlock()
	return errors.Join(err, r.f.Close())
}

type traceContext struct {
	TraceID string         `json:"trace_id"`
	SpanID  string         `json:"span_id"`
	Data    map[string]any `json:"data"`
}

// records reads the Records out of a validated envelope; client reports have none.
func records(project string, env *envelope.Envelope) []Record {
	var out []Record
	dsc := ""
	if env.Header.Trace != nil {
		dsc = env.Header.Trace.Transaction
	}
	for i := range env.Items {
		it := &env.Items[i]
		switch it.Type {
		case envelope.ItemTypeTransaction:
			var tx struct {
				Transaction string `json:"transaction"`
				Contexts    struct {
					Trace   traceContext `json:"trace"`
					Profile struct {
						ProfilerID string `json:"profiler_id"`
					} `json:"profile"`
				} `json:"contexts"`
				Spans []struct {
					SpanID string `json:"span_id"`
				} `json:"spans"`
			}
			_ = json.Unmarshal(it.Payload, &tx)
			r := Record{
				Project: project, Type: it.Type, TraceID: tx.Contexts.Trace.TraceID, SpanID: tx.Contexts.Trace.SpanID,
				Name: tx.Transaction, DSCTransaction: dsc, ProfilerID: tx.Contexts.Profile.ProfilerID,
			}
			switch th := tx.Contexts.Trace.Data["thread.id"].(type) {
			case string:
				r.Thread = th
			case float64:
				r.Thread = strconv.FormatFloat(th, 'f', -1, 64)
			}
			for _, s := range tx.Spans {
				r.Children = append(r.Children, s.SpanID)
			}
			out = append(out, r)
		case envelope.ItemTypeSpan:
			var c struct {
				Items []struct {
					TraceID    string `json:"trace_id"`
					SpanID     string `json:"span_id"`
					Parent     string `json:"parent_span_id"`
					Name       string `json:"name"`
					IsSegment  bool   `json:"is_segment"`
					Attributes struct {
						SegmentID struct {
							Value string `json:"value"`
						} `json:"sentry.segment.id"`
					} `json:"attributes"`
				} `json:"items"`
			}
			_ = json.Unmarshal(it.Payload, &c)
			for _, s := range c.Items {
				out = append(out, Record{
					Project: project, Type: it.Type, TraceID: s.TraceID, SpanID: s.SpanID, Parent: s.Parent,
					Name: s.Name, Segment: s.IsSegment, SegmentID: s.Attributes.SegmentID.Value, DSCTransaction: dsc,
				})
			}
		case envelope.ItemTypeLog:
			var c struct {
				Items []struct {
					TraceID string `json:"trace_id"`
					SpanID  string `json:"span_id"`
					Body    string `json:"body"`
				} `json:"items"`
			}
			_ = json.Unmarshal(it.Payload, &c)
			for _, l := range c.Items {
				out = append(out, Record{Project: project, Type: it.Type, TraceID: l.TraceID, SpanID: l.SpanID, Body: l.Body})
			}
		case envelope.ItemTypeEvent:
			var ev struct {
				Transaction string `json:"transaction"`
				Contexts    struct {
					Trace traceContext `json:"trace"`
				} `json:"contexts"`
				Exception exceptions `json:"exception"`
			}
			_ = json.Unmarshal(it.Payload, &ev)
			r := Record{
				Project: project, Type: it.Type, TraceID: ev.Contexts.Trace.TraceID, SpanID: ev.Contexts.Trace.SpanID,
				Name: ev.Transaction, DSCTransaction: dsc,
			}
			r.Exception, _ = ev.Exception.thrown()
			out = append(out, r)
		case envelope.ItemTypeProfileChunk:
			var c struct {
				ProfilerID string `json:"profiler_id"`
				Profile    struct {
					Frames []struct {
						Module string `json:"module"`
					} `json:"frames"`
				} `json:"profile"`
			}
			_ = json.Unmarshal(it.Payload, &c)
			r := Record{Project: project, Type: it.Type, ProfilerID: c.ProfilerID}
			if len(c.Profile.Frames) > 0 {
				r.Name = c.Profile.Frames[0].Module
			}
			out = append(out, r)
		}
	}
	return out
}
