package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
// in one CUE evaluation, no shapes, no memo.
func referenceCheck(c *Checker, schemaName string, blob []byte) []Violation {
	return c.reference(blobKind(schemaName), blob)
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
