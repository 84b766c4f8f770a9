package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// severalSubscriptions is testdata/cluster/states/several-subscriptions.yaml.
func severalSubscriptions(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenRoot, "cluster", "states", "several-subscriptions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edit replaces old by new in s, which must hold old.
func edit(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("the state lacks %q", old)
	}
	return strings.Replace(s, old, new, 1)
}

// asList turns a multi-document state into one List, as `kubectl get -o
// yaml` writes it.
func asList(docs string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nitems:\n")
	for _, d := range strings.Split(docs, "---\n") {
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		for i, l := range lines {
			if i == 0 {
				b.WriteString("- " + l + "\n")
			} else {
				b.WriteString("  " + l + "\n")
			}
		}
	}
	b.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return b.String()
}

// lineOf is the line of s that holds sub, counted from 1.
func lineOf(t *testing.T, s, sub string) int {
	t.Helper()
	i := strings.Index(s, sub)
	if i < 0 {
		t.Fatalf("lacks %q", sub)
	}
	return strings.Count(s[:i], "\n") + 1
}

func writeState(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestQueryClusterBadInput: every kind of bad input of issue 25 §6 is a
// clear answer or an error naming the file (and line) and the object,
// with the exit code of each.
func TestQueryClusterBadInput(t *testing.T) {
	t.Parallel()
	state := severalSubscriptions(t)
	list := asList(state)
	malformed := edit(t, state, "  channel: stable\n", "  channel: [stable\n")
	malformedList := asList(malformed)
	noSource := asList(edit(t, state, "  name: etcd-backup\n  source: community\n", "  name: etcd-backup\n"))
	for _, tc := range []struct {
		name  string
		files map[string]string
		code  int
		want  []string // in the answer (exit 0, 1) or the error (exit 2)
	}{
		{"malformed yaml", map[string]string{"state.yaml": malformed}, 2,
			[]string{fmt.Sprintf("state.yaml:%d: did not find expected ',' or ']'", lineOf(t, malformed, "channel: [stable"))}},
		{"malformed yaml in a list", map[string]string{"list.yaml": malformedList}, 2,
			[]string{fmt.Sprintf("list.yaml:%d: did not find expected ',' or ']'", lineOf(t, malformedList, "channel: [stable"))}},
		{"not yaml at all", map[string]string{"state.yaml": "\x00\x01binary"}, 2, []string{"state.yaml:1: "}},
		{"json cut short", map[string]string{"state.json": `{"apiVersion": "v1", "kind": "List", "items": [`}, 2, []string{"state.json:1: unexpected EOF"}},
		{"unknown kinds", map[string]string{"state.yaml": state + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: team-a\n" +
			"---\napiVersion: operators.coreos.com/v1\nkind: Operator\nmetadata:\n  name: etcd.team-a\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"}, 0,
			[]string{"skipped: 1 ConfigMap, 1 Operator, 1 Widget", "upgrades etcdoperator.v0.9.2 -> etcdoperator.v0.9.4"}},
		{"a list", map[string]string{"list.yaml": list}, 0, []string{"upgrades etcdoperator.v0.9.2 -> etcdoperator.v0.9.4"}},
		{"no kind", map[string]string{"state.yaml": state + "---\napiVersion: v1\nmetadata:\n  name: x\n"}, 2,
			[]string{fmt.Sprintf("state.yaml:%d: not a Kubernetes object: it has no kind", strings.Count(state, "\n")+2)}},
		{"subscription without source", map[string]string{"list.yaml": noSource}, 2,
			[]string{fmt.Sprintf("list.yaml:%d: items[3]: Subscription team-a/etcd-backup: spec.source (the CatalogSource) is missing", lineOf(t, noSource, "- apiVersion: operators.coreos.com/v1alpha1\n  kind: Subscription\n  metadata:\n    name: etcd-backup"))}},
		{"subscription without spec", map[string]string{"state.yaml": edit(t, state, "spec:\n  name: etcd-backup\n  source: community\n  sourceNamespace: olm\n", "")}, 2,
			[]string{"state.yaml:", "Subscription team-a/etcd-backup: it has no spec"}},
		{"csv without namespace", map[string]string{"state.yaml": edit(t, state, "  name: etcdoperator.v0.9.2\n  namespace: team-a\n", "  name: etcdoperator.v0.9.2\n")}, 2,
			[]string{"state.yaml:", "ClusterServiceVersion etcdoperator.v0.9.2 without metadata.namespace (a namespaced kind)"}},
		{"catalogsource without sourceType", map[string]string{"state.yaml": edit(t, state, "  name: community\n  namespace: olm\nspec:\n  sourceType: grpc\n", "  name: community\n  namespace: olm\nspec:\n")}, 2,
			[]string{"state.yaml:", "CatalogSource olm/community: spec.sourceType is missing"}},
		{"operatorgroup without name", map[string]string{"state.yaml": edit(t, state, "  name: og\n", "")}, 2,
			[]string{"state.yaml:", "OperatorGroup without metadata.name"}},
		{"a field of the wrong type", map[string]string{"state.yaml": edit(t, state, "  installModes:\n  - type: OwnNamespace\n", "  installModes:\n  - type: [OwnNamespace]\n")}, 2,
			[]string{"state.yaml:", "ClusterServiceVersion team-a/etcdoperator.v0.9.2: json: cannot unmarshal array"}},
		{"subscription to a catalogsource not in the state", map[string]string{"state.yaml": edit(t, state, "  name: etcd-backup\n  source: community\n", "  name: etcd-backup\n  source: nosuch\n")}, 1,
			[]string{"subscription etcd-backup names CatalogSource olm/nosuch, which the namespace does not see (its catalogs: olm/certified, olm/community, olm/marketplace)",
				"no operators found from catalog nosuch in namespace olm referenced by subscription etcd-backup",
				"Subscription etcd-backup (package etcd-backup, from olm/nosuch): blocked"}},
		{"operatorgroup whose selector does not parse", map[string]string{"state.yaml": edit(t, state, "  name: og\n  namespace: team-a\nspec: {}\n",
			"  name: og\n  namespace: team-a\nspec:\n  selector:\n    matchExpressions: [{key: a, operator: Bogus}]\n")}, 1,
			[]string{"CSV etcdoperator.v0.9.2 does not fit OperatorGroup og; OLM leaves its status as it is (phase Succeeded)\n", "the CSV keeps its status", `"Bogus" is not a valid label selector operator`}},
		{"the same object twice", map[string]string{"a.yaml": state, "b.yaml": list}, 0,
			[]string{"state: 2 files: 2 Subscriptions, 1 ClusterServiceVersions", "upgrades etcdoperator.v0.9.2 -> etcdoperator.v0.9.4"}},
		{"one object twice, different", map[string]string{"a.yaml": state, "b.yaml": edit(t, list, "    channel: stable\n", "    channel: alpha\n")}, 2,
			[]string{fmt.Sprintf("b.yaml:%d: items[1]: Subscription team-a/etcd is also in ", lineOf(t, list, "- apiVersion: operators.coreos.com/v1alpha1\n  kind: Subscription\n  metadata:\n    name: etcd\n")),
				fmt.Sprintf("a.yaml:%d, with other content: give one of them", lineOf(t, state, "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: etcd\n"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeState(t, tc.files)
			code, out, errOut := run(t, append([]string{"alpha", "query", "cluster", "--state", dir}, clusterCatalogs()...)...)
			got := out
			if tc.code == 2 {
				got = errOut
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

// TestQueryClusterCSVPhases: CSVs in Failed, Replacing and Installing
// phases are said, and counted as installed as OLM's resolution counts
// them (testdata/cluster/states/csv-phases.yaml; TestQueryClusterAsOLM
// checks the namespaces' answers against OLM's own): in the middle of an
// upgrade the namespace cannot resolve, the Replacing CSV being installed
// with no Subscription naming it.
func TestQueryClusterCSVPhases(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, append([]string{"alpha", "query", "cluster", "--state", filepath.Join(goldenRoot, "cluster", "states", "csv-phases.yaml")}, clusterCatalogs()...)...)
	for _, want := range []string{
		"== namespace team-a\nOLM's next sync cannot resolve the namespace",
		"etcdoperator.v0.9.2 is installed and no Subscription names it: OLM keeps it as it is",
		"CSV etcdoperator.v0.9.2 is Replacing (BeingReplaced: being replaced by csv: etcdoperator.v0.9.4): OLM's resolution counts it as installed all the same",
		"CSV etcdoperator.v0.9.4 is Installing (InstallWaiting: installing: waiting for deployment etcd-operator to become ready): OLM's resolution counts it as installed all the same",
		"== namespace team-b\nOLM's next sync resolves the namespace",
		"Subscription etcd (package etcd, channel stable, from olm/community): upgrades etcdoperator.v0.9.2 -> etcdoperator.v0.9.4",
		"CSV etcdoperator.v0.9.2 is Failed (ComponentUnhealthy: installing: deployment etcd-operator not ready): OLM's resolution counts it as installed all the same",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s%s", want, out, errOut)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// TestQueryClusterTruncatedState: the state cut short at every line, as a
// file of documents and as a List: an answer or an error in words, with
// exit 0, 1 or 2, never a panic.
func TestQueryClusterTruncatedState(t *testing.T) {
	t.Parallel()
	state := severalSubscriptions(t)
	errLine := regexp.MustCompile(`^Error: (state: |--catalog |catalog of )`)
	for name, body := range map[string]string{"state.yaml": state, "list.yaml": asList(state)} {
		lines := strings.SplitAfter(body, "\n")
		for n := range lines {
			cut := strings.Join(lines[:n], "")
			if n > 0 {
				cut += strings.TrimSuffix(lines[n], "\n")[:len(lines[n])/2] // half a line too
			}
			dir := writeState(t, map[string]string{name: cut})
			code, out, errOut := run(t, append([]string{"alpha", "query", "cluster", "--state", dir}, clusterCatalogs()...)...)
			switch {
			case code < 0 || code > 2:
				t.Errorf("%s cut at line %d: exit %d\n%s%s", name, n+1, code, out, errOut)
			case code == 2 && !errLine.MatchString(errOut):
				t.Errorf("%s cut at line %d: error not in words:\n%s", name, n+1, errOut)
			}
		}
	}
}
