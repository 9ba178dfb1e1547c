package gate

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/ratelimit"
)

// relayCategories is ../../ratelimit/testdata/relay_categories.txt: Relay's
// category names, and the categories it counts each item type in.
func relayCategories(t *testing.T) (names []string, items map[string][]string) {
	f, err := os.Open("../../ratelimit/testdata/relay_categories.txt")
	require.NoError(t, err)
	defer f.Close()
	items = map[string][]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		switch {
		case len(fields) == 0 || strings.HasPrefix(fields[0], "#"):
		case fields[0] == "category" && len(fields) == 2:
			names = append(names, fields[1])
		case fields[0] == "item" && len(fields) >= 2:
			items[fields[1]] = fields[2:]
		default:
			t.Fatalf("unreadable line %q", s.Text())
		}
	}
	require.NoError(t, s.Err())
	return names, items
}

// gateItems: the Relay item type of each gate's envelopes.
var gateItems = map[Gate]string{
	GateError: "event", GateTransaction: "transaction", GateSpan: "span", GateLogs: "log",
	GateTraceMetric: "trace_metric", GateProfileChunk: "profile_chunk", GateProfileChunkUI: "profile_chunk:ui",
	GateInternal: "client_report",
}

// TestRelayCategories holds the exporter's category table to Relay's, read
// from a pinned commit (see the test data's head). It fails when Relay has
// a category Parse does not know, or counts an item type the exporter sends
// in a category whose limit does not block it: the limit would be ignored,
// or, on a 429, fall back to the envelope's own categories. The indexed
// categories are the exception: Relay does not send them to SDKs as limits
// to apply (ratelimit.Category.Enforced).
func TestRelayCategories(t *testing.T) {
	names, items := relayCategories(t)
	require.Contains(t, names, "trace_metric_byte")
	for _, n := range names {
		c := ratelimit.Category(n)
		assert.True(t, c.Known(), "Relay's category %q is unknown to ratelimit.Parse", n)
		l, _ := ratelimit.Parse("60:"+n, t0)
		assert.Equal(t, c.Enforced(), !l.Empty(), "%q", n)
	}
	for g := range NumGates {
		it, ok := gateItems[g]
		require.True(t, ok, "gate %d has no item type", g)
		relay, ok := items[it]
		require.True(t, ok, "the test data lacks the item type %q", it)
		var enforced []ratelimit.Category
		for _, n := range relay {
			if c := ratelimit.Category(n); c.Enforced() {
				enforced = append(enforced, c)
			}
		}
		got := slices.Clone(g.Categories())
		slices.Sort(got)
		slices.Sort(enforced)
		assert.Equal(t, enforced, got, "item %q: the categories whose limits block it are those Relay counts it in", it)
	}
	assert.Equal(t, []string{"span", "span_indexed"}, items["span"])
	assert.Equal(t, []string{"log_byte", "log_item"}, items["log"])
	assert.Equal(t, []string{"trace_metric", "trace_metric_byte"}, items["trace_metric"])
	assert.Equal(t, []string{"profile_chunk", "profile_duration"}, items["profile_chunk"])
	assert.Equal(t, []string{"profile_chunk_ui", "profile_duration_ui"}, items["profile_chunk:ui"])
}
