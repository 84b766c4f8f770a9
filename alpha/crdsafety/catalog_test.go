package crdsafety

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/internal/testutil"
)

func objectProperty(t testing.TB, manifest []byte) property.Property {
	t.Helper()
	v, err := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString(manifest)})
	if err != nil {
		t.Fatal(err)
	}
	return property.Property{Type: property.TypeBundleObject, Value: v}
}

func crdJSON(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) []byte {
	t.Helper()
	js, err := json.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

const csvYAML = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: cron.v1.0.0
spec:
  customresourcedefinitions:
    owned:
    - kind: CustomResourceDefinition
      name: crontabs.stable.example.com
`

func TestParseManifest(t *testing.T) {
	t.Parallel()
	crdYAML := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: crontabs.stable.example.com\nspec:\n  group: stable.example.com\n"
	for _, tc := range []struct {
		name, manifest string
		ok             bool
		err            string
		crdName        string
	}{
		{name: "YAML CRD", manifest: crdYAML, ok: true, crdName: "crontabs.stable.example.com"},
		{name: "JSON CRD, spaced", manifest: ` {"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1beta1", "metadata": {"name": "a.b"}}`, ok: true, crdName: "a.b"},
		{name: "a CSV that names a CRD", manifest: csvYAML},
		{name: "a service", manifest: `{"kind":"Service","metadata":{"name":"CustomResourceDefinition"}}`},
		{name: "a CRD without a name", manifest: `{"kind":"CustomResourceDefinition","metadata":{}}`, ok: true, err: "without metadata.name"},
		// Read when compared.
		{name: "broken JSON", manifest: `{"kind":"CustomResourceDefinition","metadata":{"name":"a.b"},`, ok: true, crdName: "a.b"},
		{name: "broken YAML", manifest: "kind: CustomResourceDefinition\n\tname: x", err: "yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok, err := ParseManifest([]byte(tc.manifest))
			if ok != tc.ok || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("ok %v err %v, want ok %v err %q", ok, err, tc.ok, tc.err)
			}
			if c.Name != tc.crdName {
				t.Errorf("name %q, want %q", c.Name, tc.crdName)
			}
		})
	}
	// The same CRD as YAML and as indented JSON compare equal.
	a, _, _ := ParseManifest([]byte(crdYAML))
	js, _ := property.ManifestJSON([]byte(crdYAML))
	var indented bytes.Buffer
	if err := json.Indent(&indented, js, " ", "  "); err != nil {
		t.Fatal(err)
	}
	b, ok, err := ParseManifest(indented.Bytes())
	if !ok || err != nil || b.Name != a.Name || a.Digest == b.Digest {
		t.Fatalf("indented: %+v %v %v", b, ok, err)
	}
	if cs := compareCRDs(t, newChecker(t), []CRD{a}, []CRD{b}); len(cs) != 0 {
		t.Errorf("the same CRD written two ways: %v", cs)
	}
}

func TestReadBundle(t *testing.T) {
	t.Parallel()
	b, err := ReadBundle([]property.Property{
		{Type: property.TypePackage, Value: json.RawMessage(`{"packageName":"cron","version":"1.0.0"}`)},
		objectProperty(t, []byte(csvYAML)),
		objectProperty(t, crdJSON(t, oldCron())),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Objects || len(b.CRDs) != 1 || b.CRDs[0].Name != "crontabs.stable.example.com" || b.CRDs[0].APIVersion != APIVersionV1 {
		t.Errorf("got %+v", b)
	}
	b, err = ReadBundle([]property.Property{{Type: property.TypeCSVMetadata, Value: json.RawMessage(`{}`)}})
	if err != nil || b.Objects {
		t.Errorf("a bundle with only olm.csv.metadata: %+v %v", b, err)
	}
	_, err = ReadBundle([]property.Property{{Type: property.TypeBundleObject, Value: json.RawMessage(`{"data":"!!"}`)}})
	if err == nil || !strings.Contains(err.Error(), "properties[0] (olm.bundle.object)") {
		t.Errorf("bad base64: %v", err)
	}
}

// writeCatalog writes a catalog of package cron with bundles v1, v2, v3
// (v2 replaces v1, v3 replaces v2): v1 and v2 carry the given CRDs as
// objects, v3 only olm.csv.metadata.
func writeCatalog(t testing.TB, v1, v2 *apiextensionsv1.CustomResourceDefinition) string {
	t.Helper()
	blobs := []any{
		map[string]any{"schema": "olm.package", "name": "cron", "defaultChannel": "stable"},
		map[string]any{"schema": "olm.channel", "package": "cron", "name": "stable", "entries": []any{
			map[string]any{"name": "cron.v1"},
			map[string]any{"name": "cron.v2", "replaces": "cron.v1"},
			map[string]any{"name": "cron.v3", "replaces": "cron.v2"},
		}},
	}
	for i, crd := range []*apiextensionsv1.CustomResourceDefinition{v1, v2, nil} {
		v := []string{"1.0.0", "2.0.0", "3.0.0"}[i]
		props := []property.Property{{Type: property.TypePackage, Value: json.RawMessage(`{"packageName":"cron","version":"` + v + `"}`)}}
		if crd != nil {
			props = append(props, objectProperty(t, []byte(csvYAML)), objectProperty(t, crdJSON(t, crd)))
		} else {
			props = append(props, property.Property{Type: property.TypeCSVMetadata, Value: json.RawMessage(`{"displayName":"Cron"}`)})
		}
		blobs = append(blobs, map[string]any{"schema": "olm.bundle", "package": "cron", "name": "cron.v" + v[:1],
			"image": "example.com/cron:v" + v, "properties": props})
	}
	return testutil.WriteFBC(t, blobs...)
}

func TestLoadIndexCompare(t *testing.T) {
	t.Parallel()
	v2 := oldCron()
	editSpecs(v2, func(s *apiextensionsv1.JSONSchemaProps) {
		setField(s, "enum", func(p *apiextensionsv1.JSONSchemaProps) { p.Enum = enums("a") })
	})
	dir := writeCatalog(t, oldCron(), v2)
	ix, err := LoadIndex(context.Background(), os.DirFS(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 3 || ix.Manifests() != 2 {
		t.Errorf("%d bundles, %d manifests; want 3, 2", ix.Len(), ix.Manifests())
	}
	some, err := LoadIndex(context.Background(), os.DirFS(dir), func(pkg, name string) bool { return pkg == "cron" && name == "cron.v2" })
	if _, ok := some.Bundle("cron", "cron.v2"); err != nil || some.Len() != 1 || !ok {
		t.Errorf("kept %d bundles, %v", some.Len(), err)
	}
	c := newChecker(t)

	res := compareIndex(t, ix, c, "cron", "cron.v1", "cron.v2")
	if res.Unknown != "" || len(res.Changes) != 2 {
		t.Fatalf("v1 -> v2: %+v", res)
	}
	if v0, v1 := res.Refusals(); v0 != IfResourcesBreak || v1 != Refuses || !res.Refused() {
		t.Errorf("refusals %q %q", v0, v1)
	}
	if got, want := res.Summary(), "2 incompatible CRD changes: OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}

	res = compareIndex(t, ix, c, "cron", "cron.v2", "cron.v3")
	if !strings.Contains(res.Unknown, "bundle cron.v3 carries no objects") || res.Summary() == "" {
		t.Errorf("v2 -> v3: %+v", res)
	}
	res = compareIndex(t, ix, c, "cron", "cron.v0", "cron.v1")
	if !strings.Contains(res.Unknown, "the catalog has no bundle cron.v0") {
		t.Errorf("v0 -> v1: %+v", res)
	}
	if res := compareIndex(t, ix, c, "cron", "cron.v1", "cron.v1"); res.Unknown != "" || len(res.Changes) != 0 || res.Summary() != "" {
		t.Errorf("v1 -> v1: %+v", res)
	}
}

func TestLoadIndexErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := `{"schema":"olm.bundle","package":"p","name":"p.v1","properties":[{"type":"olm.bundle.object","value":{"data":"%%%"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadIndex(context.Background(), os.DirFS(dir), nil)
	if err == nil || !strings.Contains(err.Error(), "c.json:1:1") || !strings.Contains(err.Error(), `bundle "p.v1"`) {
		t.Errorf("got %v", err)
	}
}

func TestCompareEdgeCases(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	for _, tc := range []struct {
		name  string
		old   func() *apiextensionsv1.CustomResourceDefinition
		new   func() *apiextensionsv1.CustomResourceDefinition
		want  []string
		never []string
	}{
		{
			name: "kind changed",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				crd.Spec.Names.Kind = "CronTable"
				return crd
			},
			want: []string{`CRD crontabs.stable.example.com: kind: kind changed : "CronTab" -> "CronTable" (the API server refuses it: the kind of an established CRD is immutable) (OLM v0 and v1 refuse it)`},
		},
		{
			name: "a served version no longer served",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				crd.Spec.Versions[0].Served = false
				return crd
			},
			want: []string{"CRD crontabs.stable.example.com v1: servedVersionRemoval: version v1 is no longer served: clients that use it break (neither OLM refuses it) (neither OLM refuses it)"},
		},
		{
			name: "a version that was only served removed: not a stored version",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				crd.Spec.Versions = crd.Spec.Versions[1:]
				return crd
			},
			want:  []string{"CRD crontabs.stable.example.com v1: servedVersionRemoval"},
			never: []string{"storedVersionRemoval"},
		},
		{
			name: "versions without schema",
			old: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				crd.Spec.Versions[0].Schema = nil
				return crd
			},
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := oldCron()
				crd.Spec.Versions[1].Schema = nil
				return crd
			},
			want: []string{"CRD crontabs.stable.example.com v2 ^: existingFieldRemoval: removed field (OLM v1 refuses it)"},
		},
		{
			name: "the new CRD converts through a webhook: OLM v0 only warns about resources",
			old:  oldCron,
			new: func() *apiextensionsv1.CustomResourceDefinition {
				crd := fooBarBaz(false, true)
				crd.Spec.Versions = oldCron().Spec.Versions
				editSpecs(crd, func(s *apiextensionsv1.JSONSchemaProps) { s.Required = append(s.Required, "required") })
				return crd
			},
			want:  []string{"CRD crontabs.stable.example.com v2 ^.spec: required: new required fields: [required] (OLM v1 refuses it)"},
			never: []string{"OLM v0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := report(compareCRDs(t, c, []CRD{toCRD(t, tc.old())}, []CRD{toCRD(t, tc.new())}))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("report lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.never {
				if strings.Contains(got, w) {
					t.Errorf("report has %q:\n%s", w, got)
				}
			}
		})
	}

	// Not comparable: a v1beta1 CRD, and a new CRD that cannot be read.
	old := toCRD(t, oldCron())
	beta := old
	beta.APIVersion, beta.Digest = APIVersionV1beta1, Digest{1}
	if got := report(compareCRDs(t, c, []CRD{old}, []CRD{beta})); !strings.Contains(got, "apiVersion: not compared: a apiextensions.k8s.io/v1beta1 CRD (apiextensions.k8s.io/v1 -> apiextensions.k8s.io/v1beta1)") {
		t.Errorf("v1beta1: %s", got)
	}
	broken := old
	broken.JSON, broken.Digest = []byte(`{"kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},"spec":{"versions":"v1"}}`), Digest{2}
	if got := report(compareCRDs(t, c, []CRD{old}, []CRD{broken})); !strings.Contains(got, "invalid: the new CRD cannot be read") || !strings.Contains(got, "OLM v0 and v1 refuse it") {
		t.Errorf("broken: %s", got)
	}
	// Only CRDs of the same name are compared.
	other := toCRD(t, gateway(false))
	if got := compareCRDs(t, c, []CRD{old}, []CRD{other}); len(got) != 0 {
		t.Errorf("different CRDs compared: %v", got)
	}
}

