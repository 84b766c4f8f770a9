package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/clitree"
)

// sqliteCommands are upstream's commands over SQLite catalogs, deprecated
// upstream and not provided here (docs/compatibility.md).
var sqliteCommands = []string{"opm index", "opm registry"}

// TestCommandsAndFlagsOfUpstream: every command and flag upstream opm
// v1.73.0's help shows (with HELP_ALPHA=true), recorded by hack/cligolden
// in testdata/cli-golden/upstream.txt, exists here with the same
// shorthand and type, but for the SQLite commands. Ours may have more.
func TestCommandsAndFlagsOfUpstream(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(goldenRoot, "cli-golden", "upstream.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HELP_ALPHA", "true")
	ours, err := clitree.Walk("opm", func(path []string) ([]byte, error) {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append(path, "--help")); code != 0 {
			return nil, fmt.Errorf("exit %d: %s", code, errb.Bytes())
		}
		return out.Bytes(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, l := range ours {
		have[l] = true
	}
	excluded := map[string]int{}
	var total, found int
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		skip := false
		for _, p := range sqliteCommands {
			if l == p || strings.HasPrefix(l, p+" ") {
				excluded[p]++
				skip = true
			}
		}
		if skip {
			continue
		}
		total++
		if have[l] {
			found++
		} else {
			t.Errorf("upstream's %q is missing", l)
		}
	}
	for _, p := range sqliteCommands {
		if excluded[p] == 0 {
			t.Errorf("upstream.txt has no %q: the exclusion is stale", p)
		}
	}
	if total < 200 {
		t.Fatalf("only %d lines of upstream's: a bad recording?", total)
	}
	t.Logf("%d of upstream's %d commands and flags (SQLite commands aside) exist here; ours list %d", found, total, len(ours))
}

// TestHiddenFlagsOfUpstream: the flags upstream hides from help are
// accepted where upstream accepts them: the root's --debug (`opm --debug`
// exits 0, `opm --debug version` is an unknown flag, as upstream's), the
// deprecated --skip-tls everywhere, with cobra's deprecation line on
// standard error (never in the catalog on standard output), as
// generate dockerfile's deprecated --binary-image.
func TestHiddenFlagsOfUpstream(t *testing.T) {
	if code, _, errOut := run(t, "--debug"); code != 0 {
		t.Errorf("opm --debug: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run(t, "--debug", "version"); code != 1 || !strings.HasPrefix(errOut, "Error: unknown flag: --debug\n") {
		t.Errorf("opm --debug version: exit %d: %s", code, errOut)
	}
	example := filepath.Join(goldenRoot, "example")
	_, plain, _ := run(t, "render", example)
	code, out, errOut := run(t, "render", "--skip-tls", example)
	if code != 0 || out != plain || errOut != "Flag --skip-tls has been deprecated, use --use-http and --skip-tls-verify instead\n" {
		t.Errorf("opm render --skip-tls: exit %d, stdout equal to render's: %v, stderr %q", code, out == plain, errOut)
	}
	code, out, errOut = run(t, "completion", "bash", "--skip-tls")
	if code != 0 || !strings.HasPrefix(out, "# bash completion V2 for opm") || errOut != "Flag --skip-tls has been deprecated, use --use-http and --skip-tls-verify instead\n" {
		t.Errorf("opm completion bash --skip-tls: exit %d, stdout %.40q, stderr %q", code, out, errOut)
	}
	dir := t.TempDir()
	code, out, errOut = run(t, "generate", "dockerfile", "--binary-image", "quay.io/x/opm:v1", filepath.Join(dir))
	if code != 0 || out != "" || errOut != "Flag --binary-image has been deprecated, use --base-image instead\n" {
		t.Errorf("opm generate dockerfile --binary-image: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
