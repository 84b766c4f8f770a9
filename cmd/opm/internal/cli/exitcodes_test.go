package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// exitCodesDoc is the table of every command's exit codes.
const exitCodesDoc = "../../../../docs/exit-codes.md"

// docExitCodes reads docs/exit-codes.md's tables: each command's row, by
// its path, and the exit code of a wrong command line (its last cell).
func docExitCodes(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(exitCodesDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `opm") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		cmd := strings.Trim(strings.TrimSpace(cells[0]), "`")
		code, err := strconv.Atoi(strings.TrimSpace(cells[len(cells)-1]))
		if err != nil {
			t.Fatalf("%s: the last cell is no exit code: %q", exitCodesDoc, line)
		}
		if _, dup := rows[cmd]; dup {
			t.Fatalf("%s: %s has two rows", exitCodesDoc, cmd)
		}
		rows[cmd] = code
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestExitCodes: every command's exit codes are docs/exit-codes.md's
// (issue 27: the same mistake exited 1 from one command and 2 from
// another, and a misspelt package exited 1, the code of "not
// installable"). The commands that answer a question exit 0 yes, 1 no,
// 2 for a wrong question, flag or input; upstream's commands exit 1 for
// every error, as upstream opm does. Every command of the tree must have
// a row, and a misspelt flag must exit as its row says.
func TestExitCodes(t *testing.T) {
	doc := docExitCodes(t)

	// Every command of the tree has a row, and no row names a command
	// the tree does not have; a misspelt flag exits as the row says.
	var paths []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		paths = append(paths, c.CommandPath())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := New(Streams{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root)
	for _, p := range paths {
		want, ok := doc[p]
		if !ok {
			t.Errorf("%s has no row in %s", p, exitCodesDoc)
			continue
		}
		args := append(strings.Fields(p)[1:], "--no-such-flag")
		if code, _, errOut := run(t, args...); code != want || !strings.Contains(errOut, "unknown flag: --no-such-flag") {
			t.Errorf("%s --no-such-flag: exit %d, want %d (%s)\n%s", p, code, want, exitCodesDoc, errOut)
		}
	}
	for p := range doc {
		if !slices.Contains(paths, p) {
			t.Errorf("%s: a row for %s, which opm does not have", exitCodesDoc, p)
		}
	}

	// Each code of each command that answers a question, and the errors
	// of upstream's commands.
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A channel whose every entry has olm.deprecated: OLM v0 resolves
	// no update in it, an answer (no), not a wrong question.
	write("deprecated/catalog.yaml", `---
schema: olm.package
name: p
defaultChannel: stable
---
schema: olm.channel
package: p
name: stable
entries:
  - name: p.v1.0.0
---
schema: olm.bundle
package: p
name: p.v1.0.0
image: example.com/p:1.0.0
properties:
- type: olm.package
  value: {packageName: p, version: 1.0.0}
- type: olm.deprecated
  value: {}
`)
	deprecated := filepath.Join(tmp, "deprecated")
	filterConf := write("filter.yaml", "packages:\n- name: etcd\n")
	badFilterConf := write("bad-filter.yaml", "packages:\n- name: etdc\n")
	missing := filepath.Join(tmp, "no-such-catalog")
	updates := filepath.Join(goldenRoot, "updates")
	newer := filepath.Join(goldenRoot, "diff", "new")
	community := filepath.Join(goldenRoot, "install", "community")
	olmv1 := olmv1Catalog()
	clusterState := func(name string) []string {
		return append([]string{"alpha", "query", "cluster", "--state", filepath.Join(goldenRoot, "cluster", "states", name+".yaml")}, clusterCatalogs()...)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		// query install
		{[]string{"alpha", "query", "install", community, "-p", "etcd"}, 0},
		{[]string{"alpha", "query", "install", community, "--all"}, 0},
		{[]string{"alpha", "query", "install", community, "-p", "broken"}, 1},
		{[]string{"alpha", "query", "install", community, "-p", "broken", "-o", "json"}, 1},
		{[]string{"alpha", "query", "install", community, "-p", "etcx"}, 2},
		{[]string{"alpha", "query", "install", community, "-p", "etcx", "-o", "json"}, 2},
		{[]string{"alpha", "query", "install", community, "-p", "etcd", "-c", "stabel"}, 2},
		{[]string{"alpha", "query", "install", community, "-p", "etcd", "--bundle", "etcdoperator.v9"}, 2},
		{[]string{"alpha", "query", "install", community, "-p", "etcd", "--version", "9.9.9"}, 2},
		{[]string{"alpha", "query", "install", community, "-p", "etcd", "--version", "x"}, 2},
		{[]string{"alpha", "query", "install", community, "-p", "etcd", "--source", "nope"}, 2},
		{[]string{"alpha", "query", "install", community, "-p", "etcd", "-o", "xml"}, 2},
		{[]string{"alpha", "query", "install", community}, 2},
		{[]string{"alpha", "query", "install", missing, "-p", "etcd"}, 2},
		{[]string{"alpha", "query", "install", olmv1, "-p", "plain", "--olm", "v1"}, 0},
		{[]string{"alpha", "query", "install", olmv1, "-p", "needs-certs", "--olm", "v1"}, 1},
		{[]string{"alpha", "query", "install", olmv1, "-p", "plian", "--olm", "v1"}, 2},
		{[]string{"alpha", "query", "install", olmv1, "-p", "plain", "-c", "nope", "--olm", "v1"}, 2},
		{[]string{"alpha", "query", "install", olmv1, "-p", "plain", "--olm", "both"}, 0},
		{[]string{"alpha", "query", "install", olmv1, "-p", "webhooks", "--olm", "both"}, 1},
		{[]string{"alpha", "query", "install", olmv1, "-p", "plian", "--olm", "both"}, 2},
		{[]string{"alpha", "query", "install", olmv1, "-p", "plain", "--olm", "v2"}, 2},
		// query updates
		{[]string{"alpha", "query", "updates", updates, "-p", "etcd", "--from", "etcdoperator.v0.9.0"}, 0},
		{[]string{"alpha", "query", "updates", updates, "-p", "etcd", "--all"}, 0},
		{[]string{"alpha", "query", "updates", deprecated, "-p", "p", "--from", "p.v0.9.0"}, 1},
		{[]string{"alpha", "query", "updates", deprecated, "-p", "p", "--all"}, 1},
		{[]string{"alpha", "query", "updates", updates, "-p", "etcdd", "--from", "etcdoperator.v0.9.0"}, 2},
		{[]string{"alpha", "query", "updates", updates, "-p", "etcd", "-c", "stabel", "--from", "etcdoperator.v0.9.0"}, 2},
		{[]string{"alpha", "query", "updates", updates, "-p", "etcd", "--from", "etcdoperator.v0.9.0", "-o", "xml"}, 2},
		{[]string{"alpha", "query", "updates", updates, "-p", "etcd"}, 2},
		{[]string{"alpha", "query", "updates", missing, "-p", "etcd", "--all"}, 2},
		{[]string{"alpha", "query", "updates", olmv1, "-p", "skipper", "--from", "1.0.0", "--olm", "v1"}, 0},
		{[]string{"alpha", "query", "updates", olmv1, "-p", "skipper", "--from", "1.0.0", "--olm", "v1", "--version-range", ">=3.0.0"}, 1},
		{[]string{"alpha", "query", "updates", olmv1, "-p", "skipper", "--from", "1.0.0", "--olm", "v1", "--installed-version", "1.1.0"}, 2},
		{[]string{"alpha", "query", "updates", olmv1, "-p", "plian", "--from", "1.0.0", "--olm", "v1"}, 2},
		{[]string{"alpha", "query", "updates", olmv1, "-p", "plain", "--from", "1.0.0", "--olm", "both"}, 0},
		{[]string{"alpha", "query", "updates", olmv1, "-p", "plain", "-c", "nope", "--from", "1.0.0", "--olm", "both"}, 2},
		// query cluster
		{clusterState("dependency-installed"), 0},
		{clusterState("unreachable"), 1},
		{append(clusterState("unreachable"), "-o", "json"), 1},
		{[]string{"alpha", "query", "cluster", "--state", filepath.Join(tmp, "no-such-state.yaml")}, 2},
		{[]string{"alpha", "query", "no-such-question"}, 2},
		// diff
		{[]string{"alpha", "diff", updates, newer}, 0},
		{[]string{"alpha", "diff", updates, updates, "--check"}, 0},
		{[]string{"alpha", "diff", updates, newer, "--check"}, 1},
		{[]string{"alpha", "diff", updates, newer, "--check", "-o", "json"}, 1},
		{[]string{"alpha", "diff", updates, missing}, 2},
		{[]string{"alpha", "diff", updates}, 2},
		{[]string{"alpha", "diff", updates, newer, "-o", "xml"}, 2},
		// filter
		{[]string{"alpha", "filter", updates, "--config", filterConf}, 0},
		{[]string{"alpha", "filter", updates, "--config", badFilterConf}, 2},
		{[]string{"alpha", "filter", updates, "--config", filepath.Join(tmp, "no-such.yaml")}, 2},
		{[]string{"alpha", "filter", missing, "--config", filterConf}, 2},
		{[]string{"alpha", "filter", updates}, 2},
		{[]string{"alpha", "filter", updates, "--config", filterConf, "-o", "xml"}, 2},
		// Upstream's commands: 1 for every error, as upstream.
		{[]string{"validate", updates}, 0},
		{[]string{"validate", filepath.Join(goldenRoot, "catalogs", "fixture-opm-bundle-without-channel")}, 1},
		{[]string{"validate", missing}, 1},
		{[]string{"render", updates}, 0},
		{[]string{"render", missing}, 1},
		{[]string{"alpha", "list", "packages", updates}, 0},
		{[]string{"alpha", "list", "channels", updates, "etcdd"}, 1},
		{[]string{"alpha", "list", "bundles", updates, "etcdd"}, 1},
		{[]string{"alpha", "render-graph", updates, "-p", "etcd"}, 0},
		{[]string{"alpha", "render-graph", updates, "-p", "etcdd"}, 1},
		{[]string{"serve", updates, "--cache-only"}, 1},
		{[]string{"no-such-command"}, 1},
		{[]string{"alpha", "no-such-command"}, 1},
	} {
		code, out, errOut := run(t, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.code, out, errOut)
		}
		// A wrong question writes no answer.
		if code == 2 && out != "" {
			t.Errorf("%v: exit 2 with an answer on standard output:\n%s", tc.args, out)
		}
	}
}
