package fastopm_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fastopm/fastopm/"

// layers are the project's packages from the bottom up, as
// docs/architecture.md draws them: a package may import the packages of
// its own layer that the allowed map lists and those of lower layers,
// never a higher one.
var layers = [][]string{
	// Leaves: no project imports but each other where listed.
	{"pkg/api", "pkg/canonjson", "pkg/indexignore", "pkg/imageref", "pkg/scratch", "pkg/interrupt", "pkg/version", "pkg/csv", "pkg/httpserver/ui", "pkg/progress", "pkg/suggest", "pkg/markdown", "pkg/diskcache"},
	// The file-based catalog format.
	{"alpha/property", "alpha/declcfg"},
	// The upgrade graph and its rules.
	{"alpha/model", "alpha/graph", "alpha/crdsafety"},
	// Infrastructure over the format and the model.
	{"pkg/schema", "pkg/bundle", "pkg/image", "pkg/catalogimage", "pkg/registry", "pkg/cache", "pkg/server", "alpha/updates", "alpha/install", "alpha/olmv1", "pkg/configmap", "pkg/graphsvg"},
	// The cluster as it is: its objects and OLM's answers over them.
	{"alpha/cluster"},
	// The HTTP side of serve, over the snapshot, the graph and the updates.
	{"pkg/httpserver"},
	// The substitutes catalog template.
	{"alpha/template/substitutes"},
	// One use case per command.
	{"alpha/action/migrations", "alpha/action", "alpha/template", "alpha/template/basic", "alpha/template/semver", "alpha/template/bundles", "alpha/template/internal/declcfg"},
	// The binaries.
	{"cmd/opm/internal/cli", "cmd/opm", "cmd/grpc_health_probe", "cmd/opm-graphviz"},
}

// sameLayer lists the imports allowed within a layer.
var sameLayer = map[string][]string{
	"pkg/csv":               {"pkg/canonjson"},
	"alpha/declcfg":         {"alpha/property"},
	"pkg/image":             {"pkg/bundle"},
	"pkg/catalogimage":      {"pkg/image"},
	"pkg/cache":             {"pkg/registry"},
	"pkg/server":            {"pkg/cache", "pkg/registry"},
	"alpha/action":          {"alpha/action/migrations"},
	"alpha/template":        {"alpha/template/basic", "alpha/template/semver", "alpha/template/internal/declcfg"},
	"alpha/template/basic":  {"alpha/template/bundles", "alpha/template/internal/declcfg"},
	"alpha/template/semver": {"alpha/template/bundles"},
	"cmd/opm":               {"cmd/opm/internal/cli"},
}

// TestImportLayers checks every import of the project's non-test code
// against layers: the data flows up, from the format to the commands, and
// no package reaches above itself.
func TestImportLayers(t *testing.T) {
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layerOf[p] = i
		}
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "hack" || name == "internal" && p == "internal") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if dir == "." {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		from, known := layerOf[dir]
		if !known {
			t.Errorf("%s: package %s is in no layer of architecture_test.go (and docs/architecture.md)", p, dir)
			return nil
		}
		seen[dir] = true
		for _, imp := range f.Imports {
			target, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(target, module)
			if !ok || strings.HasPrefix(rel, "internal/") {
				continue
			}
			to, known := layerOf[rel]
			switch {
			case !known:
				t.Errorf("%s imports %s, which is in no layer", p, rel)
			case to > from:
				t.Errorf("%s (layer %d) imports %s (layer %d): a package never imports a higher layer", p, from, rel, to)
			case to == from && !slices.Contains(sameLayer[dir], rel):
				t.Errorf("%s imports %s of its own layer, which sameLayer does not allow", p, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range layerOf {
		if !seen[p] {
			t.Errorf("layer package %s has no code", p)
		}
	}
}

// TestOpmLinksNoGraphviz: Graphviz's Go package compiles and instantiates
// its WebAssembly module when it is initialised, in every process that
// links it (0.1 s and 15 MB at each start, 0.8 s with a cold compilation
// cache); only cmd/opm-graphviz may link it, and opm runs that program to
// draw (pkg/graphsvg).
func TestOpmLinksNoGraphviz(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"./cmd/opm", "./cmd/grpc_health_probe"} {
		out, err := exec.Command("go", "list", "-deps", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", cmd, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/goccy/go-graphviz") || strings.HasPrefix(dep, "github.com/tetratelabs/wazero") {
				t.Errorf("%s links %s", cmd, dep)
			}
		}
	}
	out, err := exec.Command("go", "list", "-deps", "./cmd/opm-graphviz").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "github.com/goccy/go-graphviz\n") {
		t.Errorf("cmd/opm-graphviz does not link go-graphviz: %v\n%s", err, out)
	}
}

