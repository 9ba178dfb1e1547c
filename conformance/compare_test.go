package conformance

import (
	"fmt"
	"strings"
)

// The comparison builders the check table is made of.

// fields joins several values for one comparison; absent ones print as "-",
// all absent as absent.
func fields(vals ...string) string {
	all := ""
	for i, v := range vals {
		if v == "" {
			v = "-"
		}
		if i > 0 {
			all += " "
		}
		all += v
	}
	if strings.Trim(all, "- ") == "" {
		return ""
	}
	return all
}

func same(where, want, got string) []diff {
	if want == got {
		return nil
	}
	return []diff{{where, show(want), show(got)}}
}

// txField compares one value of every transaction sentry-go sent with the
// exporter's transaction for the same request.
func txField(name string, f func(*view, map[string]any) string) check {
	return check{"transaction " + name, func(s, o *view) []diff {
		var out []diff
		for _, k := range keys(s.transactions) {
			got := "<no transaction>"
			if tx := o.transactions[k]; tx != nil {
				got = f(o, tx.payload)
			}
			out = append(out, same(k, f(s, s.transactions[k].payload), got)...)
		}
		return out
	}}
}

// errField compares one value of every error event sentry-go sent with each
// of the exporter's events for the same exception type (there should be one).
func errField(name string, f func(*view, map[string]any) string) check {
	return check{"error " + name, func(s, o *view) []diff {
		var out []diff
		for _, k := range keys(s.errors) {
			want := f(s, s.errors[k][0].payload)
			if len(o.errors[k]) == 0 {
				out = append(out, same(k, want, "<no event>")...)
			}
			for i, ev := range o.errors[k] {
				out = append(out, same(fmt.Sprintf("%s (event %d of %d)", k, i+1, len(o.errors[k])), want, f(o, ev.payload))...)
			}
		}
		return out
	}}
}

// errorCounts is "type xN" for every exception type, sorted.
func errorCounts(v *view) string {
	var out []string
	for _, k := range keys(v.errors) {
		out = append(out, fmt.Sprintf("%s x%d", k, len(v.errors[k])))
	}
	return strings.Join(out, ", ")
}

// logField compares one value of every log record by body.
func logField(name string, f func(*view, *logRecord) string) check {
	return check{"log " + name, func(s, o *view) []diff {
		var out []diff
		for _, body := range keys(s.logs) {
			got := "<no record>"
			if l := o.logs[body]; l != nil {
				got = f(o, l)
			}
			out = append(out, same(body, f(s, s.logs[body]), got)...)
		}
		return out
	}}
}
