package main

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/profiletest"
)

// envSummary is what one accepted envelope held.
type envSummary struct {
	items []itemSummary
}

// itemSummary is one item: its type and what it counts.
type itemSummary struct {
	typ string
	// itemCount is the item_count of a container.
	itemCount int
	// spans is the number of child spans of a transaction.
	spans int
	// exception is "Type: value" of an error event's last (thrown) exception.
	exception string
	// transaction is a transaction's name.
	transaction string
	// discarded are a client report's discarded_events.
	discarded []discard
	// samples is the number of samples of a profile chunk, and appFunctions its
	// functions Sentry's profile processing counts as application code
	// (profiletest.ApplicationFunctions), each "platform module function".
	samples      int
	appFunctions []string
}

type discard struct {
	Reason   string `json:"reason"`
	Category string `json:"category"`
	Quantity uint64 `json:"quantity"`
}

// summarize reads the counts out of a validated envelope. Validate has already checked
// the payloads, so decoding problems here only leave counts at zero.
func summarize(env *envelope.Envelope) envSummary {
	s := envSummary{items: make([]itemSummary, 0, len(env.Items))}
	for i := range env.Items {
		it := &env.Items[i]
		is := itemSummary{typ: it.Type, itemCount: it.ItemCount}
		switch it.Type {
		case envelope.ItemTypeTransaction:
			var tx struct {
				Transaction string            `json:"transaction"`
				Spans       []json.RawMessage `json:"spans"`
			}
			_ = json.Unmarshal(it.Payload, &tx)
			is.spans, is.transaction = len(tx.Spans), tx.Transaction
		case envelope.ItemTypeEvent:
			var ev struct {
				Exception exceptions `json:"exception"`
			}
			_ = json.Unmarshal(it.Payload, &ev)
			if last, ok := ev.Exception.thrown(); ok {
				is.exception = truncate(strings.TrimPrefix(last, ": "), 80)
			}
		case envelope.ItemTypeProfileChunk:
			var pc struct {
				Platform string `json:"platform"`
				Profile  struct {
					Samples []json.RawMessage `json:"samples"`
				} `json:"profile"`
			}
			_ = json.Unmarshal(it.Payload, &pc)
			is.samples = len(pc.Profile.Samples)
			app, _ := profiletest.ApplicationFunctions(it.Payload)
			for _, f := range app {
				is.appFunctions = append(is.appFunctions, pc.Platform+" "+f)
			}
		case envelope.ItemTypeClientReport:
			var cr struct {
				Discarded []discard `json:"discarded_events"`
			}
			_ = json.Unmarshal(it.Payload, &cr)
			is.discarded = cr.Discarded
		}
		s.items = append(s.items, is)
	}
	return s
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// line renders the one log line of an accepted envelope, such as
// "envelope project=1 event_id=… items=transaction(spans=12) client_report(discarded: ratelimit_backoff/span=40)".
func (s *envSummary) line(project, eventID string) []byte {
	b := make([]byte, 0, 160)
	b = append(b, "envelope project="...)
	b = append(b, project...)
	if eventID != "" {
		b = append(b, " event_id="...)
		b = append(b, eventID...)
	}
	b = append(b, " items="...)
	if len(s.items) == 0 {
		b = append(b, "none"...)
	}
	for i, it := range s.items {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, it.typ...)
		b = append(b, '(')
		switch it.typ {
		case envelope.ItemTypeTransaction:
			b = append(b, "spans="...)
			b = strconv.AppendInt(b, int64(it.spans), 10)
			if it.transaction != "" {
				b = append(b, " name="...)
				b = strconv.AppendQuote(b, truncate(it.transaction, 60))
			}
		case envelope.ItemTypeEvent:
			b = append(b, "exception="...)
			b = strconv.AppendQuote(b, it.exception)
		case envelope.ItemTypeClientReport:
			b = append(b, "discarded:"...)
			for _, d := range it.discarded {
				b = append(b, ' ')
				b = append(b, d.Reason...)
				b = append(b, '/')
				b = append(b, d.Category...)
				b = append(b, '=')
				b = strconv.AppendUint(b, d.Quantity, 10)
			}
		default:
			b = append(b, "item_count="...)
			b = strconv.AppendInt(b, int64(it.itemCount), 10)
		}
		b = append(b, ')')
	}
	return b
}

// exceptions is an error event's `exception` interface.
type exceptions struct {
	Values []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"values"`
}

// thrown is "Type: value" of the last (thrown) exception; false when none.
func (e exceptions) thrown() (string, bool) {
	if len(e.Values) == 0 {
		return "", false
	}
	last := e.Values[len(e.Values)-1]
	return last.Type + ": " + last.Value, true
}