// TestConciseUnhandled: crdify's unhandled message (go-cmp's diff) worded
// as operator-controller v1.11.0 words it; its own cases
// (unhandled_message_test.go) restated, then go-cmp's diffs as go-cmp
// writes them.
func TestConciseUnhandled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		// operator-controller's cases.
		{"some other error", "some other error"},
		{"unhandled changes found :\n- Format: \"\"\n+ Format: \"email\"\n", `unhandled changes found (Format "" -> "email")`},
		{"unhandled changes found :\n- Format: \"\"\n+ Format: \"email\"\n- Default: nil\n+ Default: \"value\"\n- Title: \"\"\n+ Title: \"Widget\"\n- Description: \"old\"\n+ Description: \"new\"\n",
			`unhandled changes found (Format "" -> "email"; Default nil -> "value"; Title "" -> "Widget"; Description "old" -> "new")`},
		{"unhandled changes found :\n- Default: &v1.JSONSchemaProps{}\n+ Default: &v1.JSONSchemaProps{Type: \"string\"}\n",
			"unhandled changes found (Default <complex value> -> <complex value> (changed))"},
		// No changed line: the head alone.
		{"unhandled changes found", "unhandled changes found"},
		// A value on one side only; "v1." taken out.
		{"unhandled changes found :\n+\tXMapType: &\"atomic\",\n-\tExample: &v1.JSON{Raw: []byte(\"1\")},\n",
			`unhandled changes found (XMapType <empty> -> &"atomic"; Example &JSON{Raw: []byte("1")} -> <empty>)`},
	} {
		if got := conciseUnhandled(tc.raw); got != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.raw, got, tc.want)
		}
	}
	// go-cmp writes a normal or a non-breaking space after the sign, as it
	// pleases; lines inside a field are read too, by their own names.
	for _, sp := range []string{" ", "\u00a0"} {
		ctx := sp + sp // a context line's sign column and space
		msg := "unhandled changes found :\n" + ctx + "&v1.JSONSchemaProps{\n" + ctx + "\t... // 5 identical fields\n-" + sp + "\tFormat: \"\",\n+" + sp + "\tFormat: \"email\",\n" +
			ctx + "\tOneOf: []v1.JSONSchemaProps{\n" + ctx + "\t\t{\n-" + sp + "\t\t\tRequired: []string{\"a\"},\n" + ctx + "\t\t},\n" + ctx + "\t},\n-" + sp + "\tXMapType: nil,\n+" + sp + "\tXMapType: &\"atomic\",\n" + ctx + "}\n"
		want := `unhandled changes found (Format "" -> "email"; Required []string{"a"} -> <empty>; XMapType nil -> &"atomic")`
		if got := conciseUnhandled(msg); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
		// OLM v0's verdict reads the fields of JSONSchemaProps: the
		// OneOf, not the Required inside it.
		if !tightens("unhandled", msg) {
			t.Error("a oneOf change can fail validation")
		}
	}
	titles := "unhandled changes found :\n-\tTitle: \"\",\n+\tTitle: \"x\",\n\tXValidations: v1.ValidationRules{\n\t\t{\n-\t\t\tRule: \"a\",\n+\t\t\tRule: \"b\",\n\t\t},\n\t},\n"
	if tightens("unhandled", titles) {
		t.Error("titles and CEL rules fail no OpenAPI validation")
	}
	if !tightens("unhandled", titles+"-\tFormat: \"\",\n+\tFormat: \"email\",\n") {
		t.Error("a format can fail validation")
	}
}

