package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/internal/testutil"
)

// testBlob is one blob of a catalog file, in canonical JSON.
type testBlob struct {
	name   string // file and document number, for messages
	schema string
	data   []byte
}

// canonical re-encodes any JSON value the way Check expects: decoded into
// any, encoded without HTML escaping, trailing newline trimmed.
func canonical(data []byte) ([]byte, any, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, nil, err
	}
	out, err := encodeCanonical(v)
	return out, v, err
}

func encodeCanonical(v any) ([]byte, error) { return testutil.CanonicalJSON(v) }

// schemaOf returns the blob's schema value; the key is matched
// case-insensitively, as upstream opm does.
func schemaOf(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for k, x := range m {
		if strings.EqualFold(k, "schema") {
			s, _ := x.(string)
			return s
		}
	}
	return ""
}

var yamlDocSep = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// fileBlobs reads the blobs of one catalog file: a stream of JSON values,
// or of YAML documents when it does not start like JSON.
func fileBlobs(name string, data []byte) ([]testBlob, error) {
	var out []testBlob
	add := func(doc int, raw []byte) error {
		c, v, err := canonical(raw)
		if err != nil {
			return fmt.Errorf("%s#%d: %w", name, doc, err)
		}
		if v == nil {
			return nil
		}
		out = append(out, testBlob{name: fmt.Sprintf("%s#%d", name, doc), schema: schemaOf(v), data: c})
		return nil
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(data))
		for doc := 0; ; doc++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if err := add(doc, raw); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	for doc, part := range yamlDocSep.Split(string(data), -1) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(part))
		if err != nil {
			return nil, fmt.Errorf("%s#%d: %w", name, doc, err)
		}
		if err := add(doc, j); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// catalogBlobs reads every file under dir except .indexignore files.
func catalogBlobs(dir string) ([]testBlob, error) {
	var out []testBlob
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".indexignore" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		bs, err := fileBlobs(rel, data)
		out = append(out, bs...)
		return err
	})
	return out, err
}

var (
	fixtureOnce  sync.Once
	fixtureBlobs []testBlob
	fixtureErr   error
)

// fixtureFiles are the fixture catalog files of the repository's
// testdata (see testdata/README.md), a few of each real catalog: their
// blobs cover every schema and property type of the real catalogs, and
// checking each against the whole-blob evaluation stays fast.
var fixtureFiles = []string{
	"catalogs/fixture-deprecations-all-indexignored/deprecations.yaml",
	"catalogs/fixture-olm-deprecations/example-operator.v0.2.0-deprecations.yaml",
	"catalogs/fixture-olm-magiccatalog-duplicate-package/fbc_catalog.json",
	"catalogs/fixture-olm-magiccatalog-duplicate-package/fbc_initial.yaml",
	"catalogs/fixture-olm-magiccatalog-duplicate-package/fbc_updated.yaml",
	"catalogs/fixture-opm-bundle-without-channel/prometheus.json",
	"catalogs/okderators/cert-manager-operator/cert-manager-operator.yaml",
	"catalogs/okderators/cert-manager-operator/cert-manager-operator.v1.14.0-2024-08-09-204321.yaml",
	"catalogs/okderators/cluster-logging/cluster-logging.yaml",
	"catalogs/percona-everest/percona-postgresql-operator/veneer.yaml",
	"catalogs/submariner-v4.14/channels/channel-stable-0.17.yaml",
	"catalogs/submariner-v4.14/package.yaml",
	"catalog-samples/certified-operators-v4.16/operator-certification-operator/catalog.yaml",
	"catalog-samples/community-operators-v4.22/libredb-studio-operator/catalog.yaml",
	"catalog-samples/community-operators-v4.22/nfs-provisioner-operator/catalog.yaml",
}

