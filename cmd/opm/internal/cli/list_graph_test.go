package cli

import (
	"bufio"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/image"
)

// listGraphGolden holds upstream's outputs of `alpha list` and `alpha
// render-graph`, recorded by hack/recordgraph (see its README).
var listGraphGolden = filepath.Join(goldenRoot, "list-graph", "golden")

type listGraphCase struct {
	name, compare string
	exit          int
	args          []string
}

func readListGraphCases(t *testing.T, dir string) []listGraphCase {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []listGraphCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			t.Fatalf("%s: bad line %q", f.Name(), sc.Text())
		}
		code, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatal(err)
		}
		var args []string
		for _, a := range strings.Fields(fields[3]) {
			args = append(args, strings.ReplaceAll(a, "TESTDATA", goldenRoot))
		}
		cs = append(cs, listGraphCase{fields[0], fields[2], code, args})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		t.Fatalf("%s has no cases", f.Name())
	}
	return cs
}

// graphOrderVaries tells the cases whose output upstream prints in an
// order that varies from run to run (ours is fixed, see
// docs/render-graph.md): a package with several channels of one name, and
// "style" lines of deprecated channels of one name in several packages.
// Their lines are compared as a multiset.
var graphOrderVaries = map[string]func(name string) bool{
	"fixture-olm-magiccatalog-duplicate-package": func(name string) bool { return strings.HasPrefix(name, "render-graph") },
	"graph-edge-cases":                           func(name string) bool { return name == "render-graph" || name == "render-graph.v0" },
}

func sortedLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

var linkStyleLine = regexp.MustCompile(`(?m)^linkStyle .*\n`)

// TestListAndRenderGraphMatchUpstream runs every recorded case: the exit
// code and stdout must be upstream's (for whole-catalog drawings with
// --draw-v0-semantics, all but the linkStyle line, which
// TestRenderGraphLinkStyleRule checks), and stderr must have upstream's
// form and words.
func TestListAndRenderGraphMatchUpstream(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(listGraphGolden, "*"))
	if err != nil || len(dirs) < 10 {
		t.Fatalf("golden directories: %v %v", dirs, err)
	}
	total := 0
	byDir := map[string][]listGraphCase{}
	var large []dirCase
	for _, dir := range dirs {
		cases := readListGraphCases(t, dir)
		total += len(cases)
		if sampledCatalogs[filepath.Base(dir)] == "" {
			byDir[dir] = cases
			continue
		}
		for _, c := range cases {
			large = append(large, dirCase{dir, c})
		}
	}
	features := func(dc dirCase) []string {
		return []string{dc.dir, sampledCatalogs[filepath.Base(dc.dir)] + " " + listGraphKind(dc.name)}
	}
	for _, dc := range testutil.Cover(large, features) {
		byDir[dc.dir] = append(byDir[dc.dir], dc.listGraphCase)
	}
	for _, dir := range dirs {
		cases := byDir[dir]
		sums := map[string]string{}
		if _, err := os.Stat(filepath.Join(dir, "sha256.txt")); err == nil {
			sums = goldenDigests(t, dir)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				code, out, errs := run(t, c.args...)
				if want, ok := deliberate[c.name]; ok && c.exit == want.upstreamExit {
					switch c.name {
					case "render-graph-help":
						checkRenderGraphHelp(t, dir, c.name, code, 0, out, errs)
						continue
					case "render-graph-no-args":
						checkRenderGraphHelp(t, dir, c.name, code, 1, errs, out)
						continue
					}
					if code != want.exit || out != "" || normalizeStderr(errs) != want.stderr {
						t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, nothing, %q (a deliberate difference from upstream)", c.name, code, out, normalizeStderr(errs), want.exit, want.stderr)
					}
					continue
				}
				if code != c.exit {
					t.Errorf("%s: exit %d, upstream %d (stderr %s)", c.name, code, c.exit, errs)
				}
				if c.compare == "nolinkstyle" {
					out = linkStyleLine.ReplaceAllString(out, "")
				}
				if varies := graphOrderVaries[filepath.Base(dir)]; varies != nil && varies(c.name) {
					// Compare the lines as a multiset.
					want, err := os.ReadFile(filepath.Join(dir, c.name+".out"))
					if err != nil {
						t.Fatal(err)
					}
					if sortedLines(out) != sortedLines(string(want)) {
						t.Errorf("%s: stdout's lines differ from upstream's:\n%s\nwant:\n%s", c.name, out, want)
					}
				} else if want, ok := sums[c.name+".out"]; ok {
					if got := digest([]byte(out)); got != want {
						dumpOutput(t, filepath.Base(dir)+"."+c.name+".out", out)
						t.Errorf("%s: stdout differs from upstream's (sha256 %s, want %s)", c.name, got, want)
					}
				} else {
					want, err := os.ReadFile(filepath.Join(dir, c.name+".out"))
					if err != nil {
						t.Fatal(err)
					}
					if isHelp(c.name) {
						compareStderr(t, c.name, out, string(want))
					} else if out != string(want) {
						t.Errorf("%s: stdout differs from upstream's:\n%s\nwant:\n%s", c.name, out, want)
					}
				}
				want, err := os.ReadFile(filepath.Join(dir, c.name+".err"))
				if os.IsNotExist(err) {
					if errs != "" {
						t.Errorf("%s: stderr %q, upstream's is empty", c.name, errs)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				compareStderr(t, c.name, normalizeStderr(strings.ReplaceAll(errs, goldenRoot, "TESTDATA")), string(want))
			}
		})
	}
	if total < 300 {
		t.Errorf("only %d cases", total)
	}
}