// TestOCMessage: the messages of other checks are crdify's, but for what
// crdify writes differently from one run to the next.
func TestOCMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ check, msg, want string }{
		{"required", "new required fields: [size ready]", "new required fields: [ready size]"},
		{"type", `type changed : "string" -> ""`, `type changed : "string" -> ""`},
		{"oneOf", "allowed oneOf schemas removed: [&JSONSchemaProps{Properties:map[string]JSONSchemaProps{a: {  <nil>  string   nil <nil> false 0xc000a1b2c8 false <nil>}},Pattern:0x12,}]",
			"allowed oneOf schemas removed: [&JSONSchemaProps{Properties:map[string]JSONSchemaProps{a: {  <nil>  string   nil <nil> false 0x0 false <nil>}},Pattern:0x12,}]"},
	} {
		if got := ocMessage(tc.check, tc.msg); got != tc.want {
			t.Errorf("%s %q:\ngot  %q\nwant %q", tc.check, tc.msg, got, tc.want)
		}
	}
}

// csvConverting is a CSV (YAML) whose conversion webhook converts the
// given CRDs, with an admission webhook that names another CRD's group.
func csvConverting(crds ...string) []byte {
	var b strings.Builder
	b.WriteString(csvYAML + "  webhookdefinitions:\n  - type: ValidatingAdmissionWebhook\n    generateName: vcrontab.example.com\n    deploymentName: cron\n    conversionCRDs: [other.stable.example.com]\n")
	if len(crds) > 0 {
		b.WriteString("  - type: ConversionWebhook\n    generateName: ccrontab.example.com\n    deploymentName: cron\n    containerPort: 443\n    admissionReviewVersions: [v1]\n    conversionCRDs:\n")
		for _, c := range crds {
			b.WriteString("    - " + c + "\n")
		}
	}
	return []byte(b.String())
}

