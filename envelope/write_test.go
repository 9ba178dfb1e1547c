package envelope

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentAt is the fixed clock of these tests.
var sentAt = time.Date(2026, 11, 30, 21, 58, 19, 123456000, time.UTC)

// appendToCases are TestAppendTo's envelopes and the bytes each is written as.
var appendToCases = []struct {
	name string
	env  Envelope
	want string
}{
	{
		name: "empty",
		env:  Envelope{},
		want: "{}\n",
	},
	{
		name: "full header",
		env: Envelope{Header: Header{
			EventID: "fc6d8c0c43fc4630ad850ee518f1b9d0",
			SentAt:  sentAt,
			SDK:     &SDKInfo{Name: "sentry.go.otelcol", Version: "0.1.0"},
			Trace: &TraceContext{
				TraceID: "5b8efff798038103d269b633813fc60c", PublicKey: "public",
				Release: "app@1.0", Environment: "prod", Transaction: "GET /",
				SampleRate: "0.5", Sampled: "true",
			},
		}},
		want: `{"event_id":"fc6d8c0c43fc4630ad850ee518f1b9d0","sent_at":"2026-11-30T21:58:19.123456Z",` +
			`"sdk":{"name":"sentry.go.otelcol","version":"0.1.0"},` +
			`"trace":{"trace_id":"5b8efff798038103d269b633813fc60c","public_key":"public","release":"app@1.0",` +
			`"environment":"prod","transaction":"GET /","sample_rate":"0.5","sampled":true}}` + "\n",
	},
	{
		name: "sent_at in another zone, whole second, and sampled false",
		env: Envelope{Header: Header{
			SentAt: time.Date(2026, 1, 2, 4, 4, 5, 0, time.FixedZone("X", 3600)),
			Trace:  &TraceContext{TraceID: "5b8efff798038103d269b633813fc60c", Sampled: "false"},
		}},
		want: `{"sent_at":"2026-01-02T03:04:05.000000Z","trace":{"trace_id":"5b8efff798038103d269b633813fc60c","sampled":false}}` + "\n",
	},
	{
		name: "sent_at with nanoseconds keeps them",
		env:  Envelope{Header: Header{SentAt: time.Date(2026, 1, 2, 3, 4, 5, 1, time.UTC)}},
		want: `{"sent_at":"2026-01-02T03:04:05.000000001Z"}` + "\n",
	},
	{
		name: "sampled that is not a bool stays a string",
		env:  Envelope{Header: Header{Trace: &TraceContext{Sampled: "yes"}}},
		want: `{"trace":{"sampled":"yes"}}` + "\n",
	},
	{
		name: "empty sdk and trace",
		env:  Envelope{Header: Header{SDK: &SDKInfo{}, Trace: &TraceContext{}}},
		want: `{"sdk":{"name":"","version":""},"trace":{}}` + "\n",
	},
	{
		name: "event item",
		env: Envelope{
			Header: Header{EventID: "fc6d8c0c43fc4630ad850ee518f1b9d0"},
			Items:  []Item{{Type: ItemTypeEvent, ContentType: ContentTypeJSON, Payload: []byte(`{"a":1}`)}},
		},
		want: `{"event_id":"fc6d8c0c43fc4630ad850ee518f1b9d0"}` + "\n" +
			`{"type":"event","length":7,"content_type":"application/json"}` + "\n" +
			`{"a":1}` + "\n",
	},
	{
		name: "log container and client report",
		env: Envelope{Items: []Item{
			{Type: ItemTypeLog, ContentType: ContentTypeLogContainer, ItemCount: 2, Payload: []byte(`{"items":[{},{}]}`)},
			{Type: ItemTypeClientReport, Payload: []byte(`{"discarded_events":[]}`)},
		}},
		want: "{}\n" +
			`{"type":"log","length":17,"content_type":"application/vnd.sentry.items.log+json","item_count":2}` + "\n" +
			`{"items":[{},{}]}` + "\n" +
			`{"type":"client_report","length":23}` + "\n" +
			`{"discarded_events":[]}` + "\n",
	},
	{
		name: "length counts bytes, payload with newlines and no payload",
		env: Envelope{Items: []Item{
			{Type: "attachment", Payload: []byte("é\nü")},
			{Type: "attachment"},
		}},
		want: "{}\n" +
			`{"type":"attachment","length":5}` + "\n" + "é\nü\n" +
			`{"type":"attachment","length":0}` + "\n\n",
	},
	{
		name: "escaping in headers",
		env: Envelope{
			Header: Header{SDK: &SDKInfo{Name: "a\"b\\c\n\r\t\b\f\x01\x1f", Version: "\xff<>&\u2028é"}},
			Items:  []Item{{Type: "ty\"pe", ContentType: "c/t\x00", Payload: []byte{}}},
		},
		want: `{"sdk":{"name":"a\"b\\c\n\r\t\u0008\u000c\u0001\u001f","version":"` + "\uFFFD<>&\u2028é" + `"}}` + "\n" +
			`{"type":"ty\"pe","length":0,"content_type":"c/t` + "\uFFFD" + `"}` + "\n\n",
	},
}

