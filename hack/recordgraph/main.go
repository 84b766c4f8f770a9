// Command recordgraph records upstream opm's outputs of `alpha list` and
// `alpha render-graph` on the test catalogs as golden files, for the tests
// of cmd/opm/internal/cli (TestListAndRenderGraphMatchUpstream).
//
//	go run ./hack/recordgraph -opm /tmp/upstream/opm
//
// For each catalog it writes testdata/list-graph/golden/<catalog>/: a
// cases.tsv manifest (case name, exit code, comparison, arguments) and,
// per case, <case>.out (stdout; as a digest in sha256.txt when larger than
// -max-bytes) and <case>.err (stderr, normalized: see the README there).
// It uses our own opm only to choose the cases (package and bundle
// names); every recorded byte is upstream's.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

var (
	upstream = flag.String("opm", "/tmp/upstream/opm", "upstream opm binary")
	root     = flag.String("testdata", "testdata", "the repository's testdata directory")
	maxBytes = flag.Int("max-bytes", 48<<10, "outputs larger than this are kept as digests")
)

// catalogs maps golden names to catalog directories under testdata.
func catalogs() map[string]string {
	out := map[string]string{"example": "example"}
	for _, glob := range []string{"catalogs/*", "list-graph/catalogs/*"} {
		dirs, _ := filepath.Glob(filepath.Join(*root, glob))
		for _, d := range dirs {
			rel, _ := filepath.Rel(*root, d)
			out[filepath.Base(d)] = rel
		}
	}
	return out
}

type testCase struct {
	name    string
	compare string // exact, or nolinkstyle (all but the linkStyle line)
	args    []string
}

func main() {
	flag.Parse()
	abs, err := filepath.Abs(*root)
	if err != nil {
		log.Fatal(err)
	}
	*root = abs
	for name, rel := range catalogs() {
		record(name, "TESTDATA/"+rel, casesFor(filepath.Join(*root, rel)))
	}
	record("errors", "", errorCases())
}

// contents is what the cases are chosen from: package names, and each
// package's bundles by increasing version.
func contents(dir string) (pkgs []string, bundles map[string][]string) {
	out, err := exec.Command(*upstream, "render", dir, "-o", "json").Output()
	if err != nil {
		log.Fatalf("render %s: %v", dir, err)
	}
	type blob struct {
		Schema, Name, Package string
		Properties            []struct {
			Type  string
			Value json.RawMessage
		}
	}
	versions := map[string]map[string]semver.Version{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var b blob
		if err := dec.Decode(&b); err != nil {
			log.Fatal(err)
		}
		switch b.Schema {
		case "olm.package":
			pkgs = append(pkgs, b.Name)
		case "olm.bundle":
			for _, p := range b.Properties {
				var v struct{ Version string }
				if p.Type == "olm.package" && json.Unmarshal(p.Value, &v) == nil {
					if versions[b.Package] == nil {
						versions[b.Package] = map[string]semver.Version{}
					}
					versions[b.Package][b.Name], _ = semver.Parse(v.Version)
				}
			}
		}
	}
	sort.Strings(pkgs)
	pkgs = dedup(pkgs)
	bundles = map[string][]string{}
	for p, vs := range versions {
		for n := range vs {
			bundles[p] = append(bundles[p], n)
		}
		sort.Slice(bundles[p], func(i, j int) bool {
			a, b := vs[bundles[p][i]], vs[bundles[p][j]]
			if !a.EQ(b) {
				return a.LT(b)
			}
			return bundles[p][i] < bundles[p][j]
		})
	}
	return pkgs, bundles
}

