package canonjson

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// slowYAML is the reference: go-yaml's reading of the document.
func slowYAML(t testing.TB, doc []byte) ([]byte, error) {
	t.Helper()
	if bytes.IndexByte(doc, '\r') >= 0 {
		doc = bytes.ReplaceAll(doc, []byte("\r\n"), []byte("\n"))
	}
	return appendSlowYAML(nil, doc)
}

func TestFastYAMLCases(t *testing.T) {
	cases := []struct {
		name, doc string
		fast      bool // handled by the fast path
	}{
		{"scalars", "a: plain text\nb: 'single ''q'''\nc: \"double \\\"q\\\" \\u00e9 \\t\"\nd: 1.50\ne: 0x1F\nf: 017\ng: 1_000\nh: yes\ni: ~\nj: null\nk: .5\nl: -0\nm: 1e3\nnn: +12\no2: 2021-01-02\np: 12345678901234567890\nq: 1e999\nr: 0b101\ns: -0b11\nt: v1.0.0\nu: http://x.y/z#frag\nv: a #comment\nw:\n", true},
		{"nested", "a:\n  b:\n    c: d\n  e: [ ]\n  f: {}\nlist:\n- x\n- yy: 1\n  z: 2\n-\n  k: v\n- - nested\n", false},
		{"nested no flow spaces", "a:\n  b:\n    c: d\n  e: []\n  f: {}\nlist:\n- x\n- yy: 1\n  z: 2\n-\n  k: v\n", true},
		{"indented sequence", "entries:\n  - name: a\n    skips:\n    - b\n    - c\n  - name: d\n", true},
		{"literal", "a: |\n  line one\n    indented\n\n  after blank\nb: |-\n  stripped\n\nc: |+\n  kept\n\n\nd: x\n", true},
		{"literal leading blank", "a: |\n\n  text\nb: |\n\nc: 1\n", true},
		{"literal in sequence", "a:\n- |\n  one\n  two\n- x\n", true},
		{"comments", "# head\na: 1 # tail\n  # indented comment\nb:\n  # before\n  c: 2\n", false},
		{"comments simple", "# head\na: 1 # tail\nb:\n# before\n  c: 2\n", true},
		{"duplicate keys", "a: 1\nb: 2\na: 3\n", true},
		{"quoted keys", "\"x y\": 1\n'z': 2\n", true},
		{"unicode", "a: héllo – ✓\nb: \"\\x41\\U0001F600\"\n", true},
		{"html", "a: <b>&amp;</b>\n", true},
		{"folded", "a: >\n  folded\n  text\n", false},
		{"flow", "a: [1, 2]\n", false},
		{"anchor", "a: &x 1\nb: *x\n", false},
		{"tag", "a: !!str 1\n", false},
		{"multi-line plain", "a: one\n  two\n\n   three\nb: x\n", true},
		{"multi-line quoted", "a: \"one\n  two \\\n  three\n\n  four\"\nb: 'x\n  y'\n", true},
		{"plain continuation with colon", "a: one\n  two: three\n", false},
		{"bool key", "yes: 1\n", false},
		{"merge key", "a: {x: 1}\n<<: {y: 2}\n", false},
		{"inf", "a: .inf\n", false},
		{"tab indent", "a:\n\tb: 1\n", false},
		{"top-level list", "- a\n", false},
		{"top-level scalar", "hello\n", false},
		{"bad indentation", "a: 1\n  b: 2\n", false},
		{"mapping in value", "a: b: c\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := slowYAML(t, []byte(tc.doc))
			got, err := appendFastYAML(nil, []byte(tc.doc))
			if tc.fast != (err == nil) {
				t.Fatalf("fast path handled it: %v (err %v), want %v", err == nil, err, tc.fast)
			}
			if err != nil {
				return
			}
			if wantErr != nil {
				t.Fatalf("fast path accepted what go-yaml rejects: %v", wantErr)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("fast %s\nslow %s", got, want)
			}
		})
	}
}

// yamlDocs returns every YAML document under root but in the
// directories skip (paths relative to root).
func yamlDocs(t testing.TB, root string, skip ...string) [][]byte {
	var docs [][]byte
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if rel, _ := filepath.Rel(root, path); slices.Contains(skip, filepath.ToSlash(rel)) {
				return filepath.SkipDir
			}
		}
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return SplitYAML(data, func(doc YAMLDoc) error {
			docs = append(docs, bytes.Clone(doc.Data))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func checkFastAgrees(t *testing.T, docs [][]byte) (fast int) {
	for _, doc := range docs {
		got, err := appendFastYAML(nil, doc)
		if err != nil {
			continue
		}
		fast++
		want, werr := slowYAML(t, doc)
		if werr != nil {
			t.Fatalf("fast path accepted a document go-yaml rejects (%v):\n%.300s", werr, doc)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("fast and go-yaml differ at byte %d:\nfast ...%.200s\nslow ...%.200s", i, got[max(0, i-50):], want[max(0, i-50):])
		}
	}
	return fast
}

func TestFastYAMLAgreesOnCatalogs(t *testing.T) {
	// Wherever the fast path answers, on every YAML file of the test data
	// (catalogs, bundle manifests, hand-written fixtures), it agrees with
	// go-yaml. The race suite checks a sample of the documents of the
	// real catalogs, spread over them, and every other document; the
	// corpus build all of them.
	realDirs := []string{"catalogs", "catalog-samples", "diff/history"}
	other := yamlDocs(t, "../../testdata", realDirs...)
	var real [][]byte
	for _, dir := range realDirs {
		real = append(real, yamlDocs(t, filepath.Join("../../testdata", dir))...)
	}
	t.Logf("fast path handled %d of %d other documents of testdata", checkFastAgrees(t, other), len(other))
	// And it answers for nearly all documents of real catalogs, the
	// documents it exists for (hand-written fixtures use flow style more).
	docs := testutil.Sample(real, 24)
	fast := checkFastAgrees(t, docs)
	t.Logf("fast path handled %d of %d real catalog documents (of %d)", fast, len(docs), len(real))
	if fast < len(docs)*9/10 {
		t.Errorf("the fast path handles only %d of %d real catalog documents", fast, len(docs))
	}
}

func FuzzFastYAML(f *testing.F) {
	for _, s := range []string{"a: 1\n", "a:\n- b: |\n    x\n  c: 'y'\n", "a: \"\\u00e9\"\nb: [ ]\n", "a: |+\n\n  x\n\n", "k:\n  - - x\n", "a: 0o17\nb: 0x_1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := appendFastYAML(nil, doc)
		if err != nil {
			return
		}
		want, werr := appendSlowYAML(nil, doc)
		if werr != nil {
			t.Fatalf("fast path accepted %q, which go-yaml rejects: %v", doc, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("doc %q\nfast %s\nslow %s", doc, got, want)
		}
	})
}
