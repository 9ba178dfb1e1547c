package envelope

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRoundTrip(t *testing.T) {
	envs := []Envelope{
		{},
		{Header: Header{
			EventID: "fc6d8c0c43fc4630ad850ee518f1b9d0",
			SentAt:  sentAt,
			SDK:     &SDKInfo{Name: "n\"\n", Version: "日本"},
			Trace: &TraceContext{
				TraceID: "5b8efff798038103d269b633813fc60c", PublicKey: "pk", Release: "r",
				Environment: "e", Transaction: "t", SampleRate: "1", Sampled: "false",
			},
		}},
		{Header: Header{SentAt: time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.UTC)}},
		{Items: []Item{
			{Type: ItemTypeEvent, ContentType: ContentTypeJSON, Payload: []byte(`{"x":"a\nb"}`)},
			{Type: ItemTypeLog, ContentType: ContentTypeLogContainer, ItemCount: 3, Payload: []byte(`{"items":[1,2,3]}`)},
			{Type: "attachment", Payload: []byte("line1\nline2\n")},
			{Type: "empty", Payload: []byte{}},
		}},
		*benchLogEnvelope(),
	}
	for i, e := range envs {
		got, err := Parse(e.AppendTo(nil))
		require.NoError(t, err, "envelope %d", i)
		assert.Equal(t, e, *got, "envelope %d", i)
	}
}

