package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/shapecat"
)

// TestQueryUpdates asks testdata/updates (a hand-made catalog whose README
// explains each case) where installed bundles go.
func TestQueryUpdates(t *testing.T) {
	dir := filepath.Join(goldenRoot, "updates")
	for _, tc := range []struct {
		args  []string
		path  string // "from>to:edges ..."
		reach bool
	}{
		{[]string{"--from", "etcdoperator.v0.9.0"}, "etcdoperator.v0.9.0>etcdoperator.v0.9.2:replaces etcdoperator.v0.9.2>etcdoperator.v0.9.4:replaces", true},
		{[]string{"--from", "etcdoperator.v0.9.1"}, "etcdoperator.v0.9.1>etcdoperator.v0.9.2:skips etcdoperator.v0.9.2>etcdoperator.v0.9.4:replaces", true},
		{[]string{"--from", "0.9.1"}, "etcdoperator.v0.9.1>etcdoperator.v0.9.2:skips etcdoperator.v0.9.2>etcdoperator.v0.9.4:replaces", true},
		{[]string{"-c", "alpha", "--from", "etcdoperator.v0.9.2"}, "etcdoperator.v0.9.2>etcdoperator.v0.9.5:skipRange", true},
		{[]string{"-c", "alpha", "--from", "etcdoperator.v0.9.3"}, "etcdoperator.v0.9.3>etcdoperator.v0.9.5:skipRange", true},
		{[]string{"--from", "etcdoperator.v0.9.4"}, "", true},
		{[]string{"--from", "etcdoperator.v0.8.0"}, "", false},
	} {
		code, out, errOut := run(t, append([]string{"alpha", "query", "updates", dir, "-p", "etcd", "-o", "json"}, tc.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errOut)
			continue
		}
		var a action.UpdatesAnswer
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, out)
		}
		var steps []string
		for _, st := range a.Path {
			steps = append(steps, st.From+">"+st.To.Name+":"+strings.Join(st.Edges, "+"))
		}
		if got := strings.Join(steps, " "); got != tc.path || a.ReachesHead != tc.reach {
			t.Errorf("%v: path %q reaches head %v, want %q %v", tc.args, got, a.ReachesHead, tc.path, tc.reach)
		}
	}
}

func TestQueryUpdatesTextAndErrors(t *testing.T) {
	dir := filepath.Join(goldenRoot, "updates")
	code, out, errOut := run(t, "alpha", "query", "updates", dir, "-p", "etcd", "--all")
	want := `package etcd, channel stable; head etcdoperator.v0.9.4 (0.9.4)
BUNDLE               VERSION  NEXT                 BY        STEPS  REACHES HEAD
etcdoperator.v0.9.4  0.9.4    -                    -         0      head
etcdoperator.v0.9.2  0.9.2    etcdoperator.v0.9.4  replaces  1      yes
etcdoperator.v0.9.0  0.9.0    etcdoperator.v0.9.2  replaces  2      yes
etcdoperator.v0.9.1  0.9.1    etcdoperator.v0.9.2  skips     2      yes
`
	if code != 0 || out != want {
		t.Errorf("--all: exit %d, stderr %s\n%s", code, errOut, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "nope", "--from", "x"}, "Error: package \"nope\" not found in the catalog\n"},
		{[]string{"-p", "ectd", "--from", "x"}, "Error: package \"ectd\" not found in the catalog; did you mean etcd?\n"},
		{[]string{"-p", "etcd", "-c", "beta", "--from", "x"}, "Error: channel \"beta\" not found in package \"etcd\" (its channels: alpha, stable)\n"},
		{[]string{"-p", "etcd", "-c", "stabel", "--from", "x"}, "Error: channel \"stabel\" not found in package \"etcd\" (its channels: alpha, stable); did you mean stable?\n"},
		{[]string{"-p", "etcd"}, "Error: give exactly one of --from and --all\n"},
		{[]string{"--from", "x"}, "Error: --package is required\n"},
		{[]string{"-p", "etcd", "--all", "-o", "xml"}, "Error: invalid --output value \"xml\", expected (text|json)\n"},
	} {
		// A wrong question, flag or input: exit 2 (issue 27: it was 1,
		// the code of an answer elsewhere).
		code, _, errOut := run(t, append([]string{"alpha", "query", "updates", dir}, tc.args...)...)
		if code != 2 || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
	// A bundle the catalog does not hold, near one it holds; a version
	// newer than the head.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "etcdoprator.v0.9.2"}, "installed: etcdoprator.v0.9.2 (version 0.9.2) (not in the catalog; did you mean etcdoperator.v0.9.2?)\n"},
		// An older version the catalog no longer has is no typo: no "did you mean".
		{[]string{"--from", "etcdoperator.v0.8.0"}, "installed: etcdoperator.v0.8.0 (version 0.8.0) (not in the catalog)\n"},
		{[]string{"--from", "1.0.0"}, `problem: version 1.0.0 is newer than the channel head etcdoperator.v0.9.4 (0.9.4): nothing in channel "stable" updates it` + "\n"},
	} {
		code, out, errOut := run(t, append([]string{"alpha", "query", "updates", dir, "-p", "etcd"}, tc.args...)...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, stderr %q\n%s", tc.args, code, errOut, out)
		}
	}
	// An invalid catalog is refused with validate's report.
	code, _, errOut = run(t, "alpha", "query", "updates", filepath.Join(goldenRoot, "catalogs", "fixture-opm-bundle-without-channel"), "-p", "x", "--all")
	if code != 2 || !strings.Contains(errOut, "invalid") {
		t.Errorf("invalid catalog: exit %d, %s", code, errOut)
	}
}

