package bundle

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"text/template"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

const (
	testAnnotations = `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.package.v1: foo
  operators.operatorframework.io.bundle.channels.v1: stable,fast
`
	testCSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v1.0.0
  annotations:
    olm.properties: '[{"type": "olm.maxOpenShiftVersion", "value": "4.15"}]'
spec:
  displayName: Foo
  version: 1.0.0
  customresourcedefinitions:
    owned:
    - name: widgets.example.com
      version: v1
      kind: Widget
    required:
    - name: gadgets.other.io
      version: v1beta1
      kind: Gadget
  apiservicedefinitions:
    owned:
    - name: things
      group: api.example.com
      version: v1
      kind: Thing
    required:
    - name: stuffs
      group: stuff.io
      version: v2
      kind: Stuff
  relatedImages:
  - name: op
    image: quay.io/example/op:1
  install:
    strategy: deployment
    spec:
      deployments:
      - name: op
        spec:
          template:
            spec:
              containers:
              - name: manager
                image: quay.io/example/op:1
              - name: proxy
                image: quay.io/example/proxy:1
              initContainers:
              - name: init
                image: quay.io/example/init:1
`
	testCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
  - name: v2
    served: false
    storage: false
`
	testDependencies = `dependencies:
- type: olm.package
  value:
    packageName: prometheus
    version: ">0.27.0"
- type: olm.gvk
  value:
    group: etcd.database.coreos.com
    kind: EtcdCluster
    version: v1beta2
- type: olm.constraint
  value:
    failureMessage: needs <bar> & baz
    cel:
      rule: properties.exists(p, p.type == "certified")
`
	testProperties = `properties:
- type: olm.maxOpenShiftVersion
  value: "4.15"
- type: custom.label
  value: {b: 1, a: 2}
`
)

// testBundle is a small bundle exercising every property source; files
// overrides or (with an empty value) removes entries.
func testBundle(files map[string]string) fstest.MapFS {
	base := map[string]string{
		"manifests/csv.yaml":             testCSV,
		"manifests/widgets.crd.yaml":     testCRD,
		"metadata/annotations.yaml":      testAnnotations,
		"metadata/dependencies.yaml":     testDependencies,
		"metadata/properties.yaml":       testProperties,
		"manifests/.hidden.yaml":         "not: [valid",
		"manifests/sub/ignored.yaml":     "kind: Secret\n",
		"tests/scorecard/config.yaml":    "kind: Configuration\n",
		"manifests/zz-service.json":      `{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"}}`,
		"manifests/aa-configmap.yml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  html: <b>&amp;</b>\n",
		"manifests/mm-other-kind.yaml":   "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
		"manifests/nn-not-k8s.yaml":      "just: a map\n",
		"manifests/oo-two-docs.yaml":     "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: t\n",
		"metadata/zz-unrelated-file.txt": "hello",
	}
	for k, v := range files {
		base[k] = v
	}
	fsys := fstest.MapFS{}
	for k, v := range base {
		if v != "" {
			fsys[k] = &fstest.MapFile{Data: []byte(v)}
		}
	}
	return fsys
}

func testTemplate(t *testing.T) *template.Template {
	t.Helper()
	return template.Must(template.New("image").Parse("quay.io/community/{{.Package}}:v{{.Version}}-{{.Name}}"))
}

