package bundle

import (
	"errors"
	"testing"
	"testing/fstest"
)

func TestReadYAMLDoc(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		doc      string
		rest     string
		wantErr  bool
		noDocErr bool
	}{
		{name: "single", in: "a: 1\nb: 2", doc: "a: 1\nb: 2\n"},
		{name: "two docs", in: "a: 1\n---\nb: 2\n", doc: "a: 1\n", rest: "b: 2\n"},
		{name: "leading separator kept", in: "---\na: 1\n", doc: "---\na: 1\n"},
		{name: "two leading separators", in: "---\n---\na: 1\n", doc: "---\n", rest: "a: 1\n"},
		{name: "separator with comment", in: "a: 1\n--- # next\nb: 2\n", doc: "a: 1\n", rest: "b: 2\n"},
		{name: "CRLF", in: "a: 1\r\n---\r\nb: 2\r\n", doc: "a: 1\n", rest: "b: 2\r\n"},
		{name: "bad separator", in: "a: 1\n---x\n", wantErr: true},
		{name: "empty", in: "", wantErr: true, noDocErr: true},
		{name: "blank lines", in: "\n\n", doc: "\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, rest, err := readYAMLDoc([]byte(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error, doc %q", doc)
				}
				if tc.noDocErr != errors.Is(err, errNoDocument) {
					t.Errorf("error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(doc) != tc.doc || string(rest) != tc.rest {
				t.Errorf("doc %q rest %q, want %q %q", doc, rest, tc.doc, tc.rest)
			}
		})
	}
}

func TestDecodeObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		kind    string
		wantErr bool
		isNil   bool
	}{
		{name: "yaml", in: "kind: Secret\n", kind: "Secret"},
		{name: "json", in: ` {"kind":"Secret"} `, kind: "Secret"},
		{name: "json after 30 bytes of space is read as YAML", in: "                                  {\"kind\": \"Secret\"}", kind: "Secret"},
		{name: "no kind", in: "apiVersion: v1\n", wantErr: true},
		{name: "kind not a string", in: "kind: 1\n", wantErr: true},
		{name: "array", in: "- kind: Secret\n", wantErr: true},
		{name: "json null", in: "{} null", kind: "", wantErr: true},
		{name: "yaml null", in: "# only a comment\n", isNil: true},
		{name: "number too large", in: `{"kind": "Secret", "x": 1e400}`, wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "invalid json", in: `{"kind":`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var o object
			_, err := decodeFirst([]byte(tc.in), &o)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error, object %v", o.m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.isNil != (o.m == nil) {
				t.Fatalf("object %v", o.m)
			}
			if o.kind() != tc.kind {
				t.Errorf("kind %q, want %q", o.kind(), tc.kind)
			}
		})
	}
}

func TestGroupVersionKind(t *testing.T) {
	t.Parallel()
	tests := []struct{ apiVersion, group, version, kind string }{
		{"apiextensions.k8s.io/v1", "apiextensions.k8s.io", "v1", "K"},
		{"v1", "", "v1", "K"},
		{"", "", "", "K"},
		{"/", "", "", "K"},
		{"a/b/c", "", "", ""},
	}
	for _, tc := range tests {
		o := object{m: map[string]any{"apiVersion": tc.apiVersion, "kind": "K"}}
		g, v, k := o.groupVersionKind()
		if g != tc.group || v != tc.version || k != tc.kind {
			t.Errorf("%q: got %q %q %q", tc.apiVersion, g, v, k)
		}
	}
}

// FuzzDecodeFirst feeds arbitrary bytes to the manifest decoder: it must
// never panic, and a decoded object always has a kind.
func FuzzDecodeFirst(f *testing.F) {
	for _, s := range []string{testCSV, testCRD, testAnnotations, "---\n---\n", `{"kind":"X"}`, "a: [", "--- x", "\r\n", "kind: &a [*a]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var o object
		if _, err := decodeFirst(data, &o); err == nil && o.m != nil && o.kind() == "" {
			t.Errorf("decoded an object without kind: %v", o.m)
		}
		var af annotationsFile
		_, _ = decodeFirst(data, &af)
		var df dependenciesFile
		_, _ = decodeFirst(data, &df)
	})
}

// FuzzRender renders a bundle whose CSV, annotations and dependencies are
// fuzzed: Render must never panic and must return a bundle or an error.
func FuzzRender(f *testing.F) {
	f.Add([]byte(testCSV), []byte(testAnnotations), []byte(testDependencies), []byte(testCRD))
	f.Add([]byte("kind: ClusterServiceVersion\nspec: {customresourcedefinitions: {owned: [null]}}\n"), []byte(testAnnotations), []byte(""), []byte(""))
	f.Add([]byte("kind: ClusterServiceVersion\nspec: {install: {strategy: deployment, spec: {deployments: [{spec: 1}]}}}\n"), []byte(testAnnotations), []byte("dependencies: [{type: olm.gvk}]"), []byte("kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1beta1\nspec: {versions: [null, 1]}"))
	f.Fuzz(func(t *testing.T, csv, annotations, deps, crd []byte) {
		fsys := fstest.MapFS{
			"manifests/csv.yaml":         {Data: csv},
			"manifests/crd.yaml":         {Data: crd},
			"metadata/annotations.yaml":  {Data: annotations},
			"metadata/dependencies.yaml": {Data: deps},
		}
		for _, lenient := range []bool{false, true} {
			b, _, err := Render(fsys, "fuzz", Options{Lenient: lenient, ImageRefTemplate: testTemplate(t)})
			if (b == nil) == (err == nil) {
				t.Fatalf("bundle %v and error %v", b, err)
			}
			if b != nil {
				_ = MigrateBundleObjectToCSVMetadata(b)
			}
		}
	})
}
