package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricItem is one trace metric as Sentry got it.
type metricItem struct {
	Timestamp  any                        `json:"timestamp"`
	TraceID    string                     `json:"trace_id"`
	SpanID     string                     `json:"span_id"`
	Type       string                     `json:"type"`
	Name       string                     `json:"name"`
	Value      json.Number                `json:"value"`
	Unit       string                     `json:"unit"`
	Attributes map[string]metricAttribute `json:"attributes"`
}

type metricAttribute struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

func (a metricAttribute) String() string { return fmt.Sprintf("%s %v", a.Type, a.Value) }

// metricsView is every trace metric of one run, by name, in the order sent, and the
// problems of the envelopes that carried them.
type metricsView struct {
	byName   map[string][]metricItem
	problems []string
	raw      [][]byte
}

func newMetricsView(t *testing.T, envs []captured) *metricsView {
	t.Helper()
	v := &metricsView{byName: map[string][]metricItem{}}
	for _, e := range envs {
		containers := 0
		for _, it := range e.items {
			if it.typ() != "trace_metric" {
				continue
			}
			containers++
			v.item(it)
		}
		if containers > 0 {
			v.raw = append(v.raw, e.raw)
		}
		if containers > 1 {
			v.problems = append(v.problems, fmt.Sprintf("an envelope with %d trace_metric containers", containers))
		}
	}
	// Envelopes of one sender may arrive in any order (each push is its own request):
	// the metrics are compared in the order they were measured.
	for _, ms := range v.byName {
		sort.SliceStable(ms, func(i, j int) bool { return seconds(ms[i].Timestamp) < seconds(ms[j].Timestamp) })
	}
	return v
}

// seconds reads a timestamp as Relay does: seconds since the epoch, or RFC 3339.
func seconds(ts any) float64 {
	switch t := ts.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case string:
		if tt, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return float64(tt.UnixNano()) / 1e9
		}
	}
	return 0
}

// item reads one trace_metric container and checks its item header.
func (v *metricsView) item(it capturedItem) {
	if ct := it.header["content_type"]; ct != "application/vnd.sentry.items.trace-metric+json" {
		v.problems = append(v.problems, fmt.Sprintf("content_type %v", ct))
	}
	var c struct {
		Items []metricItem `json:"items"`
	}
	dec := json.NewDecoder(strings.NewReader(string(it.raw)))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		v.problems = append(v.problems, "container: "+err.Error())
		return
	}
	if fmt.Sprint(it.header["item_count"]) != fmt.Sprint(len(c.Items)) {
		v.problems = append(v.problems, fmt.Sprintf("item_count %v for %d metrics", it.header["item_count"], len(c.Items)))
	}
	for _, m := range c.Items {
		v.byName[m.Name] = append(v.byName[m.Name], m)
	}
}

// values are the metric's values in the order sent, as numbers (7.0 and 7 are one).
func (v *metricsView) values(name string) []string {
	var out []string
	for _, m := range v.byName[name] {
		out = append(out, number(m.Value))
	}
	return out
}

// changes are the values without a counter's zeros and a gauge's repeats: what changed.
func (v *metricsView) changes(name string) []string {
	var out []string
	for _, m := range v.byName[name] {
		n := number(m.Value)
		if m.Type == "counter" && n == "0" || m.Type == "gauge" && len(out) > 0 && out[len(out)-1] == n {
			continue
		}
		out = append(out, n)
	}
	return out
}

func number(n json.Number) string {
	f, err := n.Float64()
	if err != nil {
		return n.String()
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// field is one top-level field of every item of the metric, "" when all are equal to
// the first's, else the distinct values.
func (v *metricsView) field(name string, f func(metricItem) string) string {
	seen := map[string]bool{}
	for _, m := range v.byName[name] {
		seen[f(m)] = true
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, " | ")
}
