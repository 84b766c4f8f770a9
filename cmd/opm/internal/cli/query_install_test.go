package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/internal/imagetest"
)

// The hand-made catalogs of testdata/install (its README explains each
// package).
func installCatalogs() []string {
	dir := filepath.Join(goldenRoot, "install")
	return []string{filepath.Join(dir, "community"),
		"--catalog", "certified=" + filepath.Join(dir, "certified") + ",priority=10",
		"--catalog", "marketplace=" + filepath.Join(dir, "marketplace")}
}

func installsOf(a *install.Answer) []string {
	var out []string
	for _, in := range a.Installs {
		out = append(out, in.Catalog+"/"+in.Channel+"/"+in.Bundle)
	}
	return out
}

// TestQueryInstall asks what each package of testdata/install installs.
func TestQueryInstall(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		status   install.Status
		installs []string // the subscription's bundle first, then in tree order
		reason   string
	}{
		{[]string{"-p", "etcd"}, install.Installable, []string{"community/stable/etcdoperator.v0.9.4"}, ""},
		{[]string{"-p", "etcd", "-c", "alpha"}, install.Installable, []string{"community/alpha/etcdoperator.v0.10.0"}, ""},
		{[]string{"-p", "etcd", "--version", "0.9.2"}, install.Installable, []string{"community/stable/etcdoperator.v0.9.2"}, ""},
		{[]string{"-p", "etcd", "-c", "alpha", "--bundle", "etcdoperator.v0.9.4"}, install.Installable, []string{"community/alpha/etcdoperator.v0.9.4"}, ""},
		{[]string{"-p", "etcd-backup"}, install.Installable, []string{"community/stable/etcd-backup.v1.0.0", "community/stable/etcdoperator.v0.9.4"}, ""},
		{[]string{"-p", "etcd-v3"}, install.Installable, []string{"community/stable/etcd-v3.v1.0.0", "community/alpha/etcdoperator.v0.10.0"}, ""},
		{[]string{"-p", "pinned"}, install.Installable, []string{"community/stable/pinned.v1.0.0", "community/stable/etcdoperator.v0.9.2"}, ""},
		{[]string{"-p", "compound"}, install.Installable, []string{"community/stable/compound.v1.0.0", "community/stable/etcdoperator.v0.9.2"}, ""},
		{[]string{"-p", "logging"}, install.Installable, []string{"community/stable/logging.v5.0.0", "certified/stable/elasticsearch.v7.10.0"}, ""},
		{[]string{"-p", "broken"}, install.Unsatisfiable, nil, "broken.v1.1.0 requires GVK example.com/v1/Missing; no bundle in the catalogs provides it"},
		{[]string{"-p", "two-etcds"}, install.Unsatisfiable, nil, "at most one bundle may provide GVK etcd.database.coreos.com/v1beta2/EtcdCluster"},
	} {
		args := append(append([]string{"alpha", "query", "install"}, installCatalogs()...), append(tc.args, "-o", "json")...)
		code, out, errOut := run(t, args...)
		var a install.Answer
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("%v: exit %d, %v\n%s%s", tc.args, code, err, out, errOut)
		}
		wantCode := 0
		if tc.status != install.Installable {
			wantCode = 1
		}
		if code != wantCode || a.Status != tc.status || !slices.Equal(installsOf(&a), tc.installs) {
			t.Errorf("%v: exit %d, %s, installs %v; want exit %d, %s, %v\n%s", tc.args, code, a.Status, installsOf(&a), wantCode, tc.status, tc.installs, errOut)
		}
		if tc.reason != "" && !slices.ContainsFunc(a.Reasons, func(r string) bool { return strings.Contains(r, tc.reason) }) {
			t.Errorf("%v: reasons %q lack %q", tc.args, a.Reasons, tc.reason)
		}
	}
}

