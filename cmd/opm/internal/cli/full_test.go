package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// TestExecChild: where the lean opm cannot become opm-full (no exec, or
// streams of its caller's own), opm-full runs as a child on the same
// streams and its exit code is opm's.
func TestExecChild(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh to run: %v", err)
	}
	var out, errb strings.Builder
	s := Streams{In: strings.NewReader("in\n"), Out: &out, Err: &errb}
	code, err := execChild(s, sh, []string{"-c", `read l; echo "$l $X"; echo err >&2; exit 3`}, []string{"X=env"})
	if err != nil || code != 3 || out.String() != "in env\n" || errb.String() != "err\n" {
		t.Errorf("exit %d, %v; stdout %q, stderr %q", code, err, out.String(), errb.String())
	}
	if code, err := execChild(s, sh, []string{"-c", "exit 0"}, nil); code != 0 || err != nil {
		t.Errorf("exit %d, %v; want 0", code, err)
	}
	if _, err := execChild(s, sh, []string{"-c", "kill -9 $$"}, nil); err == nil {
		t.Error("a child killed by a signal: no error")
	}
}
