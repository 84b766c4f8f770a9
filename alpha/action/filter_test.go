package action

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/internal/testutil"
)

// filterEntries runs a filter on testdata/updates and describes the
// channels it keeps: "channel: name[<replaces][~skips,...]".
func filterEntries(t *testing.T, conf string) (string, error) {
	t.Helper()
	c, err := ParseFilterConfig([]byte(conf))
	if err != nil {
		return "", err
	}
	out := t.TempDir()
	_, err = Filter{Ref: "../../testdata/updates", Config: c, Sources: DirResolver{}, OutputDir: filepath.Join(out, "x")}.Run(context.Background())
	if err != nil {
		return "", err
	}
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(filepath.Join(out, "x")))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, ch := range cfg.Channels {
		var es []string
		for _, e := range ch.Entries {
			s := e.Name[len("etcdoperator.v"):]
			if e.Replaces != "" {
				s += "<" + e.Replaces[len("etcdoperator.v"):]
			}
			for _, sk := range e.Skips {
				s += "~" + sk[len("etcdoperator.v"):]
			}
			es = append(es, s)
		}
		lines = append(lines, ch.Name+": "+strings.Join(es, " "))
	}
	slices.Sort(lines)
	var bundles []string
	for _, b := range cfg.Bundles {
		bundles = append(bundles, b.Name[len("etcdoperator.v"):])
	}
	slices.Sort(bundles)
	return fmt.Sprintf("%s; default %s; bundles %s; deprecations %d", strings.Join(lines, "; "), cfg.Packages[0].DefaultChannel,
		strings.Join(bundles, ","), len(cfg.Deprecations)), nil
}

func TestFilter(t *testing.T) {
	for _, tc := range []struct{ name, conf, want string }{
		{"heads of default channels", `{}`,
			"stable: 0.9.4; default stable; bundles 0.9.4; deprecations 0"},
		{"full", `full: true`,
			"alpha: 0.9.2 0.9.4<0.9.2 0.9.5<0.9.4; stable: 0.9.0 0.9.1<0.9.0 0.9.2<0.9.0~0.9.1 0.9.4<0.9.2; default stable; bundles 0.9.0,0.9.1,0.9.2,0.9.4,0.9.5; deprecations 1"},
		{"from a version to the head", `{packages: [{name: etcd, minVersion: 0.9.1}]}`,
			"stable: 0.9.1 0.9.2~0.9.1 0.9.4<0.9.2; default stable; bundles 0.9.1,0.9.2,0.9.4; deprecations 1"},
		{"gap: replaces re-pointed down the chain", `{packages: [{name: etcd, maxVersion: 0.9.4}]}`,
			"stable: 0.9.0 0.9.1<0.9.0 0.9.2<0.9.0~0.9.1 0.9.4<0.9.2; default stable; bundles 0.9.0,0.9.1,0.9.2,0.9.4; deprecations 1"},
		{"below the head: the newest kept is the head", `{packages: [{name: etcd, maxVersion: 0.9.1}]}`,
			"stable: 0.9.0 0.9.1<0.9.0; default stable; bundles 0.9.0,0.9.1; deprecations 0"},
		{"two channels with bounds", `{packages: [{name: etcd, channels: [{name: alpha, minVersion: 0.9.2, maxVersion: 0.9.2}, {name: stable, maxVersion: 0.9.1}]}]}`,
			"alpha: 0.9.2; stable: 0.9.0 0.9.1<0.9.0; default stable; bundles 0.9.0,0.9.1,0.9.2; deprecations 1"},
		{"channels: heads only; default channel named", `{packages: [{name: etcd, defaultChannel: alpha, channels: [{name: alpha}]}]}`,
			"alpha: 0.9.5; default alpha; bundles 0.9.5; deprecations 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := filterEntries(t, tc.conf)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v\nwant %q", got, err, tc.want)
			}
		})
	}
}