// TestReadBundleConversionWebhook: the CRDs that the bundle's CSV
// converts through a webhook (spec.webhookdefinitions of type
// ConversionWebhook), which OLM v1's renderer gives a webhook conversion.
func TestReadBundleConversionWebhook(t *testing.T) {
	t.Parallel()
	other := oldCron()
	other.Name = "other.stable.example.com"
	for _, tc := range []struct {
		name string
		csvs [][]byte
		want map[string]bool
	}{
		{"no CSV", nil, map[string]bool{}},
		{"a CSV without conversion webhooks", [][]byte{csvConverting()}, map[string]bool{}},
		{"a CSV converting crontabs (YAML)", [][]byte{csvConverting("crontabs.stable.example.com")}, map[string]bool{"crontabs.stable.example.com": true}},
		{"a CSV converting crontabs (JSON)", [][]byte{yamlToJSON(t, csvConverting("crontabs.stable.example.com"))}, map[string]bool{"crontabs.stable.example.com": true}},
		{"the last of two CSVs", [][]byte{csvConverting("crontabs.stable.example.com"), csvConverting()}, map[string]bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := []property.Property{objectProperty(t, crdJSON(t, oldCron())), objectProperty(t, crdJSON(t, other))}
			for _, c := range tc.csvs {
				props = append(props, objectProperty(t, c))
			}
			b, err := ReadBundle(props)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range b.CRDs {
				if c.ConversionWebhook != tc.want[c.Name] {
					t.Errorf("%s: ConversionWebhook %v, want %v", c.Name, c.ConversionWebhook, tc.want[c.Name])
				}
			}
		})
	}
}