// TestRenderSyntheticBundle checks every property source, the order and
// byte format of the properties, relatedImages, objects and warnings.
func TestRenderSyntheticBundle(t *testing.T) {
	t.Parallel()
	b, warnings, err := Render(testBundle(nil), "synthetic", Options{ImageRefTemplate: testTemplate(t)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Schema != "olm.bundle" || b.Name != "foo.v1.0.0" || b.Package != "foo" {
		t.Errorf("schema/name/package = %q/%q/%q", b.Schema, b.Name, b.Package)
	}
	const image = "quay.io/community/foo:v1.0.0-foo.v1.0.0"
	if b.Image != image {
		t.Errorf("image = %q, want %q", b.Image, image)
	}

	var got []string
	var objects int
	for _, p := range b.Properties {
		if p.Type == property.TypeBundleObject {
			objects++
			continue
		}
		got = append(got, p.Type+" "+string(p.Value))
	}
	want := []string{
		`custom.label {"a":2,"b":1}`,
		`olm.constraint {"cel":{"rule":"properties.exists(p, p.type == \"certified\")"},"failureMessage":"needs \u003cbar\u003e \u0026 baz"}`,
		`olm.gvk {"group":"api.example.com","kind":"Thing","version":"v1"}`,
		`olm.gvk {"group":"example.com","kind":"Widget","version":"v1"}`,
		`olm.gvk {"group":"example.com","kind":"Widget","version":"v2"}`,
		`olm.gvk.required {"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}`,
		`olm.gvk.required {"group":"other.io","kind":"Gadget","version":"v1beta1"}`,
		`olm.gvk.required {"group":"stuff.io","kind":"Stuff","version":"v2"}`,
		`olm.maxOpenShiftVersion "4.15"`,
		`olm.package {"packageName":"foo","version":"1.0.0"}`,
		`olm.package.required {"packageName":"prometheus","versionRange":">0.27.0"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("properties:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// csv, widgets CRD, service, configmap, other kind, first doc of two docs
	if objects != 6 || len(b.Objects) != 6 {
		t.Errorf("%d bundle object properties and %d objects, want 6", objects, len(b.Objects))
	}

	wantImages := []declcfg.RelatedImage{
		{Name: "op", Image: "quay.io/example/op:1"},
		{Image: image},
		{Image: "quay.io/example/proxy:1"},
		{Image: "quay.io/example/init:1"},
	}
	if len(b.RelatedImages) != len(wantImages) {
		t.Fatalf("relatedImages = %v, want %v", b.RelatedImages, wantImages)
	}
	for i := range wantImages {
		if b.RelatedImages[i] != wantImages[i] {
			t.Errorf("relatedImages[%d] = %v, want %v", i, b.RelatedImages[i], wantImages[i])
		}
	}

	// Objects are in manifests/ name order; the configmap is HTML-escaped as
	// upstream's json.Marshal of the unstructured object does.
	wantFirst := `{"apiVersion":"v1","data":{"html":"\u003cb\u003e\u0026amp;\u003c/b\u003e"},"kind":"ConfigMap","metadata":{"name":"cm"}}`
	if b.Objects[0] != wantFirst {
		t.Errorf("Objects[0] = %s, want %s", b.Objects[0], wantFirst)
	}
	if !strings.Contains(b.CsvJSON, `"kind":"ClusterServiceVersion"`) || b.Objects[1] != b.CsvJSON {
		t.Errorf("CsvJSON is not the CSV object: %.80s", b.CsvJSON)
	}
	for _, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		data, err := bundleObjectData(p.Value)
		if err != nil {
			t.Fatal(err)
		}
		if !containsString(b.Objects, string(data)) {
			t.Errorf("bundle object %.60s is not among Objects", data)
		}
	}

	wantWarnings := []string{
		"manifests/mm-other-kind.yaml: kind \"Widget\" is not one of",
		"manifests/nn-not-k8s.yaml: skipped, not a Kubernetes object",
		"manifests/oo-two-docs.yaml: more than one document",
	}
	if len(warnings) != len(wantWarnings) {
		t.Errorf("warnings = %v", warnings)
	}
	for _, w := range wantWarnings {
		if !containsPrefix(warnings, `bundle "synthetic": `+w) {
			t.Errorf("no warning starting with %q in %v", w, warnings)
		}
	}
}

// bundleObjectData decodes the manifest an olm.bundle.object value carries.
func bundleObjectData(value json.RawMessage) ([]byte, error) {
	var v struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(v.Data)
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func containsPrefix(ws []Warning, prefix string) bool {
	for _, w := range ws {
		if strings.HasPrefix(w.String(), prefix) {
			return true
		}
	}
	return false
}

// TestRenderBehaviour covers upstream rules one at a time.
func TestRenderBehaviour(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		opts  Options
		check func(t *testing.T, b *declcfg.Bundle, ws []Warning)
	}{
		{
			name: "no template: empty image, not among relatedImages",
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				if b.Image != "" || len(b.RelatedImages) != 3 {
					t.Errorf("image %q, relatedImages %v", b.Image, b.RelatedImages)
				}
			},
		},
		{
			name:  "template version comes from the first olm.package property (properties.yaml)",
			files: map[string]string{"metadata/properties.yaml": "properties:\n- type: olm.package\n  value: {packageName: foo, version: 9.9.9}\n"},
			opts:  Options{ImageRefTemplate: template.Must(template.New("").Parse("x:{{.Version}}"))},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				if b.Image != "x:9.9.9" {
					t.Errorf("image = %q", b.Image)
				}
				// The last olm.package wins: the one derived from the CSV.
				if n := countType(b, property.TypePackage); n != 1 || !hasProp(b, property.TypePackage, `{"packageName":"foo","version":"1.0.0"}`) {
					t.Errorf("olm.package properties: %v", b.Properties)
				}
			},
		},
		{
			name: "olm.package in the CSV annotation wins over the annotations file",
			files: map[string]string{"manifests/csv.yaml": strings.Replace(testCSV,
				`'[{"type": "olm.maxOpenShiftVersion", "value": "4.15"}]'`,
				`'[{"type":"olm.package","value":{"version":"2.0.0","packageName":"bar"}}]'`, 1)},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				if !hasProp(b, property.TypePackage, `{"packageName":"bar","version":"2.0.0"}`) || countType(b, property.TypePackage) != 1 {
					t.Errorf("olm.package properties: %v", b.Properties)
				}
			},
		},
		{
			name:  "invalid olm.properties annotation is ignored with a warning",
			files: map[string]string{"manifests/csv.yaml": strings.Replace(testCSV, `'[{"type": "olm.maxOpenShiftVersion", "value": "4.15"}]'`, `'not json'`, 1)},
			check: func(t *testing.T, b *declcfg.Bundle, ws []Warning) {
				if !containsPrefix(ws, `bundle "b": manifests/csv.yaml: annotation olm.properties does not decode`) {
					t.Errorf("warnings: %v", ws)
				}
				// properties.yaml still provides it.
				if !hasProp(b, "olm.maxOpenShiftVersion", `"4.15"`) {
					t.Errorf("properties: %v", b.Properties)
				}
			},
		},
		{
			name: "v1beta1 CRD provides spec.version and spec.versions",
			files: map[string]string{"manifests/old.crd.yaml": `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: olds.example.com}
spec:
  group: example.com
  version: v1alpha1
  names: {kind: Old, plural: olds}
  versions: [{name: v1alpha1, served: true}, {name: v1alpha2, served: true}]
`},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				for _, v := range []string{"v1alpha1", "v1alpha2"} {
					if !hasProp(b, property.TypeGVK, `{"group":"example.com","kind":"Old","version":"`+v+`"}`) {
						t.Errorf("no olm.gvk for Old %s", v)
					}
				}
			},
		},
		{
			name:  "CRD of another apiextensions version is not read",
			files: map[string]string{"manifests/x.crd.yaml": "apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\nspec: {group: x.io, names: {kind: X, plural: xs}, versions: [{name: v1}]}\n"},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				if hasProp(b, property.TypeGVK, `{"group":"x.io","kind":"X","version":"v1"}`) {
					t.Error("olm.gvk from an apiextensions.k8s.io/v2 CRD")
				}
			},
		},
		{
			name: "numbers keep upstream's int64/float64 rules; JSON manifests are read as JSON",
			files: map[string]string{
				"manifests/nums.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nums}\nnum: [1.0, 2, 0.5, 1e3, 12345678901234567890, -0]\n",
				"manifests/zz-service.json": "  {\"kind\":\"Service\",\"apiVersion\":\"v1\",\"n\":1.50}\n{\"trailing\": true}",
			},
			check: func(t *testing.T, b *declcfg.Bundle, ws []Warning) {
				want := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nums"},"num":[1,2,0.5,1000,12345678901234567000,0]}`
				if !containsString(b.Objects, want) {
					t.Errorf("objects %v lack %s", b.Objects, want)
				}
				if !containsString(b.Objects, `{"apiVersion":"v1","kind":"Service","n":1.5}`) {
					t.Errorf("objects %v lack the JSON service", b.Objects)
				}
				if !containsPrefix(ws, `bundle "b": manifests/zz-service.json: more than one document`) {
					t.Errorf("warnings %v", ws)
				}
			},
		},
		{
			name: "a YAML file starting with two separators decodes to null and is skipped",
			files: map[string]string{
				"manifests/null.yaml": "---\n---\nkind: Secret\n",
				"manifests/lead.yaml": "--- # leading marker\napiVersion: v1\nkind: Secret\nmetadata: {name: lead}\n",
			},
			check: func(t *testing.T, b *declcfg.Bundle, ws []Warning) {
				if !containsPrefix(ws, `bundle "b": manifests/null.yaml: skipped: the file holds no object`) {
					t.Errorf("warnings %v", ws)
				}
				if !containsString(b.Objects, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"lead"}}`) {
					t.Errorf("objects %v", b.Objects)
				}
			},
		},
		{
			name: "annotations may come from any file in metadata/, decoded as JSON",
			files: map[string]string{
				"metadata/annotations.yaml": "",
				"metadata/a.json":           `{"annotations":{"operators.operatorframework.io.bundle.package.v1":"foo","operators.operatorframework.io.bundle.channels.v1":"stable"}}`,
			},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				if b.Package != "foo" {
					t.Errorf("package = %q", b.Package)
				}
			},
		},
		{
			name: "JSON properties file: sorted by the raw bytes, then compacted",
			files: map[string]string{"metadata/properties.yaml": `{"properties":[
				{"type":"custom","value": { "z" : 1 , "a" : [ 1 , 2 ] }},
				{"type":"custom","value":{"b":"<&>"}},
				{"type":"custom","value": { "z" : 1 , "a" : [ 1 , 2 ] }}]}`},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				var got []string
				for _, p := range b.Properties {
					if p.Type == "custom" {
						got = append(got, string(p.Value))
					}
				}
				// The raw bytes decide the order (`{ "z"` sorts before
				// `{"b"` since ' ' < '"'); the duplicate is dropped; key
				// order and characters are kept.
				want := []string{`{"z":1,"a":[1,2]}`, `{"b":"<&>"}`}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("custom properties %v, want %v", got, want)
				}
			},
		},
		{
			name: "duplicate spec.relatedImages are kept; empty container image is listed",
			files: map[string]string{"manifests/csv.yaml": strings.Replace(strings.Replace(testCSV,
				"  - name: op\n    image: quay.io/example/op:1\n",
				"  - name: op\n    image: quay.io/example/op:1\n  - name: again\n    image: quay.io/example/op:1\n", 1),
				"                image: quay.io/example/proxy:1\n", "", 1)},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				want := []declcfg.RelatedImage{{Name: "op", Image: "quay.io/example/op:1"}, {Name: "again", Image: "quay.io/example/op:1"}, {}, {Image: "quay.io/example/init:1"}}
				if len(b.RelatedImages) != len(want) {
					t.Fatalf("relatedImages = %v", b.RelatedImages)
				}
				for i := range want {
					if b.RelatedImages[i] != want[i] {
						t.Errorf("relatedImages[%d] = %v, want %v", i, b.RelatedImages[i], want[i])
					}
				}
			},
		},
		{
			name:  "install strategy other than deployment has no operator images",
			files: map[string]string{"manifests/csv.yaml": strings.Replace(testCSV, "strategy: deployment", "strategy: helm", 1)},
			check: func(t *testing.T, b *declcfg.Bundle, _ []Warning) {
				if len(b.RelatedImages) != 1 {
					t.Errorf("relatedImages = %v", b.RelatedImages)
				}
			},
		},
		{
			name: "lenient: second CSV dropped, no channel, unserved owned version are warnings",
			files: map[string]string{
				"manifests/zz-csv2.yaml":    "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: other}\nspec: {}\n",
				"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n",
				"manifests/csv.yaml":        strings.Replace(testCSV, "      version: v1\n      kind: Widget", "      version: v2\n      kind: Widget", 1),
			},
			opts: Options{Lenient: true},
			check: func(t *testing.T, b *declcfg.Bundle, ws []Warning) {
				if b.Name != "foo.v1.0.0" || strings.Contains(strings.Join(b.Objects, ""), `"name":"other"`) {
					t.Errorf("name %q, objects %v", b.Name, b.Objects)
				}
				for _, w := range []string{
					`bundle "b": manifests: more than one ClusterServiceVersion`,
					`bundle "b": metadata/annotations.yaml: no channel in annotations`,
					`bundle "b": manifests/csv.yaml: owned CRD version not served: widgets.example.com version v2`,
				} {
					if !containsPrefix(ws, w) {
						t.Errorf("no warning %q in %v", w, ws)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, ws, err := Render(testBundle(tc.files), "b", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, b, ws)
		})
	}
}

func countType(b *declcfg.Bundle, typ string) int {
	n := 0
	for _, p := range b.Properties {
		if p.Type == typ {
			n++
		}
	}
	return n
}

func hasProp(b *declcfg.Bundle, typ, value string) bool {
	for _, p := range b.Properties {
		if p.Type == typ && string(p.Value) == value {
			return true
		}
	}
	return false
}

// TestRenderErrors checks each rule and that the error names the bundle,
// the file and the rule.
func TestRenderErrors(t *testing.T) {
	t.Parallel()
	csvWith := func(old, new string) string { return strings.Replace(testCSV, old, new, 1) }
	tests := []struct {
		name     string
		fsys     fstest.MapFS
		opts     Options
		rule     error
		contains string
	}{
		{"no manifests dir", fstest.MapFS{"metadata/annotations.yaml": {Data: []byte(testAnnotations)}}, Options{}, ErrNotBundle, `bundle "b": manifests: not a registry+v1 bundle directory`},
		{"no metadata dir", fstest.MapFS{"manifests/csv.yaml": {Data: []byte(testCSV)}, "manifests/crd.yaml": {Data: []byte(testCRD)}}, Options{}, ErrNotBundle, `bundle "b": metadata: not a registry+v1`},
		{"no objects", testBundleOnly(map[string]string{"manifests/a.yaml": "just: data\n"}), Options{}, ErrNoObjects, `bundle "b": manifests: no bundle objects found`},
		{"no CSV", testBundleOnly(map[string]string{"manifests/crd.yaml": testCRD}), Options{}, ErrNoCSV, `bundle "b": manifests: no ClusterServiceVersion in bundle`},
		{"two CSVs", testBundle(map[string]string{"manifests/zz.yaml": testCSV}), Options{}, ErrMultipleCSVs, `manifests/csv.yaml, manifests/zz.yaml; only manifests/csv.yaml is used`},
		{"CSV without spec", testBundle(map[string]string{"manifests/csv.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: x}\n"}), Options{}, ErrInvalidCSV, `manifests/csv.yaml: invalid ClusterServiceVersion: spec is missing`},
		{"CSV annotation not a string", testBundle(map[string]string{"manifests/csv.yaml": csvWith("  annotations:\n", "  annotations:\n    count: 1\n")}), Options{}, ErrInvalidCSV, `metadata.annotations["count"]: expected a string, found a number`},
		{"CSV version not a string", testBundle(map[string]string{"manifests/csv.yaml": csvWith("version: 1.0.0", "version: [1]")}), Options{}, ErrInvalidCSV, `spec.version: json: cannot unmarshal array`},
		{"CSV without name", testBundle(map[string]string{"manifests/csv.yaml": csvWith("name: foo.v1.0.0", "namespace: x")}), Options{}, ErrNoCSVName, `manifests/csv.yaml: ClusterServiceVersion has no name`},
		{"owned CRD missing", testBundle(map[string]string{"manifests/widgets.crd.yaml": ""}), Options{}, ErrOwnedCRDMissing, `manifests/csv.yaml: owned CRD not provided by the bundle: widgets.example.com version v1 kind Widget (the bundle's CustomResourceDefinitions provide: things.api.example.com version v1 kind Thing)`},
		{"owned CRD version unknown", testBundle(map[string]string{"manifests/csv.yaml": csvWith("      version: v1\n      kind: Widget", "      version: v9\n      kind: Widget")}), Options{}, ErrOwnedCRDMissing, `widgets.example.com version v9 kind Widget`},
		{"owned CRD version not served", testBundle(map[string]string{"manifests/csv.yaml": csvWith("      version: v1\n      kind: Widget", "      version: v2\n      kind: Widget")}), Options{}, ErrOwnedVersionNotServed, `owned CRD version not served: widgets.example.com version v2`},
		{"owned CRD name without group", testBundle(map[string]string{"manifests/csv.yaml": csvWith("name: widgets.example.com", "name: widgets")}), Options{}, ErrInvalidCSV, `couldn't parse plural.group from crd name: widgets`},
		{"owned CRD entry null", testBundle(map[string]string{"manifests/csv.yaml": csvWith("    owned:\n    - name: widgets.example.com", "    owned:\n    - null\n    - name: widgets.example.com")}), Options{}, ErrInvalidCSV, `spec.customresourcedefinitions.owned[0] is null`},
		{"required CRD name without group", testBundle(map[string]string{"manifests/csv.yaml": csvWith("name: gadgets.other.io", "name: gadgets")}), Options{}, ErrInvalidCSV, `spec.customresourcedefinitions.required: couldn't parse plural.group`},
		{"CRD of a foreign group", testBundle(map[string]string{"manifests/x.yaml": "apiVersion: example.com/v1\nkind: CustomResourceDefinition\n"}), Options{}, ErrInvalidCRD, `manifests/x.yaml: invalid CustomResourceDefinition: apiVersion "example.com/v1"`},
		{"CRD with a bad type", testBundle(map[string]string{"manifests/widgets.crd.yaml": strings.Replace(testCRD, "plural: widgets", "plural: [widgets]", 1)}), Options{}, ErrInvalidCRD, `spec.names.plural: expected a string, found an array`},
		{"no annotations", testBundle(map[string]string{"metadata/annotations.yaml": "annotations: {other: x}\n"}), Options{}, ErrNoAnnotations, `bundle "b": metadata: no annotations file`},
		{"broken annotations", testBundle(map[string]string{"metadata/annotations.yaml": "annotations: [\n"}), Options{}, ErrNoAnnotations, `(metadata/annotations.yaml: `},
		{"no channel", testBundle(map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n  operators.operatorframework.io.bundle.channels.v1: ' , '\n"}), Options{}, ErrNoChannels, `metadata/annotations.yaml: no channel in annotations`},
		{"no package", testBundle(map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.channels.v1: stable\n"}), Options{}, ErrNoPackage, `metadata/annotations.yaml: no package in annotations`},
		{"gvk dependency not an object", testBundle(map[string]string{"metadata/dependencies.yaml": "dependencies:\n- type: olm.gvk\n  value: etcd\n"}), Options{}, ErrInvalidProperty, `metadata/dependencies.yaml: invalid property: parse property[0] of type "olm.gvk"`},
		{"gvk property not an object", testBundle(map[string]string{"metadata/properties.yaml": "properties:\n- type: olm.gvk\n  value: 1\n"}), Options{}, ErrInvalidProperty, `metadata/properties.yaml: invalid property: parse property[0] of type "olm.gvk"`},
		{"template fails", testBundle(nil), Options{ImageRefTemplate: template.Must(template.New("").Parse("{{.Nope}}"))}, ErrImageTemplate, `image reference template failed`},
		{"relatedImages of the wrong type", testBundle(map[string]string{"manifests/csv.yaml": csvWith("  relatedImages:\n  - name: op", "  relatedImages:\n  - name: [op]")}), Options{}, ErrInvalidCSV, `spec.relatedImages: json: cannot unmarshal array`},
		{"container image of the wrong type", testBundle(map[string]string{"manifests/csv.yaml": csvWith("image: quay.io/example/init:1", "image: 7")}), Options{}, ErrInvalidCSV, `spec.install: json: cannot unmarshal number`},
		{"bad YAML separator", testBundle(map[string]string{"manifests/csv.yaml": testCSV + "--- !!map\n"}), Options{}, ErrNoCSV, `no ClusterServiceVersion`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Render(tc.fsys, "b", tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.rule) {
				t.Errorf("error %v is not %v", err, tc.rule)
			}
			var be *Error
			if !errors.As(err, &be) || be.Dir != "b" {
				t.Errorf("error %v is not a *bundle.Error for dir b", err)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error\n  %v\ndoes not contain\n  %s", err, tc.contains)
			}
		})
	}
}

// testBundleOnly is a bundle with the given manifests and the test
// annotations.
func testBundleOnly(manifests map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{"metadata/annotations.yaml": {Data: []byte(testAnnotations)}}
	for k, v := range manifests {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

func TestIsBundleDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fsys fstest.MapFS
		want bool
	}{
		{"both", fstest.MapFS{"manifests/a": {}, "metadata/b": {}}, true},
		{"no metadata", fstest.MapFS{"manifests/a": {}}, false},
		{"metadata is a file", fstest.MapFS{"manifests/a": {}, "metadata": {}}, false},
		{"catalog", fstest.MapFS{"foo/catalog.json": {}}, false},
	}
	for _, tc := range tests {
		if got := IsBundleDir(tc.fsys); got != tc.want {
			t.Errorf("%s: IsBundleDir = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestErrorAndWarningFormat(t *testing.T) {
	t.Parallel()
	cause := errors.New("boom")
	e := &Error{Dir: "d", File: "manifests/x.yaml", Rule: ErrInvalidCSV, Detail: "spec", Err: cause}
	if got, want := e.Error(), `bundle "d": manifests/x.yaml: invalid ClusterServiceVersion: spec: boom`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, cause) || !errors.Is(e, ErrInvalidCSV) {
		t.Error("errors.Is does not see the rule and the cause")
	}
	w := Warning{Dir: "d", Message: "m"}
	if got := w.String(); got != `bundle "d": m` {
		t.Errorf("String() = %q", got)
	}
}