// TestTrimChannel keeps bundles that no version range would pick together,
// as a graph whose versions are not monotonic may: a kept bundle whose way
// to the head went only through removed bundles is skipped by the head.
func TestTrimChannel(t *testing.T) {
	res, err := Validate{FS: os.DirFS("../../testdata/updates"), SkipSchema: true}.Run(context.Background())
	if err != nil || !res.Passed() {
		t.Fatal(err, res.Err())
	}
	g, err := updates.NewGraph(res.Model["etcd"].Channels["stable"])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		keep []string
		want string
	}{
		{[]string{"etcdoperator.v0.9.1", "etcdoperator.v0.9.4"}, "etcdoperator.v0.9.1 | etcdoperator.v0.9.4 ~etcdoperator.v0.9.1"},
		{[]string{"etcdoperator.v0.9.0", "etcdoperator.v0.9.4"}, "etcdoperator.v0.9.0 | etcdoperator.v0.9.4 <etcdoperator.v0.9.0"},
		{[]string{"etcdoperator.v0.9.1"}, "etcdoperator.v0.9.1"},
	} {
		keep := map[string]bool{}
		for _, k := range tc.keep {
			keep[k] = true
		}
		es, err := trimChannel(g, keep)
		var got []string
		for _, e := range es {
			s := e.Name
			if e.Replaces != "" {
				s += " <" + e.Replaces
			}
			for _, sk := range e.Skips {
				s += " ~" + sk
			}
			got = append(got, s)
		}
		if err != nil || strings.Join(got, " | ") != tc.want {
			t.Errorf("keep %v: %q %v, want %q", tc.keep, strings.Join(got, " | "), err, tc.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{`{packages: [{name: nope}]}`, `line 1: packages: package "nope" is not in the catalog`},
		{"packages:\n  - name: etdc\n", `line 2: packages: package "etdc" is not in the catalog; did you mean etcd?`},
		{"packages:\n  - name: etcd\n    channels:\n      - name: stabel\n", `line 4: channels: package "etcd" has no channel "stabel" (its channels: alpha, stable); did you mean stable?`},
		{`{packages: [{name: etcd, channels: [{name: alpha}]}]}`, `its default channel "stable" is filtered out: name one of the channels kept (alpha) as defaultChannel`},
		{`{packages: [{name: etcd, defaultChannel: beta, channels: [{name: alpha}]}]}`, `defaultChannel "beta" is not one of the channels kept (alpha)`},
		{`{packages: [{name: etcd, channels: [{name: beta}]}]}`, `package "etcd" has no channel "beta" (its channels: alpha, stable)`},
		{`{packages: [{name: etcd, minVersion: 2.0.0}]}`, `line 1: package "etcd", channel "stable": no bundle at or above minVersion 2.0.0 (its versions: 0.9.0 to 0.9.4)`},
		{`{packages: [{name: etcd, maxVersion: 0.1.0}]}`, `line 1: package "etcd", channel "stable": no bundle at or below maxVersion 0.1.0 (its versions: 0.9.0 to 0.9.4)`},
		{`{packages: [{name: etcd, channels: [{name: alpha, minVersion: 0.9.3, maxVersion: 0.9.3}]}]}`, `package "etcd", channel "alpha": no bundle between minVersion 0.9.3 and maxVersion 0.9.3 (its versions: 0.9.2 to 0.9.5)`},
		{`{packages: [{name: etcd, minVersion: 1.0.0, channels: [{name: alpha}]}]}`, "minVersion and maxVersion go on each channel"},
		{`{packages: [{name: etcd, minVersion: x}]}`, `line 1: packages[0].minVersion: "x" is not a semantic version`},
		{`{packages: [{name: etcd, minVersion: 2.0.0, maxVersion: 1.0.0}]}`, "maxVersion 1.0.0 is lower than minVersion 2.0.0"},
		{`{packages: [{name: etcd}, {name: etcd}]}`, `packages[1]: package "etcd" is listed twice (first as packages[0])`},
		{`{pakages: []}`, `line 1: unknown key "pakages" (known keys: schema, full, packages); did you mean packages?`},
		{`{schema: olm.other}`, `line 1: schema: unknown schema "olm.other"`},
		{"full: true\npackages:\n  - name: etcd\n    minversion: 1.0.0\n", `line 4: packages[0]: unknown key "minversion" (known keys: name, defaultChannel, minVersion, maxVersion, channels); did you mean minVersion?`},
		{"packages:\n  - name: etcd\n    channels:\n      - name: alpha\n        full: true\n", `line 5: packages[0].channels[0]: unknown key "full" (known keys: name, minVersion, maxVersion)`},
		{"full: yes\n", `line 1: full: must be true or false, not "yes"`},
		{"packages:\n  name: etcd\n", `line 2: packages: must be a list, not a mapping`},
		{"packages:\n  - etcd\n", `line 2: packages[0]: an entry must be a mapping of name, defaultChannel, minVersion, maxVersion, channels, not "etcd"`},
		{"packages:\n  - name: [etcd]\n", `line 2: packages[0].name: must be a string, not a list`},
		{"packages:\n  - minVersion: 1.0.0\n", `line 2: packages[0]: name is required`},
		{"full: true\nfull: false\n", `line 2: full: given twice`},
		{"packages:\n  - name: etcd\n  name: x\n", `line 2: not valid YAML: did not find expected '-' indicator`},
		// Every YAML error names its line: the parser's are numbered from
		// 0, and some come without one.
		{"packages:\n  - name: etcd\n  - name: [x\nfull: true\n", `line 3: not valid YAML: did not find expected ',' or ']'`},
		{"packages:\n  - name: etcd\n\n\n  - name: !x!foo x\n", `line 5: not valid YAML: found undefined tag handle`},
		{"packages: [\n", `line 1: not valid YAML: did not find expected node content`},
		{"packages:\n  - name: etcd\n  - name: *x\n", `line 3: not valid YAML: unknown anchor 'x' referenced`},
		{"packages:\n  - name: etcd\n  - name: \"\xff\"\n", `line 3: not valid YAML: invalid leading UTF-8 octet`},
		{"packages:\n  - name: etcd\n  - name: \x01\n", `line 3: not valid YAML: control characters are not allowed`},
		{"\tfull: true\n", `line 1: not valid YAML: found character that cannot start any token`},
		{"packages:\n  - name: etcd\n  - name: \u0080\n", `line 3: not valid YAML: control characters are not allowed`},
		{"full: [", `line 1: not valid YAML: did not find expected node content`},
		{"- a\n", `line 1: the configuration must be a mapping of schema, full, packages, not a list`},
		{"full: true\n---\nfull: false\n", `line 3: a second YAML document`},
	} {
		_, err := filterEntries(t, tc.conf)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.conf, err, tc.want)
		}
	}
	// Nothing is written when the filter fails.
	out := filepath.Join(t.TempDir(), "out")
	c, _ := ParseFilterConfig([]byte(`{packages: [{name: nope}]}`))
	if _, err := (Filter{Ref: "../../testdata/updates", Config: c, Sources: DirResolver{}, OutputDir: out}).Run(context.Background()); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written after a failure: %v", err)
	}
}