// leanLeavesOut are the packages the lean opm (built with the opm_lean
// tag: make build's bin/opm, what catalog pods run) must not link, as
// prefixes: their initializers would run at every start of serve and
// validate (alpha/action/full.go, docs/performance.md). opm-full, the
// same command built without the tag, links them.
var leanLeavesOut = []string{
	"k8s.io/api/", "k8s.io/client-go/", "k8s.io/apiextensions-apiserver/", "k8s.io/apimachinery/pkg/runtime",
	"k8s.io/klog", "sigs.k8s.io/crdify/", "github.com/operator-framework/api/",
	"github.com/google/cel-go/cel", "github.com/google/cel-go/interpreter", "github.com/go-air/gini",
	"github.com/yuin/goldmark", "github.com/microcosm-cc/bluemonday", "github.com/prometheus/",
	module + "pkg/httpserver", module + "pkg/configmap", module + "pkg/markdown", module + "alpha/cluster",
	module + "alpha/install", module + "alpha/crdsafety", module + "alpha/updates", module + "alpha/olmv1",
}

// TestLeanLinks: the lean opm links none of leanLeavesOut, and opm-full
// links each (so that the list names what the split is about).
func TestLeanLinks(t *testing.T) {
	t.Parallel()
	deps := func(tags ...string) []string {
		args := append(append([]string{"list", "-deps"}, tags...), "./cmd/opm")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.Fields(string(out))
	}
	linked := func(deps []string, prefix string) bool {
		return slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, prefix) })
	}
	lean, full := deps("-tags", "opm_lean"), deps()
	for _, p := range leanLeavesOut {
		if linked(lean, p) {
			t.Errorf("the lean opm links %s", p)
		}
		if !linked(full, p) {
			t.Errorf("opm-full does not link %s: take it off leanLeavesOut", p)
		}
	}
}

// TestArchitectureDoc keeps docs/architecture.md's table of layers equal to
// layers, row by row, and checks that the doc names every package under
// internal/ (test support, outside the layers).
func TestArchitectureDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	pkgName := regexp.MustCompile("`((?:alpha|pkg|cmd|internal)/[A-Za-z0-9_./-]+)`")
	var rows [][]string
	_, table, ok := strings.Cut(text, "| layer | packages | may import |\n|---|---|---|\n")
	if !ok {
		t.Fatal("docs/architecture.md has no table of layers (| layer | packages | may import |)")
	}
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("docs/architecture.md: a row of the table of layers has %d cells: %q", len(cells)-2, line)
		}
		var pkgs []string
		for _, m := range pkgName.FindAllStringSubmatch(cells[2], -1) {
			pkgs = append(pkgs, m[1])
		}
		rows = append(rows, pkgs)
	}
	if len(rows) != len(layers) {
		t.Errorf("docs/architecture.md's table has %d layers, architecture_test.go %d", len(rows), len(layers))
	}
	for i := range min(len(rows), len(layers)) {
		doc, code := slices.Sorted(slices.Values(rows[i])), slices.Sorted(slices.Values(layers[i]))
		if !slices.Equal(doc, code) {
			t.Errorf("layer %d: docs/architecture.md lists %v, architecture_test.go %v", i, doc, code)
		}
	}

	dirs, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !strings.Contains(text, "`internal/"+d.Name()+"`") {
			t.Errorf("docs/architecture.md does not name `internal/%s`", d.Name())
		}
	}
}