// deliberate are the recorded cases where we differ from upstream on
// purpose (docs/compatibility.md): `render-graph
// -p` of a package the catalog does not have prints upstream's empty
// graph (the legend only); here it is an error, as `list channels` of
// that package is upstream's (issue 27).
var deliberate = map[string]struct {
	upstreamExit int // the case is deliberate only where upstream exits so
	exit         int
	stderr       string
}{
	"render-graph@no-such-package": {0, 1, "stdlog: package \"no-such-package\" not found\n"},
	// Upstream's help describes mermaid only, and a docker pipe to draw
	// it: ours shows -o svg, -o dot and several catalogs
	// (checkRenderGraphHelp).
	"render-graph-help": {upstreamExit: 0},
	// Upstream prints the usage with the examples.
	"render-graph-no-args": {upstreamExit: 1},
}

// checkRenderGraphHelp checks render-graph's help (or usage, after a
// command-line error): its description and examples show -o svg, -o dot
// and several catalogs (issue 27), and everything else (the error line,
// the usage line, the flags) is upstream's, with our flags added. text is
// the help's stream (stdout for --help, stderr for an error), other the
// stream that must be empty.
func checkRenderGraphHelp(t *testing.T, dir, name string, code, wantCode int, text, other string) {
	t.Helper()
	if code != wantCode || other != "" || !strings.Contains(text, "Usage:") || !strings.Contains(text, "Flags:") {
		t.Fatalf("%s: exit %d, want %d; other stream %q\n%s", name, code, wantCode, other, text)
	}
	for _, s := range []string{"render-graph ./catalog -p etcd -o svg", "-o dot", "render-graph ./community ./certified", "mermaid-cli"} {
		if !strings.Contains(text, s) {
			t.Errorf("%s lacks %q:\n%s", name, s, text)
		}
	}
	if name == "render-graph-help" {
		for _, s := range []string{"-o svg draws", "one or more\nindexes", "several drawn\nas one catalog"} {
			if !strings.Contains(text, s) {
				t.Errorf("%s lacks %q:\n%s", name, s, text)
			}
		}
	}
	ext := ".out"
	if wantCode != 0 {
		ext = ".err"
	}
	want, err := os.ReadFile(filepath.Join(dir, name+ext))
	if err != nil {
		t.Fatal(err)
	}
	// What comes before the description, the usage line, and the flags.
	part := func(s string) string {
		head := ""
		if wantCode != 0 {
			head, _, _ = strings.Cut(s, "\n")
		}
		usage, _, _ := strings.Cut(s[strings.Index(s, "Usage:"):], "Examples:")
		return head + "\n" + usage + s[strings.Index(s, "Flags:"):]
	}
	compareStderr(t, name, part(text), part(string(want)))
}

