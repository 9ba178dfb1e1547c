package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// series is one metric data point: its name (without a Prometheus _total suffix), its
// labels and its value.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

// metrics are the self-metrics of one collector.
type metrics []series

// sum adds the points of name whose labels hold every key=value of filter.
func (m metrics) sum(name string, filter ...string) int64 {
	var s float64
	for _, p := range m {
		if p.matches(name, filter) {
			s += p.value
		}
	}
	return int64(s + 0.5)
}

// byLabel sums name by the value of label, keeping points that match filter.
func (m metrics) byLabel(name, label string, filter ...string) map[string]int64 {
	out := map[string]int64{}
	for _, p := range m {
		if p.matches(name, filter) {
			out[p.labels[label]] += int64(p.value + 0.5)
		}
	}
	return out
}

// matches reports whether p is a point of name whose labels hold every
// key=value of filter.
func (p series) matches(name string, filter []string) bool {
	if p.name != name {
		return false
	}
	for _, f := range filter {
		k, v, _ := strings.Cut(f, "=")
		if p.labels[k] != v {
			return false
		}
	}
	return true
}

// readMetrics reads a collector's metrics from path: either the Prometheus text of its
// /metrics endpoint, or the JSON its `console` periodic reader writes to stdout (one
// object per export, the last one wins: it is the final export made at shutdown).
func readMetrics(path string) (metrics, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(b, '{'); i >= 0 && len(bytes.TrimSpace(b[:i])) == 0 {
		return parseConsole(b)
	}
	return parsePrometheus(b)
}

func trimTotal(name string) string {
	return strings.TrimSuffix(name, "_total")
}

// parsePrometheus reads the text exposition format: `name{k="v",...} value`.
func parsePrometheus(b []byte) (metrics, error) {
	var out metrics
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s := series{labels: map[string]string{}}
		var rest string
		if i := strings.IndexByte(line, '{'); i >= 0 {
			s.name = line[:i]
			j := strings.LastIndexByte(line, '}')
			if j < i {
				return nil, fmt.Errorf("bad metric line %q", line)
			}
			parseLabels(line[i+1:j], s.labels)
			rest = strings.TrimSpace(line[j+1:])
		} else {
			name, r, _ := strings.Cut(line, " ")
			s.name, rest = name, strings.TrimSpace(r)
		}
		val, _, _ := strings.Cut(rest, " ")
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		s.name, s.value = trimTotal(s.name), v
		out = append(out, s)
	}
	return out, nil
}

func parseLabels(s string, into map[string]string) {
	for s != "" {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || rest == "" || rest[0] != '"' {
			return
		}
		rest = rest[1:]
		var v strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			v.WriteByte(rest[i])
		}
		into[strings.TrimSpace(k)] = v.String()
		s = strings.TrimPrefix(strings.TrimPrefix(rest[min(i+1, len(rest)):], ","), " ")
	}
}

// parseConsole reads the stdout metric exporter's JSON (metricdata.ResourceMetrics,
// one object per export) and returns the last export.
func parseConsole(b []byte) (metrics, error) {
	type kv struct {
		Key   string `json:"Key"`
		Value struct {
			Value any `json:"Value"`
		} `json:"Value"`
	}
	type export struct {
		ScopeMetrics []struct {
			Metrics []struct {
				Name string `json:"Name"`
				Data struct {
					DataPoints []struct {
						Attributes []kv `json:"Attributes"`
						Value      any  `json:"Value"`
					} `json:"DataPoints"`
				} `json:"Data"`
			} `json:"Metrics"`
		} `json:"ScopeMetrics"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var last *export
	for {
		var e export
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			// stop at the first non-JSON text (a log line): keep what was read
			break
		}
		last = &e
	}
	if last == nil {
		return nil, fmt.Errorf("no metrics export found")
	}
	var out metrics
	for _, sm := range last.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.DataPoints {
				v, ok := dp.Value.(float64)
				if !ok {
					continue
				}
				s := series{name: trimTotal(m.Name), labels: map[string]string{}, value: v}
				for _, a := range dp.Attributes {
					s.labels[a.Key] = fmt.Sprint(a.Value.Value)
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}
