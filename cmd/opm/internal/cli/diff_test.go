package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
check failed: 1 violation(s)
  violation [channel-removed] etcd/alpha: channel "alpha" of package "etcd" is removed: clusters subscribed to it get no more updates
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
	if code, out, _ := run(t, "alpha", "diff", old, old, "--check"); code != 0 || out != "no changes\ncheck passed\n" {
		t.Errorf("same: exit %d\n%s", code, out)
	}

	// Bad input: exit 2.
	for _, args := range [][]string{
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