// sampledCatalogs are the catalogs of the list and render-graph goldens
// whose cases the race suite samples (the corpus build runs them all, as
// it does the other catalogs' cases always): the four large real ones,
// from 1 to 8 MB, each case of which loads the whole catalog, a second
// or so under -race, together have each kind of case at least once, and
// each of them some (testutil.Cover); community-subset, whose 67 cases
// are many more than its kinds, has each kind once.
var sampledCatalogs = map[string]string{
	"kube-descheduler-v4.12": "large",
	"okderators":             "large",
	"percona-everest":        "large",
	"submariner-v4.14":       "large",
	"community-subset":       "community-subset",
}

type dirCase struct {
	dir string
	listGraphCase
}

// listGraphKind is a case's kind: its name without the package or
// bundle it names ("render-graph.min@<bundle>@<package>.v0" is
// "render-graph.min@@.v0"), keeping the names that do not exist.
func listGraphKind(name string) string {
	parts := strings.Split(name, "@")
	kind := parts[0]
	for _, a := range parts[1:] {
		kind += "@"
		if strings.HasPrefix(a, "no-such-") {
			kind += a
		}
	}
	if len(parts) > 1 && strings.HasSuffix(name, ".v0") {
		kind += ".v0"
	}
	return kind
}

var (
	logrusFatalRE = regexp.MustCompile(`^time="[^"]*" level=(\w+) msg=(.*)$`)
	stdLogRE      = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (.*)$`)
	spacesRE      = regexp.MustCompile(` +`)
)

// normalizeStderr is hack/recordgraph's normalization: logrus lines become
// "logrus <level>: <message>", standard logger lines "stdlog: <message>".
func normalizeStderr(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if m := logrusFatalRE.FindStringSubmatch(l); m != nil {
			l = "logrus " + m[1] + ": " + m[2]
		} else if m := stdLogRE.FindStringSubmatch(l); m != nil {
			l = "stdlog: " + m[1]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// compareStderr checks our normalized stderr against upstream's: the same
// lines, in the same form, except that (1) a log message may say more
// than upstream's (a file and line in front, an explanation after) as long
// as upstream's words are in it, and (2) usage and help text may list our
// additional flags (--max-catalog-file-size, render-graph's -o), which
// also widens pflag's columns: flag lines are compared with runs of
// spaces collapsed.
func compareStderr(t *testing.T, name, got, want string) {
	t.Helper()
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	gi := 0
	for _, wl := range w {
		for gi < len(g) && isOurFlagLine(g[gi]) && !isOurFlagLine(wl) {
			gi++
		}
		if gi >= len(g) {
			t.Errorf("%s: stderr ends before upstream's line %q:\n%s", name, wl, got)
			return
		}
		gl := g[gi]
		gi++
		switch {
		case gl == wl:
		case strings.HasPrefix(wl, "logrus ") || strings.HasPrefix(wl, "stdlog: "):
			form, msg, _ := strings.Cut(wl, ": ")
			gform, gmsg, _ := strings.Cut(gl, ": ")
			if form != gform || !strings.Contains(unquoteLog(gmsg), unquoteLog(msg)) {
				t.Errorf("%s: stderr line %q, upstream's %q", name, gl, wl)
			}
		case spacesRE.ReplaceAllString(gl, " ") == spacesRE.ReplaceAllString(wl, " "):
		default:
			t.Errorf("%s: stderr line %q, upstream's %q\nours:\n%s", name, gl, wl, got)
			return
		}
	}
	for ; gi < len(g); gi++ {
		if g[gi] != "" && !isOurFlagLine(g[gi]) {
			t.Errorf("%s: extra stderr line %q", name, g[gi])
		}
	}
}

// isHelp tells the cases whose stdout is help text.
func isHelp(name string) bool {
	return strings.HasSuffix(name, "-help") || name == "list-no-subcommand"
}

func isOurFlagLine(l string) bool {
	return strings.Contains(l, "--max-catalog-file-size") || strings.Contains(l, "-o, --output string")
}

func unquoteLog(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// TestRenderGraphLinkStyleRule checks our linkStyle line of whole-catalog
// drawings with --draw-v0-semantics against the documented rule: the
// marked edges are those upstream marks when it draws each package alone
// (-p: its recorded drawing, which ours equals, linkStyle included, by
// the golden test), numbered by their position in the whole text.
func TestRenderGraphLinkStyleRule(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(listGraphGolden, "*"))
	checked := 0
	for _, dir := range dirs {
		var whole []string
		pkgs := map[string]listGraphCase{}
		for _, c := range readListGraphCases(t, dir) {
			switch {
			case c.name == "render-graph.v0" && c.exit == 0:
				whole = c.args
			case strings.HasPrefix(c.name, "render-graph@") && strings.HasSuffix(c.name, ".v0") && c.exit == 0:
				pkg := strings.TrimSuffix(strings.TrimPrefix(c.name, "render-graph@"), ".v0")
				pkgs[pkg] = c
			}
		}
		if whole == nil {
			continue
		}
		_, out, _ := run(t, whole...)
		offsets := map[string]int{}
		edges := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  subgraph \"") {
				offsets[strings.Trim(strings.TrimPrefix(l, "  subgraph "), `"`)] = edges
			}
			if strings.Contains(l, "-->") {
				edges++
			}
		}
		var want []string
		for _, pkg := range slices.Sorted(maps.Keys(offsets)) {
			c, ok := pkgs[pkg]
			if !ok {
				t.Fatalf("%s: no -p case for package %s", dir, pkg)
			}
			// Upstream's drawing of the package alone, as recorded; ours
			// when only its digest was (the golden test checks they are
			// the same).
			pout, err := os.ReadFile(filepath.Join(dir, c.name+".out"))
			if os.IsNotExist(err) {
				_, out, _ := run(t, c.args...)
				pout = []byte(out)
			} else if err != nil {
				t.Fatal(err)
			}
			for _, id := range linkStyleIDs(string(pout)) {
				n, _ := strconv.Atoi(id)
				want = append(want, strconv.Itoa(n+offsets[pkg]))
			}
		}
		got := linkStyleIDs(out)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: linkStyle %v, want %v", filepath.Base(dir), got, want)
		}
		if len(got) > 0 {
			checked++
		}
		// Drawn twice, the same (the race suite leaves out the large
		// catalogs).
		if sampledCatalogs[filepath.Base(dir)] != "large" || testutil.Corpus {
			if _, again, _ := run(t, whole...); again != out {
				t.Errorf("%s: two runs differ", filepath.Base(dir))
			}
		}
	}
	if checked < 3 {
		t.Errorf("only %d catalogs with marked edges", checked)
	}
}