// TestFilterRealCatalogs filters every valid real test catalog in many ways
// (heads, full, and from or up to the oldest, a middle and the newest
// version of every package's default channel, all packages at once);
// Filter checks that each result validates before it returns, so an
// invalid result fails here.
func TestFilterRealCatalogs(t *testing.T) {
	root := "../../testdata/catalogs"
	dirs, _ := os.ReadDir(root)
	// Each filter loads the whole catalog: the race suite leaves out the
	// two largest (5 and 8 MB), which the corpus build filters too.
	minRuns := 40
	if !testutil.Corpus {
		dirs = slices.DeleteFunc(dirs, func(d os.DirEntry) bool { return d.Name() == "okderators" || d.Name() == "percona-everest" })
		minRuns = 30
	}
	runs := 0
	for _, d := range dirs {
		dir := filepath.Join(root, d.Name())
		res, err := Validate{FS: os.DirFS(dir), SkipSchema: true}.Run(context.Background())
		if err != nil || !res.Passed() {
			continue
		}
		confs := []string{`{}`, `full: true`}
		// positions[i] lists, for the oldest (0), a middle (1) and the
		// newest (2) version, one package entry per package.
		var positions [3][]string
		for name, pkg := range res.Model {
			if pkg.DefaultChannel == nil {
				continue
			}
			var vs []semver.Version
			for _, b := range pkg.DefaultChannel.Bundles {
				vs = append(vs, b.Version)
			}
			slices.SortFunc(vs, func(a, b semver.Version) int { return a.Compare(b) })
			for i, v := range []semver.Version{vs[0], vs[len(vs)/2], vs[len(vs)-1]} {
				positions[i] = append(positions[i], fmt.Sprintf(`{name: %q, %%s: %q}`, name, v))
			}
		}
		for _, pos := range positions {
			for _, bound := range []string{"minVersion", "maxVersion"} {
				confs = append(confs, fmt.Sprintf(`{full: true, packages: [`+strings.Join(pos, ", ")+`]}`, repeat(bound, len(pos))...))
			}
		}
		for _, conf := range confs {
			c, err := ParseFilterConfig([]byte(conf))
			if err != nil {
				t.Fatalf("%s: %v", conf, err)
			}
			var out bytes.Buffer
			if _, err := (Filter{Ref: dir, Config: c, Sources: DirResolver{}, Out: &out}).Run(context.Background()); err != nil {
				t.Errorf("%s %s: %v", d.Name(), conf, err)
			}
			runs++
		}
	}
	if runs < minRuns {
		t.Fatalf("only %d filters ran", runs)
	}
	t.Logf("%d filtered catalogs validated", runs)
}

func repeat(s string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = s
	}
	return out
}