func TestQueryInstallText(t *testing.T) {
	args := append(append([]string{"alpha", "query", "install"}, installCatalogs()...), "-p", "etcd-backup")
	code, out, errOut := run(t, args...)
	want := `A subscription to package etcd-backup, from catalog community installs 2 bundles:

etcd-backup.v1.0.0 (etcd-backup 1.0.0, channel stable, catalog community)
└── olm.gvk.required: GVK etcd.database.coreos.com/v1beta2/EtcdRestore
    └── etcdoperator.v0.9.4 (etcd 0.9.4, channel stable, catalog community)
`
	if code != 0 || out != want {
		t.Errorf("exit %d, stderr %s\n%s\nwant\n%s", code, errOut, out, want)
	}
	args = append(append([]string{"alpha", "query", "install"}, installCatalogs()...), "-p", "broken")
	code, out, _ = run(t, args...)
	want = `A subscription to package broken, from catalog community cannot be installed:
  - broken.v1.1.0 requires GVK example.com/v1/Missing; no bundle in the catalogs provides it
  - broken.v1.0.0 requires GVK example.com/v1/Missing; no bundle in the catalogs provides it
  - the subscription can install only broken.v1.1.0 and broken.v1.0.0 (channel stable of catalog community)

OLM's constraints that cannot hold together:
  - bundle broken.v1.0.0 requires an operator providing an API with group: example.com, version: v1, kind: Missing
  - bundle broken.v1.1.0 requires an operator providing an API with group: example.com, version: v1, kind: Missing
  - subscription broken exists
  - subscription broken requires at least one of community/stable/broken.v1.1.0 or community/stable/broken.v1.0.0
`
	if code != 1 || out != want {
		t.Errorf("broken: exit %d\n%s\nwant\n%s", code, out, want)
	}
}

// TestQueryInstallAll: --all answers every channel of the first catalog,
// --every-bundle every bundle too, and exits 0 whatever the answers.
func TestQueryInstallAll(t *testing.T) {
	args := append(append([]string{"alpha", "query", "install"}, installCatalogs()...), "--all")
	code, out, errOut := run(t, args...)
	if code != 0 || !strings.HasPrefix(out, "PACKAGE ") || !strings.Contains(out, "\n10 answers: 8 installable, 2 unsatisfiable, 0 fail to resolve\n") {
		t.Errorf("--all: exit %d, %s\n%s", code, errOut, out)
	}
	code, out, errOut = run(t, append(args, "--every-bundle", "-o", "json")...)
	var rep install.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("--every-bundle: exit %d, %v, %s", code, err, errOut)
	}
	c := rep.Counts()
	// 10 channels and their 15 entries: broken's two bundles, two-etcds,
	// and logging's deprecated head are not installable.
	if len(rep.Answers) != 25 || c[install.Installable] != 19 || c[install.Unsatisfiable] != 6 {
		t.Errorf("--every-bundle: %d answers, %v", len(rep.Answers), c)
	}
	wantCatalogs := []install.CatalogInfo{{Name: "certified", Priority: 10}, {Name: "community"}, {Name: "marketplace"}}
	if !slices.Equal(rep.Catalogs, wantCatalogs) || rep.Catalog != "community" {
		t.Errorf("catalogs %v (%s), want %v", rep.Catalogs, rep.Catalog, wantCatalogs)
	}
	// --source asks about another catalog.
	code, out, _ = run(t, append(args, "--source", "certified")...)
	if code != 0 || !strings.Contains(out, "\n2 answers: 2 installable,") {
		t.Errorf("--source certified: exit %d\n%s", code, out)
	}
}