func linkStyleIDs(out string) []string {
	m := regexp.MustCompile(`(?m)^linkStyle (\S+) `).FindStringSubmatch(out)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], ",")
}

// TestListAndRenderGraphImages lists and draws catalog images held in an
// in-process registry: the output equals that of the image's directory
// (in the corpus build, also for a real catalog of 1.3 MB).
func TestListAndRenderGraphImages(t *testing.T) {
	isolateCredentials(t)
	host := imagetest.Registry(t)
	catalogs := map[string]string{
		"graph-edge-cases": goldenRoot + "/list-graph/catalogs/graph-edge-cases",
	}
	if testutil.Corpus {
		catalogs["kube-descheduler-v4.12"] = goldenRoot + "/catalogs/kube-descheduler-v4.12"
	}
	for name, dir := range catalogs {
		ref := host + "/catalogs/" + name + ":v1"
		imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"},
			imagetest.LayerFromDir(t, dir, "configs")))
		_, pkgs, _ := run(t, "alpha", "list", "packages", dir)
		firstPkg := strings.Fields(strings.Split(pkgs, "\n")[1])[0]
		for _, args := range [][]string{
			{"alpha", "list", "packages", "REF"},
			{"alpha", "list", "channels", "REF"},
			{"alpha", "list", "bundles", "REF"},
			{"alpha", "list", "bundles", "REF", firstPkg},
			{"alpha", "list", "bundles", "REF", "no-such-package"},
			{"alpha", "render-graph", "REF"},
			{"alpha", "render-graph", "REF", "--draw-v0-semantics"},
			{"alpha", "render-graph", "REF", "-p", firstPkg, "--draw-v0-semantics"},
			{"alpha", "render-graph", "REF", "--minimum-edge", "no-such-bundle"},
		} {
			withDir, withImage := slices.Clone(args), slices.Clone(args)
			withDir[slices.Index(args, "REF")] = dir
			withImage[slices.Index(args, "REF")] = ref
			wantCode, want, wantErr := run(t, withDir...)
			code, got, gotErr := run(t, withImage...)
			if code != wantCode || got != want {
				t.Errorf("%s %v: exit %d, want %d; stdout equal: %v\nstderr: %s", name, args, code, wantCode, got == want, gotErr)
			}
			if want == "" && wantCode == 0 {
				t.Errorf("%s %v: empty output", name, args)
			}
			// Errors name the reference given; the rest is the same.
			if strings.ReplaceAll(normalizeStderr(gotErr), ref, "REF") != strings.ReplaceAll(normalizeStderr(wantErr), dir, "REF") {
				t.Errorf("%s %v: stderr %q, want %q", name, args, gotErr, wantErr)
			}
		}
	}

	// A bundle image is not an index.
	bundleRef := host + "/bundles/hyperfoil:v0.26.0"
	imagetest.Push(t, bundleRef, imagetest.BundleImage(t, smallBundle))
	code, out, errs := run(t, "alpha", "list", "bundles", bundleRef)
	if code != 1 || out != "" || normalizeStderr(errs) != "logrus fatal: "+strconv.Quote("cannot list non-index "+strconv.Quote(bundleRef))+"\n" {
		t.Errorf("list of a bundle image: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs = run(t, "alpha", "render-graph", bundleRef)
	if code != 1 || out != "" || !strings.HasSuffix(errs, " render reference "+strconv.Quote(bundleRef)+": cannot render bundle image: not allowed\n") {
		t.Errorf("render-graph of a bundle image: exit %d, %q, %q", code, out, errs)
	}
}

// TestRenderGraphOutputFlag: -o takes mermaid (the default), dot and svg,
// and refuses anything else before reading the catalog.
func TestRenderGraphOutputFlag(t *testing.T) {
	testutil.UseGraphviz(t)
	_, want, _ := run(t, "alpha", "render-graph", exampleCatalog)
	if code, got, errs := run(t, "alpha", "render-graph", exampleCatalog, "-o", "mermaid"); code != 0 || got != want {
		t.Errorf("-o mermaid: exit %d, stderr %s", code, errs)
	}
	for o, prefix := range map[string]string{"dot": "digraph catalog {\n", "svg": "<?xml"} {
		if code, got, errs := run(t, "alpha", "render-graph", exampleCatalog, "-o", o); code != 0 || !strings.HasPrefix(got, prefix) {
			t.Errorf("-o %s: exit %d, stderr %s, output %.80q", o, code, errs, got)
		}
	}
	code, out, errs := run(t, "alpha", "render-graph", "does-not-exist/", "--output", "png")
	if code != 1 || out != "" || normalizeStderr(errs) != `stdlog: invalid --output value "png", expected (mermaid|dot|svg)`+"\n" {
		t.Errorf("-o png: exit %d, %q, %q", code, out, errs)
	}
}

// TestRenderGraphMisspeltPackage: render-graph -p of a package no catalog
// has says so on stderr, with the nearest names, draws nothing and exits
// 1 in every format (upstream draws an empty graph, for -o svg a legend
// only, and exits 0: issue 27); list channels and bundles of such a
// package give the same suggestion after upstream's words.
func TestRenderGraphMisspeltPackage(t *testing.T) {
	cat := filepath.Join(goldenRoot, "example")
	for _, format := range []string{"mermaid", "dot", "svg"} {
		code, out, errs := run(t, "alpha", "render-graph", cat, "-p", "memcahced", "-o", format)
		if code != 1 || out != "" || normalizeStderr(errs) != "stdlog: package \"memcahced\" not found; did you mean memcached?\n" {
			t.Errorf("-o %s: exit %d, stdout %q, stderr %q", format, code, out, errs)
		}
	}
	// Several catalogs: a package of any of them is drawn.
	if code, out, errs := run(t, "alpha", "render-graph", cat, filepath.Join(goldenRoot, "updates"), "-p", "etcd"); code != 0 || !strings.Contains(out, "etcdoperator.v0.9.4") {
		t.Errorf("etcd of the second catalog: exit %d, %s\n%s", code, errs, out)
	}
	for _, list := range []string{"channels", "bundles"} {
		code, out, errs := run(t, "alpha", "list", list, cat, "memcahced")
		if code != 1 || out != "" || normalizeStderr(errs) != "logrus fatal: \"package \\\"memcahced\\\" not found; did you mean memcached?\"\n" {
			t.Errorf("list %s: exit %d, stdout %q, stderr %q", list, code, out, normalizeStderr(errs))
		}
	}
}
