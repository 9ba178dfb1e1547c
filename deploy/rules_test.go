package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

const (
	rulesFile     = "deploy/alerts/sentry-gateway.rules.yaml"
	rulesTestFile = "deploy/alerts/sentry-gateway.rules.test.yaml"
	dashboardFile = "deploy/grafana/sentry-gateway.json"
)

// targetLabels are the labels Prometheus adds to every scraped series.
var targetLabels = []string{"job", "instance"}

// collectorMetrics are the collector's own metrics the rules and the dashboard may name
// besides metadata.yaml's, with their labels (exporterhelper's and the receivers' as the
// collector v0.165.0 exposes them, and the process's).
var collectorMetrics = map[string][]string{
	"otelcol_exporter_enqueue_failed_spans":       {"exporter"},
	"otelcol_exporter_enqueue_failed_log_records": {"exporter"},
	"otelcol_exporter_send_failed_spans":          {"exporter"},
	"otelcol_exporter_send_failed_log_records":    {"exporter"},
	"otelcol_exporter_sent_spans":                 {"exporter"},
	"otelcol_exporter_sent_log_records":           {"exporter"},
	"otelcol_exporter_queue_size":                 {"exporter", "data_type"},
	"otelcol_exporter_queue_capacity":             {"exporter", "data_type"},
	"otelcol_receiver_accepted_spans":             {"receiver", "transport"},
	"otelcol_receiver_accepted_log_records":       {"receiver", "transport"},
	"otelcol_receiver_refused_spans":              {"receiver", "transport"},
	"otelcol_receiver_refused_log_records":        {"receiver", "transport"},
	"otelcol_process_memory_rss":                  {},
}

// vocabulary is what a query may name: each metric with its labels, and the known values
// of some labels.
type vocabulary struct {
	metrics map[string]map[string]bool
	values  map[string]map[string]bool
}

func set(items ...string) map[string]bool {
	m := map[string]bool{}
	for _, i := range items {
		m[i] = true
	}
	return m
}

// readVocabulary reads metadata.yaml at test time (so a metric added there is known at
// once): metric exporter_sentry_x with attributes [a, b] is exposed as
// otelcol_exporter_sentry_x{a, b} (README, Metrics: no suffix). The values of reason,
// category and assembly_reason come from the README's tables.
func readVocabulary(t *testing.T) *vocabulary {
	t.Helper()
	md := tree(t, read(t, "metadata.yaml"))
	attrs := at(t, md, "attributes").(map[string]any)
	v := &vocabulary{metrics: map[string]map[string]bool{}, values: map[string]map[string]bool{}}
	for name, m := range at(t, md, "telemetry", "metrics").(map[string]any) {
		ls := set(targetLabels...)
		if list, ok := m.(map[string]any)["attributes"].([]any); ok {
			for _, a := range list {
				label := a.(string)
				if o, ok := attrs[label].(map[string]any)["name_override"].(string); ok {
					label = o
				}
				ls[label] = true
			}
		}
		v.metrics["otelcol_"+name] = ls
	}
	if len(v.metrics) == 0 {
		t.Fatal("metadata.yaml declares no metrics")
	}
	for name, ls := range collectorMetrics {
		v.metrics[name] = set(append(slices.Clone(ls), targetLabels...)...)
	}

	readme := string(read(t, "README.md"))
	metrics := section(t, []byte(readme), "## Metrics")
	v.values["reason"] = set(capture(t, "(?m)^\\| `(\\w+)` \\|", table(t, metrics, "| reason |"))...)
	cats := regexp.MustCompile(`(?m)^Categories: (.*)$`).FindStringSubmatch(metrics)
	if cats == nil {
		t.Fatal("the README's Metrics section has no Categories line")
	}
	v.values["category"] = set(append(capture(t, "`(\\w+)`", cats[1]), capture(t, `category="(\w+)"`, metrics)...)...)
	frag := regexp.MustCompile("(?m)^\\| `otelcol_exporter_sentry_assembly_fragments` .*$").FindString(metrics)
	v.values["assembly_reason"] = set(capture(t, "`(\\w+)`", strings.SplitN(frag, "|", 4)[3])...)
	for l, vs := range v.values {
		if len(vs) < 3 {
			t.Fatalf("the README gives too few values of %s: %v", l, slices.Sorted(maps.Keys(vs)))
		}
	}
	v.values["status"] = nil // an HTTP status or network_error: checked by pattern
	return v
}