func TestAppendTo(t *testing.T) {
	for _, tt := range appendToCases {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.env.AppendTo(nil)
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, len(got), tt.env.EncodedLen(), "EncodedLen")
			assert.Equal(t, "prefix"+tt.want, string(tt.env.AppendTo([]byte("prefix"))), "appends to dst")
		})
	}
}

// Header strings are repaired like payload strings (internal/jsonstr has
// the full table): NUL and invalid UTF-8 become U+FFFD.
func TestHeaderStringsRepaired(t *testing.T) {
	e := Envelope{Header: Header{EventID: "a\x00b", SDK: &SDKInfo{Name: "\xed\xa0\x80", Version: "\xf0\x9f\x98"}}}
	assert.Equal(t, `{"event_id":"a`+"\uFFFD"+`b","sdk":{"name":"`+"\uFFFD\uFFFD\uFFFD"+`","version":"`+"\uFFFD\uFFFD\uFFFD"+`"}}`+"\n", string(e.AppendTo(nil)))
}

func TestAppendToAllocs(t *testing.T) {
	e := benchLogEnvelope()
	dst := make([]byte, 0, e.EncodedLen())
	allocs := testing.AllocsPerRun(100, func() { dst = e.AppendTo(dst[:0]) })
	assert.Zero(t, allocs)
	allocs = testing.AllocsPerRun(100, func() { _ = e.EncodedLen() })
	assert.Zero(t, allocs, "EncodedLen")
}

// appendTime writes what AppendFormat writes with the RFC 3339 layouts, for
// instants across the four-digit years, with and without nanoseconds, and in
// any zone (it writes UTC).
func TestAppendTimeMatchesAppendFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	zones := []*time.Location{time.UTC, time.FixedZone("x", -7*3600-1800), time.FixedZone("y", 14*3600)}
	ref := func(tm time.Time) string {
		tm = tm.UTC()
		layout := "2006-01-02T15:04:05.000000Z07:00"
		if tm.Nanosecond()%1000 != 0 {
			layout = "2006-01-02T15:04:05.000000000Z07:00"
		}
		return `"` + tm.Format(layout) + `"`
	}
	fixed := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 11, 30, 23, 59, 59, 1000, time.UTC),
		time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),    // AppendFormat's own form
		time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC), // likewise
		time.Unix(0, 0),
	}
	for _, tm := range fixed {
		require.Equal(t, ref(tm), string(appendTime(nil, tm)), "%v", tm)
	}
	for range 20000 {
		sec := rng.Int64N(253402300800) // year 0 to 9999, from 0000-01-01
		ns := rng.Int64N(1e9)
		if rng.IntN(2) == 0 {
			ns -= ns % 1000
		}
		tm := time.Unix(sec-62167219200, ns).In(zones[rng.IntN(len(zones))])
		require.Equal(t, ref(tm), string(appendTime([]byte{}, tm)), "%v", tm)
	}
}
