package model

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestProblemsErrFormats(t *testing.T) {
	load := Problem{Rule: RuleDuplicatePackage, Severity: SeverityError, Message: `duplicate package "a"`, Package: "a", load: true}
	if err := (Problems{load}).Err(); err == nil || err.Error() != `duplicate package "a"` {
		t.Fatalf("a lone load problem prints bare, like upstream: %v", err)
	}
	if err := (Problems{{Severity: SeverityWarning, Message: "w"}}).Err(); err != nil {
		t.Fatalf("warnings are not errors: %v", err)
	}
	ps := Problems{
		load,
		{Rule: RuleDefaultChannel, Severity: SeverityError, Message: "default channel must be set", Package: "p"},
		{Rule: RuleChannelHead, Severity: SeverityError, Message: "multiple channel heads found in graph: x, y", Package: "p", Channel: "c", channelNode: true},
		{Rule: RuleSkips, Severity: SeverityError, Message: "skip[0] is empty", Package: "p", Channel: "c", Bundle: "b", bundleNode: true},
		{Rule: RuleSkipRange, Severity: SeverityError, Message: "invalid skipRange \"x\"", Package: "p", Channel: "d", Bundle: "e", bundleNode: true},
		{Rule: RuleDuplicateVersion, Severity: SeverityError, Message: "duplicate versions", Package: "q"},
		{Rule: RuleSchema, Severity: SeverityWarning, Message: "ignored warning", Package: "q"},
	}
	want := `invalid index:
├── duplicate package "a"
├── invalid package "p":
│   ├── default channel must be set
│   ├── invalid channel "c":
│   │   ├── multiple channel heads found in graph: x, y
│   │   └── invalid bundle "b":
│   │       └── skip[0] is empty
│   └── invalid channel "d":
│       └── invalid bundle "e":
│           └── invalid skipRange "x"
└── invalid package "q":
    └── duplicate versions`
	err := ps.Err()
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
	var pe *ProblemError
	if !errors.As(err, &pe) || pe.Problem.Rule != RuleDuplicatePackage {
		t.Fatalf("errors.As does not reach the problems: %v", pe)
	}
	var n int
	var walk func(error)
	walk = func(e error) {
		if p, ok := e.(*ProblemError); ok {
			n++
			if strings.Contains(p.Problem.Message, "ignored") {
				t.Error("a warning is in the error tree")
			}
		}
		if u, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range u.Unwrap() {
				walk(c)
			}
		}
	}
	walk(err)
	if n != 6 {
		t.Fatalf("the tree unwraps to %d problems, want 6", n)
	}
	if got := len(ps.Errors()); got != 6 {
		t.Fatalf("Errors() = %d", got)
	}
	if got := len(ps.Warnings()); got != 1 {
		t.Fatalf("Warnings() = %d", got)
	}
}

func TestHeadAndReplacesChain(t *testing.T) {
	ch := &Channel{Name: "c", Bundles: map[string]*Bundle{}}
	add := func(name, replaces string, skips ...string) {
		ch.Bundles[name] = &Bundle{Name: name, Replaces: replaces, Skips: skips, Channel: ch}
	}
	add("a", "")
	add("b", "a")
	add("c", "b", "x")
	if h, err := ch.Head(); err != nil || h.Name != "c" {
		t.Fatalf("head %v %v", h, err)
	}
	if rule, err := replacesChain(ch); err != nil {
		t.Fatalf("%s: %v", rule, err)
	}
	add("d", "") // nobody replaces d: a second head
	if _, err := ch.Head(); err == nil || err.Error() != "multiple channel heads found in graph: c, d" {
		t.Fatalf("got %v", err)
	}
	delete(ch.Bundles, "d")
	add("e", "")
	add("c", "b", "e") // c skips e: e is not stranded
	if rule, err := replacesChain(ch); err != nil {
		t.Fatalf("%s: %v", rule, err)
	}
	add("f", "")
	add("c", "b", "e", "f")
	add("g", "") // g is neither reachable nor skipped, and is a head
	if _, err := replacesChain(ch); err == nil {
		t.Fatal("want a head error")
	}
}

// A directory that is not a catalog has a parse problem per file: the
// tree lists the first ones and counts the others; Problems keeps all.
func TestProblemsTreeCountsManyParseProblems(t *testing.T) {
	var ps Problems
	for i := range maxLoadShown + 5 {
		ps = append(ps, Problem{Rule: RuleParse, Severity: SeverityError, load: true, Message: fmt.Sprintf("f%02d: not a catalog file", i), File: fmt.Sprintf("f%02d", i)})
	}
	ps = append(ps, Problem{Rule: RuleDuplicatePackage, Severity: SeverityError, Message: `duplicate package "a"`, Package: "a", load: true})
	lines := strings.Split(ps.Err().Error(), "\n")
	if len(lines) != 1+maxLoadShown+2 {
		t.Fatalf("%d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if lines[maxLoadShown] != "├── f19: not a catalog file" || lines[maxLoadShown+1] != `├── duplicate package "a"` ||
		lines[maxLoadShown+2] != "└── and 5 more files that cannot be read" {
		t.Errorf("tree:\n%s", strings.Join(lines, "\n"))
	}
	// Only validate's report (which has -o json) points at -o json: Err
	// is also the error of serve, filter and install.
	report := strings.Split(strings.TrimSuffix(ps.Report(), "\n"), "\n")
	if last := report[len(report)-1]; last != "└── and 5 more files that cannot be read (-o json lists every problem)" {
		t.Errorf("report's last line: %q", last)
	}
	if len(ps.Errors()) != maxLoadShown+6 {
		t.Errorf("Errors() = %d", len(ps.Errors()))
	}
}
