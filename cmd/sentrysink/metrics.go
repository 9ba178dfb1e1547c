package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// printMetrics prints a collector's metrics as Prometheus text lines
// (`name{k="v",...} value`), so that the scripts read them one way: the file
// at path is either Prometheus text (the /metrics endpoint; printed as it is)
// or what the collector's `console` periodic reader wrote to stdout, one JSON
// object per export, of which the last is printed: with an hour-long interval,
// the final export the reader makes at shutdown, after the exporter has sent
// or counted everything. Histograms are left out.
func printMetrics(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if i := bytes.IndexByte(b, '{'); i < 0 || len(bytes.TrimSpace(b[:i])) != 0 {
		_, err = w.Write(b) // Prometheus text
		return err
	}
	lines, err := consoleMetrics(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// consoleMetrics renders the last export of the stdout metric exporter's JSON
// (metricdata.ResourceMetrics) as Prometheus text lines, sorted.
func consoleMetrics(b []byte) ([]string, error) {
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
		if err := dec.Decode(&e); err != nil {
			break // the end, or text that is not an export (a log line): keep what was read
		}
		if e.ScopeMetrics != nil {
			last = &e
		}
	}
	if last == nil {
		return nil, errors.New("no metrics export found")
	}
	var out []string
	for _, sm := range last.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.DataPoints {
				v, ok := dp.Value.(float64)
				if !ok {
					continue
				}
				labels := make([]string, 0, len(dp.Attributes))
				for _, a := range dp.Attributes {
					labels = append(labels, a.Key+"="+strconv.Quote(fmt.Sprint(a.Value.Value)))
				}
				slices.Sort(labels)
				out = append(out, m.Name+"{"+strings.Join(labels, ",")+"} "+strconv.FormatFloat(v, 'f', -1, 64))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