// fixtures returns the blobs of fixtureFiles, named by their path below
// catalogs/ or catalog-samples/.
func fixtures(t testing.TB) []testBlob {
	t.Helper()
	fixtureOnce.Do(func() {
		for _, f := range fixtureFiles {
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", f))
			if err != nil {
				fixtureErr = err
				return
			}
			_, rel, _ := strings.Cut(f, "/")
			bs, err := fileBlobs(rel, data)
			if err != nil {
				fixtureErr = err
				return
			}
			fixtureBlobs = append(fixtureBlobs, bs...)
		}
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	if len(fixtureBlobs) == 0 {
		t.Fatal("no fixture blobs")
	}
	return fixtureBlobs
}

var (
	checkerOnce sync.Once
	checker     *Checker
	checkerErr  error
)

// sharedChecker returns one Checker for the whole test binary, so that
// memoized verdicts carry over between tests as they do in a real run.
func sharedChecker(t testing.TB) *Checker {
	t.Helper()
	checkerOnce.Do(func() { checker, checkerErr = New() })
	if checkerErr != nil {
		t.Fatal(checkerErr)
	}
	return checker
}

// referenceCheck is the oracle: the whole blob unified with its definition
// in one CUE evaluation, no shapes, no memo; but, as Check does
// (constraint.go), each constraint nested in an olm.constraint value is
// evaluated on its own, with its own nested lists emptied, and reported at
// its path, and the blob is evaluated with the values' lists emptied. It
// works on decoded JSON, apart from Check's byte-level walk.
func referenceCheck(c *Checker, schemaName string, blob []byte) []Violation {
	return referenceParts(c, schemaName, blob).vs
}

// reference is what referenceParts found.
type reference struct {
	vs []Violation
	// nestedFail: some nested constraint failed.
	nestedFail bool
	// constraints: the blob has olm.constraint values (without, the
	// reference is the whole blob's evaluation).
	constraints bool
	// depth is how deep constraints nest in the blob's olm.constraint
	// values.
	depth int
}

// referenceParts is referenceCheck, and whether some nested constraint
// failed. When none does, the result must be the whole blob's, lists
// and all (wholeReference): cutting the lists changes nothing for the
// constraints CUE can check whole.
func referenceParts(c *Checker, schemaName string, blob []byte) reference {
	k := blobKind(schemaName)
	var v any
	if json.Unmarshal(blob, &v) != nil {
		return reference{vs: c.reference(k, blob)}
	}
	m, _ := v.(map[string]any)
	props, _ := m["properties"].([]any)
	var nested []violation
	failing, depth, constraints := 0, 0, false
	for i, p := range props {
		pm, _ := p.(map[string]any)
		val, hasValue := pm["value"]
		if t, _ := pm["type"].(string); t != "olm.constraint" || !hasValue {
			continue
		}
		constraints = true
		valuePath := []pathElem{{label: "properties"}, {index: i, isIndex: true}, {label: "value"}}
		n := 0
		pm["value"] = cutNested(val, valuePath, func(cut any, path []pathElem) {
			depth = max(depth, (len(path)-len(valuePath))/3)
			data, err := encodeCanonical(cut)
			if err != nil {
				panic(err)
			}
			vs := nestedReference(c, data)
			if len(vs) == 0 {
				return
			}
			if n++; n > maxNestedReported || k == kindDeprecations {
				// Properties are not a field of olm.deprecations
				// blobs: their nested constraints are only cut.
				return
			}
			for _, x := range vs {
				x.path = append(slices.Clone(path), x.path...)
				nested = append(nested, x)
			}
		})
		if n > maxNestedReported && k != kindDeprecations {
			nested = append(nested, violation{path: valuePath, msg: fmt.Sprintf("%d more of its nested constraints fail; only the first %d are reported", n-maxNestedReported, maxNestedReported)})
		}
		failing += n
	}
	data, err := encodeCanonical(v)
	if err != nil {
		panic(err)
	}
	return reference{vs: finish(append(c.evalAll(k, data), nested...)), nestedFail: failing > 0, constraints: constraints, depth: depth}
}

// wholeDepth is how deep constraints may nest for the whole blob to be
// evaluated at once in the tests: it takes CUE seconds from about 50.
const wholeDepth = 8

// nestedCache holds the violations of the nested constraints the
// reference evaluated, by their cut: deep test values repeat a few cuts
// thousands of times.
var nestedCache sync.Map

// nestedReference evaluates a nested constraint's cut on its own.
func nestedReference(c *Checker, cut []byte) []violation {
	if vs, ok := nestedCache.Load(string(cut)); ok {
		return vs.([]violation)
	}
	vs := c.evalAll(kindConstraint, cut)
	nestedCache.Store(string(cut), vs)
	return vs
}

// wholeReference is the whole blob unified with its definition, nested
// constraints and all.
func wholeReference(c *Checker, schemaName string, blob []byte) []Violation {
	return c.reference(blobKind(schemaName), blob)
}

// cutNested returns the constraint node with the lists of its nested
// constraints emptied, after calling visit with each nested constraint's
// own cut and path, children first.
func cutNested(node any, path []pathElem, visit func(cut any, path []pathElem)) any {
	obj, ok := node.(map[string]any)
	if !ok {
		return node
	}
	out := maps.Clone(obj)
	for _, key := range nestedKeys {
		comp, ok := obj[key].(map[string]any)
		if !ok {
			continue
		}
		list, ok := comp["constraints"].([]any)
		if !ok {
			continue
		}
		for j, child := range list {
			p := append(slices.Clone(path), pathElem{label: key}, pathElem{label: "constraints"}, pathElem{index: j, isIndex: true})
			visit(cutNested(child, p, visit), p)
		}
		comp = maps.Clone(comp)
		comp["constraints"] = []any{}
		out[key] = comp
	}
	return out
}

// diffViolations describes the difference between two violation lists, or
// returns "" when they are equal.
func diffViolations(got, want []Violation) string {
	if len(got) == len(want) {
		same := true
		for i := range got {
			if got[i] != want[i] {
				same = false
				break
			}
		}
		if same {
			return ""
		}
	}
	var b strings.Builder
	b.WriteString("got:\n")
	for _, v := range got {
		fmt.Fprintf(&b, "\t%s\n", v)
	}
	b.WriteString("want:\n")
	for _, v := range want {
		fmt.Fprintf(&b, "\t%s\n", v)
	}
	return b.String()
}

// summarize counts violations by path pattern (indexes replaced by [*]).
func summarize(vs map[string]int) []string {
	var out []string
	for k, n := range vs {
		out = append(out, fmt.Sprintf("%6d  %s", n, k))
	}
	sort.Strings(out)
	return out
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

func pathPattern(p string) string { return indexRE.ReplaceAllString(p, "[*]") }