func yamlToJSON(t testing.TB, y []byte) []byte {
	t.Helper()
	js, err := property.ManifestJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestCSVConversionWebhook: a new version v2 changes a field's type; the
// CRD's manifest declares no conversion, the new bundle's CSV declares a
// conversion webhook for it. operator-controller's renderer applies the
// CRD with a webhook conversion, and its preflight then does not compare
// served versions: OLM v1 allows the update (as operator-controller
// v1.11.0 does on the same bundles). Without the CSV's webhook, it
// refuses it. OLM v0 applies the manifest as it is, whose schema change
// of v1 it refuses if a resource breaks it, with or without the CSV's
// webhook (only the manifest's own webhook makes that a warning).
func TestCSVConversionWebhook(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	newCRD := func(v1Max bool, manifestWebhook bool) *apiextensionsv1.CustomResourceDefinition {
		crd := fooBarBaz(false, manifestWebhook)
		v2 := crd.Spec.Versions[0].DeepCopy()
		v2.Name, v2.Storage = "v2", false
		spec := v2.Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["foobarbaz"] = integer()
		v2.Schema.OpenAPIV3Schema.Properties["spec"] = spec
		crd.Spec.Versions = append(crd.Spec.Versions, *v2)
		if v1Max {
			s := specOf(crd, 0)
			setField(s, "foobarbaz", func(p *apiextensionsv1.JSONSchemaProps) { p.MaxLength = ptrInt64(3) })
			setSpec(crd, 0, s)
		}
		return crd
	}
	bundle := func(crd *apiextensionsv1.CustomResourceDefinition, csv []byte) Bundle {
		t.Helper()
		props := []property.Property{objectProperty(t, crdJSON(t, crd))}
		if csv != nil {
			props = append(props, objectProperty(t, csv))
		}
		b, err := ReadBundle(props)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const name = "crontabs.stable.example.com"
	for _, tc := range []struct {
		name            string
		v1Max, manifest bool
		csv             []byte
		v0, v1          Verdict
		checks          []string
	}{
		{"v2 changes a type, no webhook", false, false, csvConverting(), "", Refuses, []string{"enum", "type"}},
		{"v2 changes a type, the CSV converts", false, false, csvConverting(name), "", "", nil},
		{"v2 changes a type, the manifest converts", false, true, csvConverting(), "", "", nil},
		{"v1 tightened, the CSV converts", true, false, csvConverting(name), IfResourcesBreak, Refuses, []string{"maxLength"}},
		{"v1 tightened, the manifest converts", true, true, csvConverting(), "", Refuses, []string{"maxLength"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndex()
			ix.Add("cron", "v1", bundle(fooBarBaz(false, false), csvConverting()))
			ix.Add("cron", "v2", bundle(newCRD(tc.v1Max, tc.manifest), tc.csv))
			r := compareIndex(t, ix, c, "cron", "v1", "v2")
			if v0, v1 := r.Refusals(); v0 != tc.v0 || v1 != tc.v1 || !slices.Equal(checks(r.Changes), tc.checks) {
				t.Errorf("refusals %q %q, checks %v; want %q %q %v:\n%s", v0, v1, checks(r.Changes), tc.v0, tc.v1, tc.checks, report(r.Changes))
			}
		})
	}
}

func ptrInt64(n int64) *int64 { return &n }