// TestQueryInstallAllOne: the summary of a catalog of one channel says
// "1 answer", "1 channel", for each OLM.
func TestQueryInstallAllOne(t *testing.T) {
	cat := filepath.Join(goldenRoot, "catalogs", "fixture-olm-deprecations")
	for olm, want := range map[string]string{
		"v0":   "\n1 answer: 1 installable, 0 unsatisfiable, 0 fail to resolve\n",
		"v1":   "\n1 channel: 0 installable, 0 not installable, 1 unknown (no bundle objects), 0 do not resolve\n",
		"both": "\n1 channel: OLM v0 and v1 differ on 0\n",
	} {
		if code, out, errOut := run(t, "alpha", "query", "install", cat, "--all", "--olm", olm); code != 0 || !strings.HasSuffix(out, want) {
			t.Errorf("--olm %s: exit %d, %s\n%s", olm, code, errOut, out)
		}
	}
}

// TestQueryInstallDependenciesYAML: a bundle directory's
// metadata/dependencies.yaml, rendered, is what the resolver reads.
func TestQueryInstallDependenciesYAML(t *testing.T) {
	cat := t.TempDir()
	code, out, errOut := run(t, "render", filepath.Join(goldenRoot, "install", "bundle"))
	if code != 0 {
		t.Fatalf("render: exit %d, %s", code, errOut)
	}
	blobs := out + `{"schema":"olm.package","name":"widget-operator","defaultChannel":"stable"}
{"schema":"olm.channel","package":"widget-operator","name":"stable","entries":[{"name":"widget-operator.v1.0.0"}]}
`
	if err := os.WriteFile(filepath.Join(cat, "catalog.json"), []byte(blobs), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "alpha", "query", "install", cat, filepath.Join(goldenRoot, "install", "community"), "-p", "widget-operator", "-o", "json")
	var a install.Answer
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != 0 {
		t.Fatalf("exit %d, %v, %s%s", code, err, errOut, out)
	}
	name := filepath.Base(cat)
	want := []string{name + "/stable/widget-operator.v1.0.0", "community/stable/etcdoperator.v0.9.2"}
	if !slices.Equal(installsOf(&a), want) {
		t.Errorf("installs %v, want %v", installsOf(&a), want)
	}
	var through []string
	for _, d := range a.Tree.Dependencies {
		through = append(through, d.Property.Type)
	}
	if want := []string{"olm.constraint", "olm.gvk.required", "olm.gvk.required", "olm.package.required"}; !slices.Equal(through, want) {
		t.Errorf("dependencies through %v, want %v", through, want)
	}
}

// TestQueryInstallImage asks the same questions of the catalogs as images.
func TestQueryInstallImage(t *testing.T) {
	dir := filepath.Join(goldenRoot, "install")
	reg := imagetest.Registry(t)
	for _, name := range []string{"community", "certified"} {
		imagetest.Push(t, reg+"/"+name+":v1", imagetest.Image(t, map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"},
			imagetest.LayerFromDir(t, filepath.Join(dir, name), "configs")))
	}
	_, want, _ := run(t, "alpha", "query", "install", filepath.Join(dir, "community"), "--catalog", "certified="+filepath.Join(dir, "certified"), "--all", "--every-bundle", "-o", "json")
	code, got, errOut := run(t, "--use-http", "alpha", "query", "install", reg+"/community:v1", "--catalog", "certified="+reg+"/certified:v1", "--all", "--every-bundle", "-o", "json")
	if code != 0 || got != want {
		t.Errorf("image: exit %d, %s\n%s\nwant\n%s", code, errOut, got, want)
	}
}