// TestParseAccepts lists inputs Relay's grammar allows in ways our writer never uses.
func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Envelope
	}{
		{"header without newline", `{}`, Envelope{}},
		{"header with newline", "{}\n", Envelope{}},
		{"unknown header keys", `{"dsn":"https://k@o.ingest.sentry.io/1","other":[1,{"a":null}]}`, Envelope{}},
		{"null fields", `{"event_id":null,"sent_at":null,"sdk":null,"trace":null}`, Envelope{}},
		{
			"hyphenated event_id", `{"event_id":"fc6d8c0c-43fc-4630-ad85-0ee518f1b9d0"}`,
			Envelope{Header: Header{EventID: "fc6d8c0c-43fc-4630-ad85-0ee518f1b9d0"}},
		},
		{
			"sent_at with offset becomes UTC", `{"sent_at":"2026-11-30T22:58:19.123456+01:00"}`,
			Envelope{Header: Header{SentAt: sentAt}},
		},
		{"sampled as string", `{"trace":{"sampled":"true"}}`, Envelope{Header: Header{Trace: &TraceContext{Sampled: "true"}}}},
		{
			"payload without length runs to newline", "{}\n{\"type\":\"a\"}\nhello\n{\"type\":\"b\",\"length\":1}\nx",
			Envelope{Items: []Item{{Type: "a", Payload: []byte("hello")}, {Type: "b", Payload: []byte("x")}}},
		},
		{
			"payload without length runs to EOF", "{}\n{\"type\":\"a\"}\nhello",
			Envelope{Items: []Item{{Type: "a", Payload: []byte("hello")}}},
		},
		{"item header at EOF", "{}\n{\"type\":\"a\"}", Envelope{Items: []Item{{Type: "a", Payload: []byte{}}}}},
		{"item header at EOF with length 0", "{}\n{\"type\":\"a\",\"length\":0}", Envelope{Items: []Item{{Type: "a", Payload: []byte{}}}}},
		{
			"empty payload without length", "{}\n{\"type\":\"a\"}\n\n{\"type\":\"b\"}\n",
			Envelope{Items: []Item{{Type: "a", Payload: []byte{}}, {Type: "b", Payload: []byte{}}}},
		},
		{"CR belongs to the payload", "{}\n{\"type\":\"a\"}\nx\r\n", Envelope{Items: []Item{{Type: "a", Payload: []byte("x\r")}}}},
		{
			"unknown item header keys", "{}\n{\"type\":\"a\",\"filename\":\"f\",\"length\":1}\nx\n",
			Envelope{Items: []Item{{Type: "a", Payload: []byte("x")}}},
		},
		{
			"content_type and item_count", "{}\n{\"type\":\"log\",\"item_count\":1,\"content_type\":\"c\",\"length\":2}\n{}",
			Envelope{Items: []Item{{Type: "log", ContentType: "c", ItemCount: 1, Payload: []byte("{}")}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, *got)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"no data", "", ErrMissingHeader},
		{"header not JSON", "hello\n", ErrInvalidHeader},
		{"header not an object", "[]\n", ErrInvalidHeader},
		{"header empty line", "\n", ErrInvalidHeader},
		{"header over two lines", "{\n}\n", ErrInvalidHeader},
		{"header with leading space", " {}\n", ErrInvalidHeader},
		{"header with trailing space", "{} \n", ErrMissingNewline},
		{"header with CR", "{}\r\n", ErrMissingNewline},
		{"two objects on the header line", "{}{}\n", ErrMissingNewline},
		{"header object then garbage", "{}x\n", ErrMissingNewline},
		{"header object unterminated", "{\"a\":1\n", ErrInvalidHeader},
		{"duplicate sent_at", `{"sent_at":"2026-11-30T21:58:19Z","sent_at":"2026-11-30T21:58:19Z"}`, ErrInvalidHeader},
		{"duplicate unknown key", `{"a":1,"a":1}`, ErrInvalidHeader},
		{"duplicate nested key", `{"trace":{"trace_id":"a","trace_id":"b"}}`, ErrInvalidHeader},
		{"invalid UTF-8 in header", "{\"x\":\"\xff\"}", ErrInvalidHeader},
		{"event_id not a UUID", `{"event_id":"abc"}`, ErrInvalidHeader},
		{"event_id empty", `{"event_id":""}`, ErrInvalidHeader},
		{"event_id a number", `{"event_id":1}`, ErrInvalidHeader},
		{"sent_at not RFC 3339", `{"sent_at":"yesterday"}`, ErrInvalidHeader},
		{"sent_at a number", `{"sent_at":1746456149}`, ErrInvalidHeader},
		{"sdk not an object", `{"sdk":"go"}`, ErrInvalidHeader},
		{"sdk name not a string", `{"sdk":{"name":1}}`, ErrInvalidHeader},
		{"NaN literal", `{"a":NaN}`, ErrInvalidHeader},
		{"item header not JSON", "{}\nnope\n", ErrInvalidItemHeader},
		{"item header without type", "{}\n{\"length\":0}\n", ErrInvalidItemHeader},
		{"item type not a string", "{}\n{\"type\":1}\n", ErrInvalidItemHeader},
		{"content_type not a string", "{}\n{\"type\":\"a\",\"content_type\":1}\n", ErrInvalidItemHeader},
		{"length negative", "{}\n{\"type\":\"a\",\"length\":-1}\n", ErrInvalidItemHeader},
		{"length fraction", "{}\n{\"type\":\"a\",\"length\":1.0}\n", ErrInvalidItemHeader},
		{"length a string", "{}\n{\"type\":\"a\",\"length\":\"1\"}\n", ErrInvalidItemHeader},
		{"length over u32", "{}\n{\"type\":\"a\",\"length\":4294967296}\n", ErrInvalidItemHeader},
		{"item_count negative", "{}\n{\"type\":\"a\",\"item_count\":-1}\n", ErrInvalidItemHeader},
		{"duplicate length", "{}\n{\"type\":\"a\",\"length\":1,\"length\":1}\nx\n", ErrInvalidItemHeader},
		{"second trailing newline", "{}\n\n", ErrUnexpectedEOF},
		{"whitespace after the last payload", "{}\n{\"type\":\"a\",\"length\":1}\nx\n \n", ErrUnexpectedEOF},
		{"blank line before an item header", "{}\n\n{\"type\":\"a\"}\n", ErrInvalidItemHeader},
		{"item header with trailing space", "{}\n{\"type\":\"a\"} \nx\n", ErrMissingNewline},
		{"payload shorter than length", "{}\n{\"type\":\"a\",\"length\":5}\nabc", ErrUnexpectedEOF},
		{"payload missing at EOF", "{}\n{\"type\":\"a\",\"length\":1}", ErrUnexpectedEOF},
		{"payload longer than length", "{}\n{\"type\":\"a\",\"length\":2}\nabc\n", ErrMissingNewline},
		{"space after payload", "{}\n{\"type\":\"a\",\"length\":3}\nabc \n", ErrMissingNewline},
		{"CR after payload", "{}\n{\"type\":\"a\",\"length\":3}\nabc\r\n", ErrMissingNewline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			assert.Nil(t, got)
			require.ErrorIs(t, err, tt.want)
			var pe *ParseError
			assert.ErrorAs(t, err, &pe)
		})
	}
}

// TestParseMalformedTrace checks that a bad DSC does not fail Parse, as in Relay, but is
// kept for Validate.
func TestParseMalformedTrace(t *testing.T) {
	e, err := Parse([]byte(`{"trace":{"trace_id":"5b8efff798038103d269b633813fc60c","public_key":"pk","sample_rate":0.5,"release":7}}`))
	require.NoError(t, err)
	assert.Equal(t, &TraceContext{TraceID: "5b8efff798038103d269b633813fc60c", PublicKey: "pk", SampleRate: "0.5"}, e.Header.Trace)
	err = Validate(e, RelayDefaults())
	assert.ErrorContains(t, err, "sample_rate is a JSON number")
	assert.ErrorContains(t, err, "trace.release is not a string")
}