func dedup(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func casesFor(dir string) []testCase {
	const cat = "CATALOG"
	pkgs, bundles := contents(dir)
	cs := []testCase{
		{"list-packages", "exact", []string{"alpha", "list", "packages", cat}},
		{"list-channels", "exact", []string{"alpha", "list", "channels", cat}},
		{"list-bundles", "exact", []string{"alpha", "list", "bundles", cat}},
		{"list-channels@no-such-package", "exact", []string{"alpha", "list", "channels", cat, "no-such-package"}},
		{"list-bundles@no-such-package", "exact", []string{"alpha", "list", "bundles", cat, "no-such-package"}},
		{"render-graph", "exact", []string{"alpha", "render-graph", cat}},
		{"render-graph.v0", "nolinkstyle", []string{"alpha", "render-graph", cat, "--draw-v0-semantics"}},
		{"render-graph@no-such-package", "exact", []string{"alpha", "render-graph", cat, "-p", "no-such-package"}},
		{"render-graph.min@no-such-bundle", "exact", []string{"alpha", "render-graph", cat, "--minimum-edge", "no-such-bundle"}},
	}
	for _, p := range pkgs {
		cs = append(cs,
			testCase{"list-channels@" + p, "exact", []string{"alpha", "list", "channels", cat, p}},
			testCase{"list-bundles@" + p, "exact", []string{"alpha", "list", "bundles", cat, p}},
			testCase{"render-graph@" + p, "exact", []string{"alpha", "render-graph", cat, "-p", p}},
			// One package: upstream's linkStyle numbers are the text's.
			testCase{"render-graph@" + p + ".v0", "exact", []string{"alpha", "render-graph", cat, "-p", p, "--draw-v0-semantics"}},
		)
		// Minimum edges: the lowest, middle and highest version.
		bs := bundles[p]
		picked := map[string]bool{}
		for _, i := range []int{0, len(bs) / 2, len(bs) - 1} {
			if i < 0 || i >= len(bs) || picked[bs[i]] {
				continue
			}
			b := bs[i]
			picked[b] = true
			cs = append(cs,
				testCase{"render-graph.min@" + b, "nolinkstyle", []string{"alpha", "render-graph", cat, "--minimum-edge", b}},
				testCase{"render-graph.min@" + b + "@" + p + ".v0", "exact", []string{"alpha", "render-graph", cat, "--minimum-edge", b, "-p", p, "--draw-v0-semantics"}},
			)
		}
	}
	return cs
}

// errorCases are command lines and references that fail before any
// catalog is read.
func errorCases() []testCase {
	bundleDir := "TESTDATA/../pkg/bundle/testdata/bundles/3scale-community-operator-0.11.0"
	return []testCase{
		{"list-packages-no-args", "exact", []string{"alpha", "list", "packages"}},
		{"list-packages-two-args", "exact", []string{"alpha", "list", "packages", "TESTDATA/example", "x"}},
		{"list-channels-three-args", "exact", []string{"alpha", "list", "channels", "a", "b", "c"}},
		{"list-bundles-three-args", "exact", []string{"alpha", "list", "bundles", "a", "b", "c"}},
		{"list-bogus-flag", "exact", []string{"alpha", "list", "packages", "--bogus", "TESTDATA/example"}},
		{"list-bundle-dir", "exact", []string{"alpha", "list", "packages", bundleDir}},
		{"list-help", "exact", []string{"alpha", "list", "--help"}},
		{"list-no-subcommand", "exact", []string{"alpha", "list", "whatever"}},
		{"list-packages-help", "exact", []string{"alpha", "list", "packages", "--help"}},
		{"list-channels-help", "exact", []string{"alpha", "list", "channels", "--help"}},
		{"list-bundles-help", "exact", []string{"alpha", "list", "bundles", "--help"}},
		{"render-graph-no-args", "exact", []string{"alpha", "render-graph"}},
		{"render-graph-help", "exact", []string{"alpha", "render-graph", "--help"}},
		{"render-graph-bundle-dir", "exact", []string{"alpha", "render-graph", bundleDir}},
		{"render-graph-two-catalogs", "exact", []string{"alpha", "render-graph", "TESTDATA/example", "TESTDATA/catalogs/fixture-olm-deprecations"}},
	}
}

var (
	logrusRE  = regexp.MustCompile(`^time="[^"]*" level=(\w+) msg=(.*)$`)
	stdlogRE  = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (.*)$`)
	linkStyle = regexp.MustCompile(`(?m)^linkStyle .*\n`)
)

// normalizeErr keeps what does not vary from run to run: a logrus line
// becomes "logrus <level>: <message as logrus quotes it>", a standard
// logger line "stdlog: <message>".
func normalizeErr(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if m := logrusRE.FindStringSubmatch(l); m != nil {
			l = "logrus " + m[1] + ": " + m[2]
		} else if m := stdlogRE.FindStringSubmatch(l); m != nil {
			l = "stdlog: " + m[1]
		}
		out = append(out, l)
	}
	if len(out) == 1 && out[0] == "" {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

func record(name, catalog string, cases []testCase) {
	dir := filepath.Join(*root, "list-graph", "golden", name)
	if err := os.RemoveAll(dir); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var manifest, sums strings.Builder
	for _, c := range cases {
		args := make([]string, len(c.args))
		for i, a := range c.args {
			if a == "CATALOG" {
				a = catalog
			}
			args[i] = a
		}
		real := make([]string, len(args))
		for i, a := range args {
			real[i] = strings.ReplaceAll(a, "TESTDATA", *root)
		}
		cmd := exec.Command(*upstream, real...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				log.Fatal(err)
			}
			code = ee.ExitCode()
		}
		out := stdout.Bytes()
		if c.compare == "nolinkstyle" {
			out = linkStyle.ReplaceAll(out, nil)
		}
		if len(out) > *maxBytes {
			d := sha256.Sum256(out)
			fmt.Fprintf(&sums, "%s  %s.out\n", hex.EncodeToString(d[:]), c.name)
		} else {
			write(filepath.Join(dir, c.name+".out"), out)
		}
		if e := normalizeErr(strings.ReplaceAll(stderr.String(), *root, "TESTDATA")); e != "" {
			write(filepath.Join(dir, c.name+".err"), []byte(e))
		}
		fmt.Fprintf(&manifest, "%s\t%d\t%s\t%s\n", c.name, code, c.compare, strings.Join(args, " "))
	}
	write(filepath.Join(dir, "cases.tsv"), []byte(manifest.String()))
	if sums.Len() > 0 {
		write(filepath.Join(dir, "sha256.txt"), []byte(sums.String()))
	}
	fmt.Printf("%s: %d cases\n", name, len(cases))
}

func write(path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
}