// TestQueryUpdatesImage asks the same question of the catalog as an image.
func TestQueryUpdatesImage(t *testing.T) {
	dir := filepath.Join(goldenRoot, "updates")
	reg := imagetest.Registry(t)
	ref := reg + "/catalog:v1"
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"},
		imagetest.LayerFromDir(t, dir, "configs")))
	_, want, _ := run(t, "alpha", "query", "updates", dir, "-p", "etcd", "--all", "-o", "json")
	code, got, errOut := run(t, "--use-http", "alpha", "query", "updates", ref, "-p", "etcd", "--all", "-o", "json")
	if code != 0 || got != want {
		t.Errorf("image: exit %d, %s\n%s\nwant\n%s", code, errOut, got, want)
	}
}

// TestQueryAndDiffShapes runs query updates --all (text and JSON) and
// diff --check of a catalog with itself on every synthetic shape.
func TestQueryAndDiffShapes(t *testing.T) {
	const n = 100
	for _, s := range shapecat.Shapes {
		t.Run(s.Name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, shapecat.Package), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, shapecat.File), s.Bytes(n), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := run(t, "alpha", "query", "updates", dir, "-p", shapecat.Package, "--all")
			rows := strings.Count(out, "\n") - 2 // the header lines
			if code != 0 || strings.Contains(out, " NO\n") || (rows != n && rows != 1) {
				t.Errorf("--all: exit %d, %d rows, stderr %s\n%.500s", code, rows, errOut, out)
			}
			code, out, errOut = run(t, "alpha", "query", "updates", dir, "-p", shapecat.Package, "--all", "-o", "json")
			var as []action.UpdatesSummary
			if err := json.Unmarshal([]byte(out), &as); code != 0 || err != nil || len(as) != rows {
				t.Errorf("--all -o json: exit %d, %v, %d answers, stderr %s", code, err, len(as), errOut)
			}
			code, out, errOut = run(t, "alpha", "diff", dir, dir, "--check")
			if code != 0 || out != "no changes\ncheck passed: 0 violations, 0 warnings\n" {
				t.Errorf("diff --check: exit %d, stderr %s\n%s", code, errOut, out)
			}
		})
	}
}

// TestNotACatalog: a bundle directory or a catalog's file, given where a
// catalog is expected, is said to be so, with what to give instead, by
// query updates, query install and diff.
func TestNotACatalog(t *testing.T) {
	catalog := filepath.Join(goldenRoot, "updates")
	bundleDir := filepath.Join(goldenRoot, "bundles", "aws-efs-operator-0.0.1")
	file := filepath.Join(catalog, "etcd", "catalog.yaml")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"query", "updates", bundleDir, "-p", "x", "--all"}, 2,
			"Error: " + bundleDir + ": a bundle, not a catalog: give a catalog directory or catalog image (opm render " + bundleDir + " makes a catalog of the bundle)\n"},
		{[]string{"query", "updates", file, "-p", "x", "--all"}, 2,
			"Error: " + file + ": a file, not a catalog directory: give the directory (" + filepath.Dir(file) + ", the one that holds it?) or a catalog image\n"},
		{[]string{"query", "install", bundleDir, "-p", "x"}, 2,
			"Error: catalog aws-efs-operator-0.0.1 (" + bundleDir + "): a bundle, not a catalog: "},
		{[]string{"query", "install", bundleDir, "-p", "x", "--olm", "v1"}, 2,
			"Error: catalog aws-efs-operator-0.0.1 (" + bundleDir + "): a bundle, not a catalog: "},
		{[]string{"diff", catalog, bundleDir, "--check"}, 2,
			"Error: " + bundleDir + ": a bundle, not a catalog: "},
		{[]string{"diff", file, catalog}, 2,
			"Error: " + file + ": a file, not a catalog directory: "},
	} {
		code, _, errOut := run(t, append([]string{"alpha"}, tc.args...)...)
		if code != tc.code || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d, %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}
