package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// readSummary reads a --summary-file.
func readSummary(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// lookup returns the value at a dotted key ("items.transaction") of a summary, formatted
// for a shell: numbers without exponent (whole ones without a fraction), strings bare, a
// missing key as 0.
func lookup(m map[string]any, key string) string {
	var v any = m
	for part := range strings.SplitSeq(key, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return "0"
		}
		if v, ok = obj[part]; !ok {
			return "0"
		}
	}
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strconv.FormatFloat(x, 'f', 3, 64)
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// query prints the values of the given dotted keys of a summary file, space separated.
func query(w io.Writer, path string, keys []string) error {
	m, err := readSummary(path)
	if err != nil {
		return err
	}
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = lookup(m, k)
	}
	_, err = fmt.Fprintln(w, strings.Join(vals, " "))
	return err
}

// printSummary renders a summary file for people.
func printSummary(w io.Writer, path string) error {
	m, err := readSummary(path)
	if err != nil {
		return err
	}
	g := func(k string) string { return lookup(m, k) }
	fmt.Fprintf(w, "  uptime            %ss\n", g("uptime_seconds"))
	fmt.Fprintf(w, "  requests          %s  by status %s\n", g("requests"), sortedMap(m["requests_by_status"]))
	fmt.Fprintf(w, "  envelopes         %s accepted, %s invalid, %s rate limited (429)\n", g("envelopes"), g("invalid_envelopes"), g("rate_limited_envelopes"))
	fmt.Fprintf(w, "  items             %s\n", sortedMap(m["items"]))
	fmt.Fprintf(w, "  transactions      %s (with %s child spans)\n", g("items.transaction"), g("transaction_spans"))
	fmt.Fprintf(w, "  spans             %s (roots + children + span v2)\n", g("spans"))
	fmt.Fprintf(w, "  logs              %s\n", g("logs"))
	fmt.Fprintf(w, "  trace metrics     %s\n", g("trace_metrics"))
	fmt.Fprintf(w, "  error events      %s\n", g("errors"))
	fmt.Fprintf(w, "  client reports    %s  discarded %s\n", g("items.client_report"), sortedMap(m["client_report_discarded"]))
	fmt.Fprintf(w, "  content encoding  %s  wire %s bytes, envelopes %s bytes\n", sortedMap(m["content_encoding"]), g("wire_bytes"), g("envelope_bytes"))
	if s := g("last_invalid"); s != "0" {
		fmt.Fprintf(w, "  last invalid      %s\n", s)
	}
	return nil
}

func sortedMap(v any) string {
	obj, _ := v.(map[string]any)
	if len(obj) == 0 {
		return "{}"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%s", k, lookup(obj, k))
	}
	return strings.Join(parts, " ")
}
