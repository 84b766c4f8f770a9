package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/internal/imagetest"
)

func TestDiff(t *testing.T) {
	old, new := filepath.Join(goldenRoot, "updates"), filepath.Join(goldenRoot, "diff", "new")

	code, out, errOut := run(t, "alpha", "diff", old, new, "--check")
	want := `package etcd
  channel alpha removed (its head was etcdoperator.v0.9.5)
  channel stable: head etcdoperator.v0.9.4 → etcdoperator.v0.9.6
  channel stable: etcdoperator.v0.9.0 image quay.io/example/etcd-bundle:v0.9.0 → quay.io/example/etcd-bundle@sha256:0000000000000000000000000000000000000000000000000000000000000000
  channel stable: etcdoperator.v0.9.1 removed (0.9.1)
  channel stable: etcdoperator.v0.9.6 added (0.9.6)
violation [channel-removed] etcd/alpha: channel "alpha" of package "etcd" is removed: clusters subscribed to it get no more updates
check failed: 1 violation, 0 warnings
`
	if code != 1 || out != want || errOut != "" {
		t.Errorf("--check: exit %d, stderr %q\n%s", code, errOut, out)
	}

	// Without --check the exit code is 0; JSON carries the same changes.
	code, out, _ = run(t, "alpha", "diff", old, new, "-o", "json")
	var rep diffReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Changes) != 5 || rep.Violations != nil {
		t.Errorf("json: exit %d, %v, %+v", code, err, rep)
	}

	// The reverse direction: alpha is added, the head goes back, and
	// clusters on 0.9.6 are stranded.
	code, out, _ = run(t, "alpha", "diff", new, old, "--check", "-o", "markdown")
	for _, s := range []string{"| ❌ | head-downgrade | etcd/stable/etcdoperator.v0.9.4 |", "| ❌ | stranded | etcd/stable/etcdoperator.v0.9.6 |", "channel alpha added"} {
		if !strings.Contains(out, s) {
			t.Errorf("reverse markdown lacks %q:\n%s", s, out)
		}
	}
	if code != 1 {
		t.Errorf("reverse: exit %d", code)
	}

	// A catalog against itself.
	if code, out, _ := run(t, "alpha", "diff", old, old, "--check"); code != 0 || out != "no changes\ncheck passed: 0 violations, 0 warnings\n" {
		t.Errorf("same: exit %d\n%s", code, out)
	}

	// Bad input: exit 2, a wrong command line too (1 is a violation).
	for _, args := range [][]string{
		{old},
		{old, new, "--chek"},
		{old, filepath.Join(goldenRoot, "nosuch")},
		{old, filepath.Join(goldenRoot, "catalogs", "fixture-opm-bundle-without-channel")},
		{old, new, "-o", "xml"},
	} {
		if code, _, errOut := run(t, append([]string{"alpha", "diff"}, args...)...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestDiffRealHistory runs the check over four published versions of a
// real catalog (testdata/diff/history/README.md): the release of
// kubecost-operator.v2.8.0 passes, its withdrawal fails (the head goes
// back and clusters on v2.8.0 are stranded), its return passes.
func TestDiffRealHistory(t *testing.T) {
	dir := filepath.Join(goldenRoot, "diff", "history", "kubecost-operator")
	versions := []string{"1-14b353aa2", "2-5b36987dd", "3-4f52f63f1", "4-09c2613c2"}
	wantCode := []int{0, 1, 0}
	wantRules := []string{"", "head-downgrade:kubecost-operator.v2.7.2 stranded:kubecost-operator.v2.8.0", ""}
	for i := range wantCode {
		code, out, errOut := run(t, "alpha", "diff", filepath.Join(dir, versions[i]), filepath.Join(dir, versions[i+1]), "--check", "-o", "json")
		var rep diffReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s → %s: %v (%s)", versions[i], versions[i+1], err, errOut)
		}
		var rules []string
		for _, v := range rep.Violations {
			rules = append(rules, v.Rule+":"+v.Bundle)
		}
		if code != wantCode[i] || strings.Join(rules, " ") != wantRules[i] {
			t.Errorf("%s → %s: exit %d, violations %q; want %d, %q", versions[i], versions[i+1], code, rules, wantCode[i], wantRules[i])
		}
	}
}

// TestDiffAndFilterImages: the old catalog as an image in a registry, the
// new one a directory; and a filter of the image.
func TestDiffAndFilterImages(t *testing.T) {
	old, new := filepath.Join(goldenRoot, "updates"), filepath.Join(goldenRoot, "diff", "new")
	reg := imagetest.Registry(t)
	ref := reg + "/catalog:v1"
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"},
		imagetest.LayerFromDir(t, old, "configs")))
	_, want, _ := run(t, "alpha", "diff", old, new, "--check", "-o", "json")
	code, got, errOut := run(t, "--use-http", "alpha", "diff", ref, new, "--check", "-o", "json")
	got = strings.Replace(got, ref, old, 1)
	if code != 1 || got != want {
		t.Errorf("diff of an image: exit %d, %s\n%s\nwant\n%s", code, errOut, got, want)
	}

	conf := filepath.Join(t.TempDir(), "filter.yaml")
	if err := os.WriteFile(conf, []byte("full: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, _ = run(t, "alpha", "filter", old, "--config", conf)
	code, got, errOut = run(t, "--use-http", "alpha", "filter", ref, "--config", conf)
	if code != 0 || got != want || !strings.Contains(got, `"etcdoperator.v0.9.5"`) {
		t.Errorf("filter of an image: exit %d, %s\n%s\nwant\n%s", code, errOut, got, want)
	}
}

// TestDiffCheckReport: violations first, then warnings, then the count;
// bundles already stranded in OLD, in a package the change does not
// touch, fold into one line, and JSON keeps each.
func TestDiffCheckReport(t *testing.T) {
	pkgP := `---
schema: olm.package
name: p
defaultChannel: stable
---
schema: olm.channel
package: p
name: stable
entries:
  - name: a
  - name: a2
  - name: b
    skips: [a, a2]
  - name: c
    replaces: b
    skips: [b]
`
	for _, b := range []struct{ name, version string }{{"a", "1.0.0"}, {"a2", "1.0.1"}, {"b", "1.1.0"}, {"c", "1.2.0"}} {
		pkgP += fmt.Sprintf("---\nschema: olm.bundle\npackage: p\nname: %s\nimage: example.com/p:%s\nproperties:\n- type: olm.package\n  value: {packageName: p, version: %s}\n", b.name, b.version, b.version)
	}
	pkgQ := func(bundles ...string) string {
		s := "---\nschema: olm.package\nname: q\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: q\nname: stable\nentries:\n"
		prev := ""
		for _, b := range bundles {
			s += "  - name: " + b + "\n"
			if prev != "" {
				s += "    replaces: " + prev + "\n"
			}
			prev = b
		}
		for i, b := range bundles {
			s += fmt.Sprintf("---\nschema: olm.bundle\npackage: q\nname: %s\nimage: example.com/q:%d\nproperties:\n- type: olm.package\n  value: {packageName: q, version: 1.%d.0}\n", b, i, i)
		}
		return s
	}
	dir := t.TempDir()
	for name, files := range map[string]map[string]string{
		"old": {"p.yaml": pkgP, "q.yaml": pkgQ("q1", "q2")},
		"new": {"p.yaml": pkgP, "q.yaml": pkgQ("q1")},
	} {
		for f, content := range files {
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	old, new := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	code, out, errOut := run(t, "alpha", "diff", old, new, "--check")
	want := `package q
  channel stable: head q2 → q1
  channel stable: q2 removed (1.1.0)
violation [head-downgrade] q/stable/q1: channel head goes back from q2 (1.1.0) to q1 (1.0.0)
violation [stranded] q/stable/q2: a cluster running q2 cannot reach the head q1: nothing in channel "stable" replaces or skips q2 (version 1.1.0), and no skipRange covers it
warning [stranded] p: 2 bundles could not reach their channel head in the old catalog either, and the change does not touch the package (stable/a, stable/a2; -o json lists them)
check failed: 2 violations, 2 warnings
`
	if code != 1 || out != want {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	_, out, _ = run(t, "alpha", "diff", old, new, "--check", "-o", "json")
	var rep diffReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Violations) != 4 || !rep.Violations[0].Already || rep.Violations[0].Bundle != "a" {
		t.Errorf("json: %v\n%s", err, out)
	}
	_, out, _ = run(t, "alpha", "diff", old, new, "--check", "-o", "markdown")
	if !strings.Contains(out, "| ⚠️ | stranded | p | 2 bundles could not reach") || !strings.HasSuffix(out, "\n**check failed: 2 violations, 2 warnings**\n") {
		t.Errorf("markdown:\n%s", out)
	}
	// When the change touches the package, each warning is its own line.
	touched := filepath.Join(dir, "touched")
	if err := os.MkdirAll(touched, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(touched, "p.yaml"), []byte(strings.Replace(pkgP, "example.com/p:1.2.0", "example.com/p:v1.2.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, "alpha", "diff", filepath.Join(dir, "old"), touched, "--check")
	if strings.Count(out, "warning [stranded] p/stable/") != 2 || !strings.Contains(out, "check failed: 1 violation, 2 warnings") {
		t.Errorf("touched:\n%s", out)
	}
}

// TestDiffUninstallable: testdata/install's community catalog, where the
// etcd bundles no longer provide EtcdRestore, which etcd-backup needs: a
// new subscription to etcd-backup no longer resolves. The package broken
// changes too, but could not be installed before either: no violation.
func TestDiffUninstallable(t *testing.T) {
	old := filepath.Join(goldenRoot, "install", "community")
	data, err := os.ReadFile(filepath.Join(old, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(data), "- type: olm.gvk\n  value: {group: etcd.database.coreos.com, version: v1beta2, kind: EtcdRestore}\n", "")
	s = strings.Replace(s, "quay.io/example/broken-bundle:v1.1.0", "quay.io/example/broken-bundle:v1.1.0-1", 1)
	if s == string(data) {
		t.Fatal("the catalog did not change")
	}
	new := t.TempDir()
	if err := os.WriteFile(filepath.Join(new, "catalog.yaml"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "alpha", "diff", old, new, "--check")
	// The change to etcd, which only its bundles' properties show, is
	// listed above the violation it causes (issue 27: it was not, and
	// with only that change the diff said "no changes" above it).
	want := `package broken
  channel stable: broken.v1.1.0 image quay.io/example/broken-bundle:v1.1.0 → quay.io/example/broken-bundle:v1.1.0-1
package etcd
  bundle etcdoperator.v0.10.0: property olm.gvk removed: {"group":"etcd.database.coreos.com","kind":"EtcdRestore","version":"v1beta2"}
  bundle etcdoperator.v0.9.4: property olm.gvk removed: {"group":"etcd.database.coreos.com","kind":"EtcdRestore","version":"v1beta2"}
violation [uninstallable] etcd-backup/stable: a new Subscription to the channel resolves in the old catalog; in the new one it is unsatisfiable: etcd-backup.v1.0.0 requires GVK etcd.database.coreos.com/v1beta2/EtcdRestore; no bundle in the catalogs provides it; nor does one starting at etcd-backup.v1.0.0 (-o json gives its reason)
check failed: 2 violations, 0 warnings
`
	if code != 1 || out != want || errOut != "" {
		t.Errorf("exit %d, stderr %q\n%s\nwant\n%s", code, errOut, out, want)
	}
	_, out, _ = run(t, "alpha", "diff", old, new, "--check", "-o", "json")
	var rep diffReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Violations) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(rep.Changes) != 3 || rep.Changes[1] != (updates.Change{Package: "etcd", Bundle: "etcdoperator.v0.10.0", Kind: "property-removed", Property: "olm.gvk",
		Old: `{"group":"etcd.database.coreos.com","kind":"EtcdRestore","version":"v1beta2"}`}) {
		t.Errorf("json changes: %+v", rep.Changes)
	}
	for i, bundle := range []string{"", "etcd-backup.v1.0.0"} {
		if v := rep.Violations[i]; v.Rule != "uninstallable" || v.Package != "etcd-backup" || v.Channel != "stable" || v.Bundle != bundle || v.Warning {
			t.Errorf("json violation %d: %+v", i, v)
		}
	}
	_, out, _ = run(t, "alpha", "diff", old, new, "--check", "-o", "markdown")
	if !strings.Contains(out, "| ❌ | uninstallable | etcd-backup/stable | a new Subscription to the channel resolves") || !strings.HasSuffix(out, "\n**check failed: 2 violations, 0 warnings**\n") ||
		!strings.Contains(out, `| etcd | bundle etcdoperator.v0.9.4: property olm.gvk removed: {"group":"etcd.database.coreos.com","kind":"EtcdRestore","version":"v1beta2"} |`) || strings.Contains(out, "No changes.") {
		t.Errorf("markdown:\n%s", out)
	}
	// The change to etcd alone: its properties are the changes listed,
	// never "no changes" above the violation, in every format.
	onlyEtcd := t.TempDir()
	if err := os.WriteFile(filepath.Join(onlyEtcd, "catalog.yaml"), []byte(strings.ReplaceAll(string(data), "- type: olm.gvk\n  value: {group: etcd.database.coreos.com, version: v1beta2, kind: EtcdRestore}\n", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, "alpha", "diff", old, onlyEtcd, "--check")
	if code != 1 || !strings.HasPrefix(out, "package etcd\n  bundle etcdoperator.v0.10.0: property olm.gvk removed: ") || strings.Contains(out, "no changes") {
		t.Errorf("etcd only: exit %d\n%s", code, out)
	}
	if _, out, _ = run(t, "alpha", "diff", old, onlyEtcd, "--check", "-o", "markdown"); strings.Contains(out, "No changes.") || !strings.Contains(out, "| etcd | bundle etcdoperator.v0.10.0: property olm.gvk removed") {
		t.Errorf("etcd only, markdown:\n%s", out)
	}
	if _, out, _ = run(t, "alpha", "diff", old, onlyEtcd, "--check", "-o", "json"); strings.Contains(out, `"changes": []`) || !strings.Contains(out, `"kind": "property-removed"`) {
		t.Errorf("etcd only, json:\n%s", out)
	}

	// Without the change to etcd, broken alone: nothing becomes
	// uninstallable.
	onlyBroken := t.TempDir()
	if err := os.WriteFile(filepath.Join(onlyBroken, "catalog.yaml"), []byte(strings.Replace(string(data), "quay.io/example/broken-bundle:v1.1.0", "quay.io/example/broken-bundle:v1.1.0-1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, "alpha", "diff", old, onlyBroken, "--check"); code != 0 || !strings.HasSuffix(out, "\ncheck passed: 0 violations, 0 warnings\n") {
		t.Errorf("broken only: exit %d\n%s", code, out)
	}
}

// TestDiffFoldUninstallable: a channel's uninstallable subscriptions are
// one line of text, at the place of the first, naming a few of the
// others; each is counted. The others are "more" of the channel's
// bundles only when the first starts at one (issue 27: "9 more of its
// bundles" for a channel of 9 bundles, below the channel's own line).
func TestDiffFoldUninstallable(t *testing.T) {
	rep := diffReport{Changes: []updates.Change{{Package: "p", Kind: "package-added"}}}
	u := func(ch, bundle string) updates.Violation {
		return updates.Violation{Package: "p", Channel: ch, Bundle: bundle, Rule: "uninstallable", Message: "m " + bundle}
	}
	rep.Violations = []updates.Violation{
		u("alpha", "p.v1"), u("alpha", "p.v2"), u("alpha", "p.v3"),
		u("stable", ""), u("stable", "p.v1"), u("stable", "p.v2"),
		{Package: "p", Channel: "stable", Bundle: "p.v2", Rule: "stranded", Message: "s"},
		u("stable", "p.v3"), u("stable", "p.v4"), u("stable", "p.v5"),
	}
	var b strings.Builder
	if err := rep.writeText(&b, true); err != nil {
		t.Fatal(err)
	}
	want := `package p
  package added (default channel )
violation [uninstallable] p/alpha/p.v1: m p.v1; nor do those starting at 2 more of its bundles (p.v2, p.v3; -o json gives each one's reason)
violation [uninstallable] p/stable: m ; nor do those starting at 5 of its bundles (p.v1, p.v2, p.v3, and 2 more; -o json gives each one's reason)
violation [stranded] p/stable/p.v2: s
check failed: 10 violations, 0 warnings
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
