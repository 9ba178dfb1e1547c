// Command mutantcheck runs the mutants gremlins reports as NOT COVERED and
// prints what the tests make of each.
//
// gremlins (github.com/go-gremlins/gremlins) tests only the mutants that the
// coverage profile covers, and the profile's blocks start after a case
// clause's colon: the condition of `case x < y:` lies outside every block, so
// gremlins reports its mutants NOT COVERED and never runs them, though the
// tests run that line. mutantcheck applies each such mutant in turn, through
// `go test -overlay` (the source files are never written), runs the package's
// tests, and prints one line per mutant: KILLED, LIVED, TIMED OUT or NOT VIABLE
// (it does not build). `make mutate` runs it after gremlins (docs/mutations.md).
//
// Usage: mutantcheck -report gremlins.json -pkg ./ratelimit
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// report is the part of gremlins' JSON output that mutantcheck reads.
type report struct {
	Files []struct {
		FileName  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// mutations is gremlins' table of what each mutator turns an operator into.
var mutations = map[string]map[token.Token]token.Token{
	"CONDITIONALS_BOUNDARY": {token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR},
	"CONDITIONALS_NEGATION": {
		token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ,
		token.LEQ: token.GTR, token.GTR: token.LEQ, token.GEQ: token.LSS,
	},
	"ARITHMETIC_BASE":     {token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL},
	"INCREMENT_DECREMENT": {token.INC: token.DEC, token.DEC: token.INC},
	"INVERT_NEGATIVES":    {token.SUB: token.ADD},
}

func main() {
	reportFile := flag.String("report", "", "gremlins' JSON output (-o)")
	pkg := flag.String("pkg", "", "the package gremlins ran on, as a directory (./ratelimit)")
	timeout := flag.Duration("timeout", 2*time.Minute, "the longest one test run may take")
	flag.Parse()
	if err := run(*reportFile, *pkg, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "mutantcheck:", err)
		os.Exit(1)
	}
}

func run(reportFile, pkg string, timeout time.Duration) error {
	if reportFile == "" || pkg == "" {
		return errors.New("-report and -pkg are required")
	}
	b, err := os.ReadFile(reportFile)
	if err != nil {
		return err
	}
	var r report
	if err = json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", reportFile, err)
	}
	tmp, err := os.MkdirTemp("", "mutantcheck")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	counts := map[string]int{}
	for _, f := range r.Files {
		src := filepath.Join(pkg, f.FileName)
		orig, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		for _, m := range f.Mutations {
			if m.Status != "NOT COVERED" {
				continue
			}
			mutated, what, err := mutate(orig, m.Line, m.Column, m.Type)
			if err != nil {
				fmt.Printf("%-11s %s %s:%d:%d: %v\n", "SKIPPED", m.Type, src, m.Line, m.Column, err)
				counts["SKIPPED"]++
				continue
			}
			status, err := test(tmp, pkg, src, mutated, timeout)
			if err != nil {
				return err
			}
			counts[status]++
			fmt.Printf("%-11s %s %s:%d:%d: %s\n", status, m.Type, src, m.Line, m.Column, what)
		}
	}
	fmt.Printf("killed %d, lived %d, timed out %d, not viable %d, skipped %d\n",
		counts["KILLED"], counts["LIVED"], counts["TIMED OUT"], counts["NOT VIABLE"], counts["SKIPPED"])
	return nil
}

// mutate returns src with the operator at line:col replaced as mutator
// mutates it, and a note of the replacement.
func mutate(src []byte, line, col int, mutator string) ([]byte, string, error) {
	table, ok := mutations[mutator]
	if !ok {
		return nil, "", fmt.Errorf("unknown mutator %s", mutator)
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return nil, "", fmt.Errorf("no operator at %d:%d", line, col)
		}
		p := file.Position(pos)
		if p.Line != line || p.Column != col {
			continue
		}
		to, ok := table[tok]
		if !ok {
			return nil, "", fmt.Errorf("%s does not mutate %s", mutator, tok)
		}
		off := file.Offset(pos)
		out := make([]byte, 0, len(src)+1)
		out = append(out, src[:off]...)
		out = append(out, to.String()...)
		out = append(out, src[off+len(tok.String()):]...)
		return out, fmt.Sprintf("%s → %s", tok, to), nil
	}
}

// test runs pkg's tests with src replaced by mutated, through an overlay.
func test(tmp, pkg, src string, mutated []byte, timeout time.Duration) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	// tmp is this run's own temporary folder.
	repl := filepath.Join(tmp, "mutant.go")
	err = os.WriteFile(repl, mutated, 0o600) //nolint:gosec // G703: see above
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(tmp, "overlay.json")
	b, err := json.Marshal(map[string]map[string]string{"Replace": {abs: repl}})
	if err != nil {
		return "", err
	}
	err = os.WriteFile(overlay, b, 0o600)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// pkg is the developer's own -pkg argument, as for go test itself.
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-overlay="+overlay, "./"+strings.TrimPrefix(filepath.Clean(pkg), "./")) //nolint:gosec // G204: see above
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return "TIMED OUT", nil
	case err == nil:
		return "LIVED", nil
	case strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "[setup failed]"):
		return "NOT VIABLE", nil
	default:
		return "KILLED", nil
	}
}
