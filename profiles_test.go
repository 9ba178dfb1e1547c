package sentryexporter

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otel-sentry/sentryexporter/envelope"
)

// settlingProfiles returns from ConsumeProfiles once every envelope the
// call handed over is settled.
type settlingProfiles struct {
	xexporter.Profiles
	settle func()
}

func (s settlingProfiles) ConsumeProfiles(ctx context.Context, pd pprofile.Profiles) error {
	err := s.Profiles.ConsumeProfiles(ctx, pd)
	s.settle()
	return err
}

// profileOf is one process's CPU profile as an OTel profiler exports it:
// service svc (a Go process, pid 42, on host h1), n samples of one stack on
// thread 7, one every 10 ms from at: a chunk of (n-1)*10 ms.
func profileOf(svc string, at time.Time, n int) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	d.StringTable().Append("", "samples", "count", "main.work", "main.go", "thread.id", "thread.name", "main")
	d.MappingTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	fn := d.FunctionTable().AppendEmpty()
	fn.SetNameStrindex(3)
	fn.SetFilenameStrindex(4)
	d.LocationTable().AppendEmpty()
	loc := d.LocationTable().AppendEmpty()
	line := loc.Lines().AppendEmpty()
	line.SetFunctionIndex(1)
	line.SetLine(10)
	d.StackTable().AppendEmpty()
	d.StackTable().AppendEmpty().LocationIndices().Append(1)
	d.AttributeTable().AppendEmpty()
	tid := d.AttributeTable().AppendEmpty()
	tid.SetKeyStrindex(5)
	tid.Value().SetInt(7)
	tname := d.AttributeTable().AppendEmpty()
	tname.SetKeyStrindex(6)
	tname.Value().SetStr("main")

	rp := pd.ResourceProfiles().AppendEmpty()
	attrs := rp.Resource().Attributes()
	attrs.PutStr("service.name", svc)
	attrs.PutStr("host.name", "h1")
	attrs.PutInt("process.pid", 42)
	attrs.PutStr("telemetry.sdk.language", "go")
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(1)
	p.SampleType().SetUnitStrindex(2)
	p.SetTime(pcommon.NewTimestampFromTime(at))
	p.SetDurationNano(uint64(time.Duration(n) * 10 * time.Millisecond))
	s := p.Samples().AppendEmpty()
	s.SetStackIndex(1)
	s.AttributeIndices().Append(1, 2)
	for i := range n {
		s.TimestampsUnixNano().Append(uint64(at.Add(time.Duration(i) * 10 * time.Millisecond).UnixNano()))
	}
	return pd
}

func (h *harness) consumeProfiles(pd pprofile.Profiles) {
	require.NoError(h.t, h.profiles.ConsumeProfiles(context.Background(), pd))
}

// chunksOf are the profile chunk items the fake Sentry stored, decoded.
func (f *fakeSentry) chunksOf(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, r := range f.envelopes() {
		for _, it := range r.env.Items {
			if it.Type != envelope.ItemTypeProfileChunk {
				continue
			}
			var c map[string]any
			require.NoError(t, json.Unmarshal(it.Payload, &c))
			out = append(out, c)
		}
	}
	return out
}

// TestProfilesReachSentry: a process's profile becomes one profile_chunk
// envelope Relay accepts (platform in the item header), counted one chunk
// and its milliseconds.
func TestProfilesReachSentry(t *testing.T) { synctest.Test(t, testProfilesReachSentry) }

func testProfilesReachSentry(t *testing.T) {
	h := newHarness(t, nil)
	h.consumeProfiles(profileOf("checkout", time.Now(), 101))
	h.shutdown()
	h.sentry.requireNoInvalid()

	chunks := h.sentry.chunksOf(t)
	require.Len(t, chunks, 1)
	assert.Equal(t, "go", chunks[0]["platform"])
	for _, r := range h.sentry.envelopes() {
		for _, it := range r.env.Items {
			if it.Type == envelope.ItemTypeProfileChunk {
				assert.Equal(t, "go", it.Platform)
			}
		}
	}
	assert.EqualValues(t, 1, h.sent("profile_chunk"))
	assert.EqualValues(t, 1000, h.sent("profile_duration"), "100 intervals of 10 ms")
	assert.Zero(t, h.sum("otelcol_exporter_sentry_dropped_items", nil))
}