func TestQueryInstallErrors(t *testing.T) {
	community := filepath.Join(goldenRoot, "install", "community")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{community}, 2, "--package is required"},
		{[]string{community, "--all", "-p", "etcd"}, 2, "--all asks about every package"},
		{[]string{community, "-p", "etcd", "--every-bundle"}, 2, "--every-bundle needs --all"},
		{[]string{community, "-p", "etcd", "--version", "1", "--bundle", "x"}, 2, "give at most one of --version and --bundle"},
		{[]string{"-p", "etcd"}, 2, "give at least one catalog"},
		{[]string{community, "--catalog", "nope", "-p", "etcd"}, 2, `invalid catalog "nope": expected NAME=REF[,priority=N]`},
		{[]string{community, "--catalog", "x=" + community + ",priority=high", "-p", "etcd"}, 2, `priority "high" is not a whole number`},
		{[]string{community, "--catalog", "x=" + community + ",prio=1", "-p", "etcd"}, 2, `unknown option "prio=1" (the only option is priority=N)`},
		{[]string{community, "--catalog", "x=" + community + ",priority=99999999999999999999", "-p", "etcd"}, 2, `priority "99999999999999999999" is out of range (-9223372036854775808 to 9223372036854775807)`},
		{[]string{community, "--catalog", "x=" + community + ",priority=1,fast=1", "-p", "etcd"}, 2, `priority "1,fast=1" is not a whole number`},
		// A wrong command line exits 2 too, not 1, which means "not installable".
		{[]string{community, "-p", "etcd", "--chanel", "stable"}, 2, "unknown flag: --chanel"},
		{[]string{community, "-p", "etcd", "--olm", "v2"}, 2, `invalid --olm value "v2"`},
		{[]string{community, "-p", "etcd", "--source", "nope"}, 2, `--source "nope" names none of the catalogs`},
		{[]string{community, "-p", "etcd", "-o", "xml"}, 2, `invalid --output value "xml"`},
		{[]string{community, "-p", "etcd", "--version", "9.9.9"}, 2, "no bundle of version 9.9.9 in package etcd of catalog community"},
		{[]string{"--catalog", "c=" + community, "--catalog", "c=" + community, "-p", "etcd"}, 2, `two catalogs are named "c"`},
		{[]string{filepath.Join(goldenRoot, "catalogs", "fixture-opm-bundle-without-channel"), "-p", "prometheus"}, 2, "invalid"},
		{[]string{filepath.Join(t.TempDir(), "missing"), "-p", "x"}, 2, "no such file or directory"},
	} {
		code, _, errOut := run(t, append([]string{"alpha", "query", "install"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

// TestQueryInstallMissingWithVersion: a package, channel or starting
// bundle that is not in the catalog is a wrong question (issue 27: exit
// 2, as a wrong --version, never 1, "not installable", which a script
// takes for an answer), naming what is missing with its suggestion, with
// --version (or --bundle) as without: no version is looked for in what is
// not there; nothing on standard output, in JSON either.
func TestQueryInstallMissingWithVersion(t *testing.T) {
	community := filepath.Join(goldenRoot, "install", "community")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "etcx"}, `package "etcx" is not in catalog community; did you mean etcd?`},
		{[]string{"-p", "etcx", "--version", "0.9.2"}, `package "etcx" is not in catalog community; did you mean etcd?`},
		{[]string{"-p", "etcx", "--bundle", "etcdoperator.v0.9.2"}, `package "etcx" is not in catalog community; did you mean etcd?`},
		{[]string{"-p", "etcd", "-c", "stabel"}, `package etcd of catalog community has no channel "stabel" (its channels: alpha, stable); did you mean stable?`},
		{[]string{"-p", "etcd", "-c", "stabel", "--version", "0.9.2"}, `package etcd of catalog community has no channel "stabel" (its channels: alpha, stable); did you mean stable?`},
		{[]string{"-p", "etcd", "-c", "beta"}, `package etcd of catalog community has no channel "beta" (its channels: alpha, stable)`},
		{[]string{"-p", "etcd", "--bundle", "etcdoperator.v0.9.9"}, `package etcd of catalog community has no bundle "etcdoperator.v0.9.9"`},
	} {
		for _, o := range []string{"text", "json"} {
			code, out, errOut := run(t, append([]string{"alpha", "query", "install", community, "-o", o}, tc.args...)...)
			if code != 2 || out != "" || !strings.HasPrefix(errOut, "Error: "+tc.want) {
				t.Errorf("%v -o %s: exit %d, stdout %q, stderr %q; want 2 and the error %q", tc.args, o, code, out, errOut, tc.want)
			}
		}
	}
}
