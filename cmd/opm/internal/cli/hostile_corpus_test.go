//go:build corpus

package cli

import (
	"strings"
	"testing"
)

// TestHostileQuestions asks the questions of issue 24's hostile catalogs
// at their full size (internal/shapecat.Hostile): each is answered within
// its bounds, undecided, with the reason. The budgets are short: each
// question is undecided however fast the machine (a pigeonhole of 11
// takes OLM's search minutes).
func TestHostileQuestions(t *testing.T) {
	for _, tc := range []struct {
		shape string
		n     int
		args  []string
		want  string
	}{
		{"pigeonhole", 11, []string{"-p", "shape", "--timeout", "2s"}, "undecided within 2 s: the constraints are too hard to decide: package shape"},
		{"self-deps", 5000, []string{"-p", "shape"}, "the problem is too large to decide"},
		{"cel-nested", 100, []string{"-p", "shape"}, "its evaluation costs more than the limit of 1000000"},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			dir := writeShape(t, tc.shape, tc.n)
			code, out, errOut := run(t, append([]string{"alpha", "query", "install", dir}, tc.args...)...)
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d\n%s%s", code, out, errOut)
			}
		})
	}
	t.Run("diff", func(t *testing.T) {
		old, new := writeShape(t, "pigeonhole", 10), writeShape(t, "pigeonhole", 11)
		code, out, errOut := run(t, "alpha", "diff", old, new, "--check", "--timeout", "1s")
		if code != 2 || !strings.Contains(out, "check undecided") {
			t.Errorf("exit %d\n%s%s", code, out, errOut)
		}
	})
}
