package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/csv"
)

// Key orders of the upstream types (operator-framework/api v1alpha1 and
// operator-registry property.CSVMetadata), used to spot-check the encoding.
var (
	csvMetadataKeys    = []string{"annotations", "apiServiceDefinitions", "crdDescriptions", "description", "displayName", "installModes", "keywords", "labels", "links", "maintainers", "maturity", "minKubeVersion", "nativeAPIs", "provider"}
	crdDescriptionKeys = []string{"name", "version", "kind", "displayName", "description", "resources", "statusDescriptors", "specDescriptors", "actionDescriptors"}
	descriptorKeys     = []string{"path", "displayName", "description", "x-descriptors", "value"}
	resourceKeys       = []string{"name", "kind", "version"}
	installModeKeys    = []string{"type", "supported"}
	maintainerKeys     = []string{"name", "email"}
	linkKeys           = []string{"name", "url"}
	ownedRequiredKeys  = []string{"owned", "required"}
)

// TestMigrateGolden migrates each real bundle to olm.csv.metadata and checks
// the result against upstream's semantics and encoding.
func TestMigrateGolden(t *testing.T) {
	t.Parallel()
	for _, dir := range goldenBundles(t) {
		// The three largest bundles (1 to 2 MB) in the corpus build only.
		if !testutil.Corpus && (dir == "redkey-operator-0.2.0" || dir == "3scale-community-operator-0.11.0" || dir == "external-secrets-operator-0.11.0") {
			continue
		}
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			b := renderGolden(t, dir)
			postProcess(b)
			before := slices.Clone(b.Properties)
			if err := MigrateBundleObjectToCSVMetadata(b); err != nil {
				t.Fatal(err)
			}

			// Other properties keep their order; bundle objects are gone;
			// one olm.csv.metadata is last.
			var kept []property.Property
			for _, p := range before {
				if p.Type != property.TypeBundleObject {
					kept = append(kept, p)
				}
			}
			n := len(b.Properties)
			if n != len(kept)+1 {
				t.Fatalf("%d properties after migration, want %d", n, len(kept)+1)
			}
			for i := range kept {
				if b.Properties[i].Type != kept[i].Type || !bytes.Equal(b.Properties[i].Value, kept[i].Value) {
					t.Errorf("property %d changed: %v", i, b.Properties[i])
				}
			}
			last := b.Properties[n-1]
			if last.Type != property.TypeCSVMetadata {
				t.Fatalf("last property is %s", last.Type)
			}

			// The value decodes into CSVMetadata and re-encodes to the same
			// bytes.
			var m property.CSVMetadata
			if err := json.Unmarshal(last.Value, &m); err != nil {
				t.Fatal(err)
			}
			again, err := m.MarshalValue()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, last.Value) {
				t.Errorf("re-encoded value differs:\n%s\n%s", again, last.Value)
			}

			// Content matches the CSV.
			c, err := csv.Parse([]byte(b.CsvJSON))
			if err != nil {
				t.Fatal(err)
			}
			if m.DisplayName != c.Spec.DisplayName || m.Description != c.Spec.Description || m.Maturity != c.Spec.Maturity ||
				m.MinKubeVersion != c.Spec.MinKubeVersion || m.Provider != c.Spec.Provider || len(m.Annotations) != len(c.Annotations) ||
				len(m.CustomResourceDefinitions.Owned) != len(c.Spec.CustomResourceDefinitions.Owned) || !slices.Equal(m.Keywords, c.Spec.Keywords) {
				t.Errorf("metadata does not match the CSV: %+v", m)
			}
			var generic map[string]any
			if err := json.Unmarshal([]byte(b.CsvJSON), &generic); err != nil {
				t.Fatal(err)
			}
			meta := generic["metadata"].(map[string]any)
			if ann, ok := meta["annotations"].(map[string]any); ok {
				for k, v := range ann {
					if m.Annotations[k] != v {
						t.Errorf("annotation %s = %q, want %q", k, m.Annotations[k], v)
					}
				}
			}

			// Like upstream's encoder, '<', '>' and '&' are written as is
			// (the descriptors' raw values aside, none of these bundles has
			// an escaped one).
			for _, esc := range []string{`u003c`, `u003e`, `u0026`} {
				if hasEscape(last.Value, esc) {
					t.Errorf("value contains the escape \\%s", esc)
				}
			}
			if strings.Contains(b.CsvJSON, `\u003c`) && !bytes.Contains(last.Value, []byte("<")) {
				t.Error("an escaped '<' of the CSV is not written as '<'")
			}

			// Key order follows the upstream struct field order.
			checkKeyOrder(t, last.Value)
		})
	}
}

// hasEscape reports whether the JSON text holds the escape sequence
// "\\"+seq, an odd number of backslashes before seq.
func hasEscape(text []byte, seq string) bool {
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(seq))
		if j < 0 {
			return false
		}
		k := i + j
		n := 0
		for k-n-1 >= 0 && text[k-n-1] == '\\' {
			n++
		}
		if n%2 == 1 {
			return true
		}
		i = k + len(seq)
	}
}

