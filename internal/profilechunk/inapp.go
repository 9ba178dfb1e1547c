package profilechunk

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// InApp is the user's word on which frames are application code, as the
// SDKs' in-app includes and excludes: each entry is a module prefix (a Go
// package path, a JVM or .NET class, a Python or Elixir module, or a native
// function when a frame has no module), or, when it holds a `*`, a glob on
// the frame's file path (`*` within a path element, `**` across them). An
// include wins over an exclude, and both over the runtime's own rule, as in
// sentry-java's SentryStackTraceFactory.isInApp. The zero value (or nil)
// decides nothing.
type InApp struct {
	include, exclude []inAppEntry
}

type inAppEntry struct {
	prefix string
	glob   *regexp.Regexp
}

// NewInApp compiles include and exclude; an empty entry or a bad glob is an
// error naming it.
func NewInApp(include, exclude []string) (*InApp, error) {
	r := &InApp{}
	var errs []error
	for _, l := range []struct {
		key  string
		in   []string
		into *[]inAppEntry
	}{{"in_app_include", include, &r.include}, {"in_app_exclude", exclude, &r.exclude}} {
		for i, s := range l.in {
			e, err := compileInApp(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("`%s[%d]` %q: %w", l.key, i, s, err))
				continue
			}
			*l.into = append(*l.into, e)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

func compileInApp(s string) (inAppEntry, error) {
	if strings.TrimSpace(s) == "" {
		return inAppEntry{}, errors.New("must not be empty")
	}
	if !strings.Contains(s, "*") {
		return inAppEntry{prefix: s}, nil
	}
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "**"):
			re.WriteString(".*")
			i++
		case s[i] == '*':
			re.WriteString("[^/]*")
		default:
			re.WriteString(regexp.QuoteMeta(s[i : i+1]))
		}
	}
	re.WriteString("$")
	g, err := regexp.Compile(re.String())
	if err != nil {
		return inAppEntry{}, err
	}
	return inAppEntry{glob: g}, nil
}

// decide is the user's in_app for a frame of module (or function, when it
// has none) and path: 1 true, -1 false, 0 no entry matches.
func (r *InApp) decide(module, path string) int8 {
	if r == nil {
		return 0
	}
	if matchAny(r.include, module, path) {
		return 1
	}
	if matchAny(r.exclude, module, path) {
		return -1
	}
	return 0
}

func matchAny(l []inAppEntry, module, path string) bool {
	for _, e := range l {
		if e.glob != nil && path != "" && e.glob.MatchString(path) || e.glob == nil && module != "" && strings.HasPrefix(module, e.prefix) {
			return true
		}
	}
	return false
}