// table returns the markdown table whose header line starts with header.
func table(t *testing.T, md, header string) string {
	t.Helper()
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, header):
			in = true
		case in && !strings.HasPrefix(l, "|"):
			return b.String()
		case in:
			b.WriteString(l + "\n")
		}
	}
	if !in {
		t.Fatalf("no table %q", header)
	}
	return b.String()
}

func capture(t *testing.T, re, s string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// any label: the result of a selector whose metric is unknown (reported once, not again
// for every label of it).
var anyLabel = set("*")

func has(ls map[string]bool, l string) bool { return ls["*"] || ls[l] }

var literalAlternatives = regexp.MustCompile(`^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$`)

// check parses a PromQL query and reports every metric it names that is not declared,
// every label a selector, a grouping or a vector matching uses that the series do not
// carry, and every value of reason, category, assembly_reason or status that is not one
// the exporter writes.
func (v *vocabulary) check(query string) error {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(query)
	if err != nil {
		return err
	}
	var errs []error
	v.labelsOf(expr, &errs)
	return errors.Join(errs...)
}

// labelsOf returns the labels of an expression's result (nil for a scalar).
func (v *vocabulary) labelsOf(n parser.Node, errs *[]error) map[string]bool {
	fail := func(format string, a ...any) { *errs = append(*errs, fmt.Errorf(format, a...)) }
	switch n := n.(type) {
	case *parser.VectorSelector:
		name := n.Name
		for _, m := range n.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		ls, ok := v.metrics[name]
		if !ok {
			fail("metric %q is declared neither in metadata.yaml nor in the collector's list (collectorMetrics)", name)
			return anyLabel
		}
		for _, m := range n.LabelMatchers {
			if m.Name == labels.MetricName {
				continue
			}
			if !ls[m.Name] {
				fail("%s has no label %q", name, m.Name)
				continue
			}
			v.checkValue(name, m, fail)
		}
		return ls
	case *parser.MatrixSelector:
		return v.labelsOf(n.VectorSelector, errs)
	case *parser.SubqueryExpr:
		return v.labelsOf(n.Expr, errs)
	case *parser.ParenExpr:
		return v.labelsOf(n.Expr, errs)
	case *parser.UnaryExpr:
		return v.labelsOf(n.Expr, errs)
	case *parser.StepInvariantExpr:
		return v.labelsOf(n.Expr, errs)
	case *parser.NumberLiteral, *parser.StringLiteral:
		return nil
	case *parser.Call:
		var out map[string]bool
		for _, a := range n.Args {
			if ls := v.labelsOf(a, errs); ls != nil && out == nil {
				out = ls
			}
		}
		return out
	case *parser.AggregateExpr:
		in := v.labelsOf(n.Expr, errs)
		if n.Param != nil {
			v.labelsOf(n.Param, errs)
		}
		for _, g := range n.Grouping {
			if !has(in, g) {
				fail("%s by/without %q: the series aggregated have no such label", n.Op, g)
			}
		}
		switch {
		case n.Op == parser.TOPK || n.Op == parser.BOTTOMK || n.Op == parser.LIMITK || n.Op == parser.LIMIT_RATIO:
			return in
		case n.Without:
			out := maps.Clone(in)
			for _, g := range n.Grouping {
				delete(out, g)
			}
			return out
		default:
			return set(n.Grouping...)
		}
	case *parser.BinaryExpr:
		l, r := v.labelsOf(n.LHS, errs), v.labelsOf(n.RHS, errs)
		if l == nil || r == nil {
			return either(l, r)
		}
		vm := n.VectorMatching
		if vm != nil && vm.On {
			for _, m := range vm.MatchingLabels {
				if !has(l, m) || !has(r, m) {
					fail("on(%s): not a label of both sides", m)
				}
			}
		}
		if n.Op == parser.LOR {
			out := maps.Clone(l)
			maps.Copy(out, r)
			return out
		}
		if vm != nil && vm.Card == parser.CardOneToMany {
			return r
		}
		return l
	}
	*errs = append(*errs, fmt.Errorf("unhandled PromQL node %T (%s): extend labelsOf", n, n))
	return anyLabel
}

// either returns whichever label set is not nil (a scalar beside a vector gives the vector's).
func either(a, b map[string]bool) map[string]bool {
	if a != nil {
		return a
	}
	return b
}

func (v *vocabulary) checkValue(metric string, m *labels.Matcher, fail func(string, ...any)) {
	known, checked := v.values[m.Name]
	if !checked || strings.Contains(m.Value, "$") {
		return
	}
	var vals []string
	switch m.Type {
	case labels.MatchEqual, labels.MatchNotEqual:
		vals = []string{m.Value}
	default:
		if !literalAlternatives.MatchString(m.Value) {
			return // a pattern, not a list of values
		}
		vals = strings.Split(m.Value, "|")
	}
	for _, val := range vals {
		if m.Name == "status" {
			if !regexp.MustCompile(`^([1-5]\d\d|network_error)$`).MatchString(val) {
				fail("%s{status=%q}: not an HTTP status or network_error", metric, val)
			}
		} else if !known[val] {
			fail("%s{%s=%q}: not a value the README lists (%v)", metric, m.Name, val, slices.Sorted(maps.Keys(known)))
		}
	}
}

// rules reads the rule file strictly, as Prometheus does (rulefmt, unknown fields refused).
func rules(t *testing.T) []rulefmt.Rule {
	t.Helper()
	groups, errs := rulefmt.Parse(read(t, rulesFile), false, model.LegacyValidation, parser.NewParser(parser.Options{}), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(errs) > 0 {
		t.Fatalf("%s: %v", rulesFile, errors.Join(errs...))
	}
	var rs []rulefmt.Rule
	for _, g := range groups.Groups {
		rs = append(rs, g.Rules...)
	}
	if len(rs) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
	return rs
}

// slug is GitHub's anchor of a markdown heading.
func slug(heading string) string {
	s := strings.ToLower(strings.TrimSpace(heading))
	s = regexp.MustCompile(`[^\p{L}\p{N} _-]`).ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

// The metric names of the README's PromQL are what the vocabulary reads.
func TestAlertRulesNameDeclaredMetrics(t *testing.T) {
	v := readVocabulary(t)
	for _, r := range rules(t) {
		if err := v.check(r.Expr); err != nil {
			t.Errorf("rule %s%s: %v", r.Alert, r.Record, err)
		}
	}
}

// Each alert has a severity, a summary and a runbook: a heading of docs/operations.md and
// a line of its alert table; the table names no alert that is not a rule.
func TestEveryAlertHasARunbook(t *testing.T) {
	ops := read(t, "docs/operations.md")
	anchors := map[string]bool{}
	for _, h := range capture(t, `(?m)^#{2,4} (.+)$`, string(ops)) {
		anchors[slug(h)] = true
	}
	alerts := table(t, string(ops), "| alert |")
	names := map[string]bool{}
	for _, r := range rules(t) {
		if r.Alert == "" {
			continue
		}
		names[r.Alert] = true
		if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
			t.Errorf("%s: severity %q", r.Alert, s)
		}
		if r.Annotations["summary"] == "" {
			t.Errorf("%s: no summary", r.Alert)
		}
		want := "docs/operations.md#" + slug(r.Alert)
		if r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if !anchors[slug(r.Alert)] {
			t.Errorf("%s: docs/operations.md has no heading %s", r.Alert, r.Alert)
		}
		if !regexp.MustCompile("(?m)^\\| `" + r.Alert + "` \\|").MatchString(alerts) {
			t.Errorf("%s: no line in docs/operations.md's alert table", r.Alert)
		}
	}
	for _, n := range capture(t, "(?m)^\\| `(\\w+)` \\|", alerts) {
		if !names[n] {
			t.Errorf("docs/operations.md's alert table names %s, which is no rule", n)
		}
	}
}

// The memory alert's threshold is the README's bound.
func TestMemoryAlertIsTheBound(t *testing.T) {
	m := regexp.MustCompile(`peak RSS \*\*≤ (\d+) MiB\*\*`).FindStringSubmatch(section(t, read(t, "README.md"), "## Limits"))
	if m == nil {
		t.Fatal("the README's Limits section states no peak RSS bound")
	}
	for _, r := range rules(t) {
		if strings.Contains(r.Expr, "otelcol_process_memory_rss") {
			if want := "> " + m[1] + " * 1024 * 1024"; !strings.Contains(r.Expr, want) {
				t.Errorf("%s: %q lacks %q, the README's bound", r.Alert, r.Expr, want)
			}
			return
		}
	}
	t.Error("no rule watches otelcol_process_memory_rss")
}

// promtoolTests is the part of a promtool test file this test reads.
type promtoolTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// Every alert has a case where it fires and one where it stays quiet, and the test file
// names no alert that does not exist (promtool would pass an expected silence vacuously).
func TestEveryAlertFiresAndStaysQuiet(t *testing.T) {
	var pt promtoolTests
	if err := yaml.Unmarshal(read(t, rulesTestFile), &pt); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pt.RuleFiles, []string{filepath.Base(rulesFile)}) {
		t.Errorf("the test file reads %v, want [%s]", pt.RuleFiles, filepath.Base(rulesFile))
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range pt.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	names := map[string]bool{}
	for _, r := range rules(t) {
		if r.Alert == "" {
			continue
		}
		names[r.Alert] = true
		if !fires[r.Alert] {
			t.Errorf("%s: no case where it fires", r.Alert)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no case where it stays quiet", r.Alert)
		}
	}
	for n := range fires {
		if !names[n] {
			t.Errorf("the test file expects %s, which is no rule", n)
		}
	}
	for n := range quiet {
		if !names[n] {
			t.Errorf("the test file expects %s quiet, but it is no rule", n)
		}
	}
}

// promtool (Debian's prometheus package) checks the rules and runs their tests: each
// rule fires on its synthetic series and stays quiet on the healthy ones.
func TestPromtool(t *testing.T) {
	promtool := tool(t, "promtool", "apt-get install prometheus")
	dir := filepath.Join(root, filepath.Dir(rulesFile))
	for _, args := range [][]string{
		{"check", "rules", filepath.Base(rulesFile)},
		{"test", "rules", filepath.Base(rulesTestFile)},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		} else {
			t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
		}
	}
}

// grafanaVariables are replaced before a dashboard query is parsed.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// dashboardQueries returns every query of the dashboard: the panels' targets (rows'
// panels included) and the variables' label_values.
func dashboardQueries(t *testing.T) (queries map[string]string, labelValues map[string][2]string) {
	t.Helper()
	var d struct {
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(read(t, dashboardFile), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	type panel struct {
		ID         int               `json:"id"`
		Title      string            `json:"title"`
		Type       string            `json:"type"`
		Panels     []json.RawMessage `json:"panels"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	}
	queries, labelValues = map[string]string{}, map[string][2]string{}
	ids := map[int]bool{}
	var walk func([]json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p panel
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatal(err)
			}
			if ids[p.ID] {
				t.Errorf("panel id %d twice", p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: datasource not ${datasource}", p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				queries[p.Title+" "+tg.RefID] = tg.Expr
			}
		}
	}
	walk(d.Panels)
	re := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := re.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, v.Definition)
			continue
		}
		labelValues[v.Name] = [2]string{m[1], m[2]}
	}
	return queries, labelValues
}

func TestDashboardNamesDeclaredMetrics(t *testing.T) {
	v := readVocabulary(t)
	queries, labelValues := dashboardQueries(t)
	if len(queries) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	for name, q := range queries {
		if err := v.check(grafanaVariables.Replace(q)); err != nil {
			t.Errorf("panel %s: %v", name, err)
		}
	}
	for name, lv := range labelValues {
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(lv[0])
		if err != nil {
			t.Errorf("variable %s: %v", name, err)
			continue
		}
		var errs []error
		if ls := v.labelsOf(expr, &errs); !has(ls, lv[1]) {
			errs = append(errs, fmt.Errorf("no label %q", lv[1]))
		}
		if err := errors.Join(errs...); err != nil {
			t.Errorf("variable %s: %v", name, err)
		}
	}
}

// What the checks above catch: a wrong metric name (a typo, the _total suffix this
// reader does not add), a label the metric lacks, a grouping or matching label no
// series carries, a reason the exporter never writes.
func TestQueryCheckCatchesWrongNames(t *testing.T) {
	v := readVocabulary(t)
	for _, q := range []string{
		`rate(otelcol_exporter_sentry_droped_items[5m]) > 0`,
		`rate(otelcol_exporter_sentry_dropped_items_total[5m]) > 0`,
		`sentry_dropped_items > 0`,
		`otelcol_exporter_sentry_pending_bytes{projet="1"} > 0`,
		`sum by (reasn) (rate(otelcol_exporter_sentry_dropped_items[5m]))`,
		`sum by (project) (otelcol_exporter_sentry_pending_bytes) and on (category) sum by (project) (otelcol_exporter_sentry_concurrency_limit)`,
		`rate(otelcol_exporter_sentry_dropped_items{reason="send_eror"}[5m])`,
		`rate(otelcol_exporter_sentry_dropped_items{reason=~"send_error|queue_overflw"}[5m])`,
		`rate(otelcol_exporter_sentry_requests{status="timeout"}[5m])`,
		`rate(otelcol_exporter_enqueue_failed_span[5m])`,
		`rate(otelcol_exporter_sentry_dropped_items[5m]`,
	} {
		if err := v.check(q); err == nil {
			t.Errorf("accepted %s", q)
		} else {
			t.Logf("%s\n    -> %v", q, err)
		}
	}
	for _, q := range []string{
		`sum by (project, reason) (rate(otelcol_exporter_sentry_dropped_items{reason=~"send_error|network_error"}[5m]))`,
		`max by (project) (otelcol_exporter_sentry_pending_bytes) > 4 * 1024 * 1024`,
		`rate(otelcol_exporter_enqueue_failed_spans{exporter=~"sentry.*"}[5m])`,
	} {
		if err := v.check(q); err != nil {
			t.Errorf("refused %s: %v", q, err)
		}
	}
}

// The README's own PromQL (its Metrics section) passes the same check.
func TestReadmePromQLNamesDeclaredMetrics(t *testing.T) {
	v := readVocabulary(t)
	block := regexp.MustCompile("(?s)```promql\n(.*?)```").FindStringSubmatch(section(t, read(t, "README.md"), "## Metrics"))
	if block == nil {
		t.Fatal("no promql block in the README's Metrics section")
	}
	var q strings.Builder
	flush := func() {
		if s := strings.TrimSpace(q.String()); s != "" {
			if err := v.check(s); err != nil {
				t.Errorf("README: %s: %v", s, err)
			}
		}
		q.Reset()
	}
	for _, l := range strings.Split(block[1], "\n") {
		if strings.HasPrefix(l, "#") {
			flush()
			continue
		}
		q.WriteString(l + "\n")
	}
	flush()
}