// checkKeyOrder walks the encoded CSVMetadata and checks the key order of
// each object against the upstream struct.
func checkKeyOrder(t *testing.T, value []byte) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(value, &top); err != nil {
		t.Fatal(err)
	}
	keys := objectKeys(t, value)
	assertOrder(t, "csv metadata", keys, csvMetadataKeys)
	for _, always := range []string{"apiServiceDefinitions", "crdDescriptions", "provider"} {
		if !slices.Contains(keys, always) {
			t.Errorf("%s missing: upstream always writes it", always)
		}
	}
	if !strings.HasPrefix(string(value), `{"annotations":{`) && !strings.HasPrefix(string(value), `{"apiServiceDefinitions":`) {
		t.Errorf("value starts %.40s", value)
	}
	for _, section := range []string{"apiServiceDefinitions", "crdDescriptions"} {
		raw := top[section]
		assertOrder(t, section, objectKeys(t, raw), ownedRequiredKeys)
		var lists map[string][]json.RawMessage
		if err := json.Unmarshal(raw, &lists); err != nil {
			t.Fatal(err)
		}
		for _, list := range lists {
			for _, d := range list {
				if section == "crdDescriptions" {
					assertOrder(t, "crd description", objectKeys(t, d), crdDescriptionKeys)
				}
				var fields map[string]json.RawMessage
				if err := json.Unmarshal(d, &fields); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"statusDescriptors", "specDescriptors", "actionDescriptors"} {
					var descs []json.RawMessage
					if err := json.Unmarshal(fields[k], &descs); fields[k] != nil && err != nil {
						t.Fatal(err)
					}
					for _, desc := range descs {
						assertOrder(t, k, objectKeys(t, desc), descriptorKeys)
					}
				}
				var res []json.RawMessage
				if fields["resources"] != nil {
					if err := json.Unmarshal(fields["resources"], &res); err != nil {
						t.Fatal(err)
					}
				}
				for _, r := range res {
					assertOrder(t, "resource", objectKeys(t, r), resourceKeys)
				}
			}
		}
	}
	for field, order := range map[string][]string{"installModes": installModeKeys, "maintainers": maintainerKeys, "links": linkKeys} {
		var list []json.RawMessage
		if top[field] != nil {
			if err := json.Unmarshal(top[field], &list); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range list {
			assertOrder(t, field, objectKeys(t, e), order)
		}
	}
	assertOrder(t, "provider", objectKeys(t, top["provider"]), linkKeys)
}

// objectKeys lists the keys of a JSON object in document order.
func objectKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %.40s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
	}
	return keys
}

// assertOrder checks that keys appear in the order of want, and only keys
// of want.
func assertOrder(t *testing.T, what string, keys, want []string) {
	t.Helper()
	last := -1
	for _, k := range keys {
		i := slices.Index(want, k)
		if i < 0 {
			t.Errorf("%s: unexpected key %q", what, k)
			continue
		}
		if i <= last {
			t.Errorf("%s: key %q out of order in %v", what, k, keys)
		}
		last = i
	}
}

func TestMigrateSemantics(t *testing.T) {
	t.Parallel()
	const csvJSON = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"a.v1"},"spec":{"version":"1.0.0","displayName":"A \u003c B"}}`
	obj := property.Property{Type: property.TypeBundleObject, Value: json.RawMessage(`{"data":"e30="}`)}
	pkg := property.Property{Type: property.TypePackage, Value: json.RawMessage(`{"packageName":"a","version":"1.0.0"}`)}
	meta := property.Property{Type: property.TypeCSVMetadata, Value: json.RawMessage(`{"displayName":"kept"}`)}
	tests := []struct {
		name    string
		in      declcfg.Bundle
		want    []property.Property
		wantErr bool
	}{
		{
			name: "converts",
			in:   declcfg.Bundle{Name: "a.v1", Image: "img", CsvJSON: csvJSON, Properties: []property.Property{obj, pkg, obj}},
			want: []property.Property{pkg, {Type: property.TypeCSVMetadata, Value: json.RawMessage(`{"apiServiceDefinitions":{},"crdDescriptions":{},"displayName":"A < B","provider":{}}`)}},
		},
		{
			name: "no image: unchanged",
			in:   declcfg.Bundle{Name: "a.v1", CsvJSON: csvJSON, Properties: []property.Property{obj, pkg}},
			want: []property.Property{obj, pkg},
		},
		{
			name: "no CSV: unchanged",
			in:   declcfg.Bundle{Name: "a.v1", Image: "img", Properties: []property.Property{obj, pkg}},
			want: []property.Property{obj, pkg},
		},
		{
			name: "already has csv metadata: unchanged",
			in:   declcfg.Bundle{Name: "a.v1", Image: "img", CsvJSON: csvJSON, Properties: []property.Property{obj, meta, pkg}},
			want: []property.Property{obj, meta, pkg},
		},
		{
			name:    "CSV version not semver: error, unchanged",
			in:      declcfg.Bundle{Name: "a.v1", Image: "img", CsvJSON: strings.Replace(csvJSON, `"1.0.0"`, `"one"`, 1), Properties: []property.Property{obj, pkg}},
			want:    []property.Property{obj, pkg},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.in
			err := MigrateBundleObjectToCSVMetadata(&b)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), `bundle "a.v1"`) {
				t.Errorf("error %v does not name the bundle", err)
			}
			if len(b.Properties) != len(tc.want) {
				t.Fatalf("properties = %v, want %v", b.Properties, tc.want)
			}
			for i := range tc.want {
				if b.Properties[i].Type != tc.want[i].Type || string(b.Properties[i].Value) != string(tc.want[i].Value) {
					t.Errorf("properties[%d] = %s %s, want %s %s", i, b.Properties[i].Type, b.Properties[i].Value, tc.want[i].Type, tc.want[i].Value)
				}
			}
		})
	}
}
