package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/internal/shapecat"
)

// writeShape writes a hostile shape of internal/shapecat as a catalog
// directory.
func writeShape(t *testing.T, name string, n int) string {
	t.Helper()
	s, ok := shapecat.LookupAny(name)
	if !ok {
		t.Fatalf("no shape %s", name)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := s.WriteDir(dir, n); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestQueryInstallUndecided: a question past --timeout is answered
// undecided, in text and JSON, and exits 2 (the answer could not be
// given), with --all too; --timeout 0 is OLM's unbounded answer. The budget
// is a nanosecond: spent on any machine before the question is decided.
func TestQueryInstallUndecided(t *testing.T) {
	dir := writeShape(t, "pigeonhole", 3)
	code, out, errOut := run(t, "alpha", "query", "install", dir, "-p", "shape", "--timeout", "1ns")
	if code != 2 || !strings.Contains(out, "is undecided: undecided within 1e-09 s: the constraints are too hard to decide") {
		t.Errorf("text: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "alpha", "query", "install", dir, "-p", "shape", "--timeout", "1ns", "-o", "json")
	var a install.Answer
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != 2 || a.Status != install.Undecided {
		t.Errorf("json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	code, out, errOut = run(t, "alpha", "query", "install", dir, "--all", "--timeout", "1ns")
	if code != 2 || !strings.Contains(out, "undecided") || !strings.Contains(errOut, "left undecided within 1ns (--timeout)") {
		t.Errorf("--all: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "alpha", "query", "install", dir, "-p", "shape", "--timeout", "0")
	if code != 1 || !strings.Contains(out, "cannot be installed") {
		t.Errorf("--timeout 0: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "alpha", "query", "install", dir, "-p", "shape", "--max-terms", "5")
	if code != 2 || !strings.Contains(out, "the problem is too large to decide") {
		t.Errorf("--max-terms 5: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, "alpha", "query", "install", dir, "-p", "shape", "--timeout", "soon")
	if code != 2 || !strings.Contains(errOut, `invalid argument "soon" for "--timeout"`) {
		t.Errorf("bad --timeout: exit %d\n%s", code, errOut)
	}
}

// TestDiffCheckUndecided: diff --check whose uninstallable questions are
// undecided says so and exits 2, not 0 ("passed") nor 1.
func TestDiffCheckUndecided(t *testing.T) {
	old, new := writeShape(t, "pigeonhole", 3), writeShape(t, "pigeonhole", 4)
	code, out, errOut := run(t, "alpha", "diff", old, new, "--check", "--timeout", "1ns")
	if code != 2 || !strings.Contains(out, "not decided whether") || !strings.Contains(out, "check undecided") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestQueryUpdatesUndecided: query updates past --timeout (its CRD
// comparisons) exits 2 saying so.
func TestQueryUpdatesUndecided(t *testing.T) {
	dir := writeShape(t, "crd-deep", 50)
	code, out, errOut := run(t, "alpha", "query", "updates", dir, "-p", "shape", "--from", "shape.v1.0.0", "--timeout", "1ns")
	if code != 2 || !strings.Contains(errOut, "undecided within 1ns (--timeout)") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "alpha", "query", "updates", dir, "-p", "shape", "--from", "shape.v1.0.0"); code != 0 {
		t.Errorf("default budget: exit %d\n%s%s", code, out, errOut)
	}
}
