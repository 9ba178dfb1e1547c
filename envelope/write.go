package envelope

import (
	"strconv"

	"github.com/otel-sentry/sentryexporter/internal/jsonstr"
)

// AppendTo appends the envelope to dst byte-exactly and returns the extended slice: the
// envelope header and every item header as compact one-line JSON, every item with `length`
// set to len(Payload) (not counting the newline that follows), and "\n" after each payload.
// It allocates nothing beyond growing dst; [Envelope.EncodedLen] gives the size to reserve.
func (e *Envelope) AppendTo(dst []byte) []byte {
	dst = e.Header.appendTo(dst)
	dst = append(dst, '\n')
	for i := range e.Items {
		it := &e.Items[i]
		dst = it.appendHeader(dst)
		dst = append(dst, '\n')
		dst = append(dst, it.Payload...)
		dst = append(dst, '\n')
	}
	return dst
}

// EncodedLen returns len(e.AppendTo(nil)) without writing the payloads.
func (e *Envelope) EncodedLen() int {
	var scratch [512]byte
	n := len(e.Header.appendTo(scratch[:0])) + 1
	for i := range e.Items {
		it := &e.Items[i]
		n += len(it.appendHeader(scratch[:0])) + 1 + len(it.Payload) + 1
	}
	return n
}

// appendTo writes the envelope header as one JSON object. Keys come in a fixed order.
func (h *Header) appendTo(dst []byte) []byte {
	dst = append(dst, '{')
	sep := false
	key := func(k string) { dst = appendKey(dst, &sep, k) }
	if h.EventID != "" {
		key("event_id")
		dst = jsonstr.Append(dst, h.EventID)
	}
	if !h.SentAt.IsZero() {
		key("sent_at")
		dst = appendTime(dst, h.SentAt)
	}
	if h.SDK != nil {
		key("sdk")
		dst = append(dst, `{"name":`...)
		dst = jsonstr.Append(dst, h.SDK.Name)
		dst = append(dst, `,"version":`...)
		dst = jsonstr.Append(dst, h.SDK.Version)
		dst = append(dst, '}')
	}
	if h.Trace != nil {
		key("trace")
		dst = h.Trace.appendTo(dst)
	}
	return append(dst, '}')
}

// appendTo writes the DSC as one JSON object, leaving out empty fields.
func (t *TraceContext) appendTo(dst []byte) []byte {
	dst = append(dst, '{')
	sep := false
	field := func(k, v string) {
		if v == "" {
			return
		}
		dst = appendKey(dst, &sep, k)
		if k == "sampled" && (v == "true" || v == "false") {
			dst = append(dst, v...)
			return
		}
		dst = jsonstr.Append(dst, v)
	}
	field("trace_id", t.TraceID)
	field("public_key", t.PublicKey)
	field("release", t.Release)
	field("environment", t.Environment)
	field("transaction", t.Transaction)
	field("sample_rate", t.SampleRate)
	field("sampled", t.Sampled)
	field("sample_rand", t.SampleRand)
	return append(dst, '}')
}

// appendKey appends "k": to an object's members, after a comma when sep
// says a member came before; k is a trusted constant.
func appendKey(dst []byte, sep *bool, k string) []byte {
	if *sep {
		dst = append(dst, ',')
	}
	*sep = true
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"', ':')
}

// appendHeader writes the item header: type, length, then content_type, item_count and platform when set.
func (it *Item) appendHeader(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = jsonstr.Append(dst, it.Type)
	dst = append(dst, `,"length":`...)
	dst = strconv.AppendInt(dst, int64(len(it.Payload)), 10)
	if it.ContentType != "" {
		dst = append(dst, `,"content_type":`...)
		dst = jsonstr.Append(dst, it.ContentType)
	}
	if it.ItemCount > 0 {
		dst = append(dst, `,"item_count":`...)
		dst = strconv.AppendInt(dst, int64(it.ItemCount), 10)
	}
	if it.Platform != "" {
		dst = append(dst, `,"platform":`...)
		dst = jsonstr.Append(dst, it.Platform)
	}
	return append(dst, '}')
}
