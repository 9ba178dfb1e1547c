package envelope

import (
	"bytes"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever it accepts re-encodes with
// AppendTo into bytes that parse to an equal envelope, and that Validate does not panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("{}"))
	f.Add([]byte("{}\n"))
	f.Add(withEventID(eventItem(eventJSON)).AppendTo(nil))
	f.Add(withEventID(transactionItem(transactionJSON)).AppendTo(nil))
	f.Add(withDSC(logItem(logJSON), reportItem(reportJSON)).AppendTo(nil))
	f.Add(withDSC(spanItem(spanJSON)).AppendTo(nil))
	f.Add(withDSC(metricItem(metricJSON, metricJSON)).AppendTo(nil))
	f.Add([]byte("{}\n{\"type\":\"a\"}\nhello\n{\"type\":\"b\",\"length\":1}\nx"))
	f.Add([]byte(`{"event_id":"fc6d8c0c-43fc-4630-ad85-0ee518f1b9d0","sent_at":"2026-11-30T22:58:19.123456789+01:00","sdk":{"name":"n"},"trace":{"sample_rate":0.5,"sampled":"maybe","release":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse(data)
		if err != nil {
			return
		}
		_ = Validate(e, RelayDefaults())
		out := e.AppendTo(nil)
		if n := e.EncodedLen(); n != len(out) {
			t.Fatalf("EncodedLen %d, AppendTo wrote %d", n, len(out))
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse: %v\nin:  %q\nout: %q", err, data, out)
		}
		if !sameEnvelope(e, again) {
			t.Fatalf("round trip differs\nin:  %q\nout: %q\n%#v\n%#v", data, out, e, again)
		}
	})
}

// sameEnvelope compares the exported content of two envelopes; a nil and an empty payload
// are the same.
func sameEnvelope(a, b *Envelope) bool {
	ha, hb := a.Header, b.Header
	if ha.EventID != hb.EventID || !ha.SentAt.Equal(hb.SentAt) ||
		(ha.SDK == nil) != (hb.SDK == nil) || (ha.Trace == nil) != (hb.Trace == nil) {
		return false
	}
	if ha.SDK != nil && *ha.SDK != *hb.SDK || ha.Trace != nil && *ha.Trace != *hb.Trace {
		return false
	}
	if len(a.Items) != len(b.Items) {
		return false
	}
	for i := range a.Items {
		x, y := a.Items[i], b.Items[i]
		if x.Type != y.Type || x.ContentType != y.ContentType || x.ItemCount != y.ItemCount || !bytes.Equal(x.Payload, y.Payload) {
			return false
		}
	}
	return true
}
