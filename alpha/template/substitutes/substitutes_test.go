package substitutes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// The tests below build templates and bundle images from FBC text: images
// maps a reference to the olm.bundle blob its rendering yields.

type obj = map[string]any

func pkgBlob(name, def string) obj {
	return obj{"schema": "olm.package", "name": name, "defaultChannel": def}
}

func chanBlob(pkg, name string, entries ...obj) obj {
	es := make([]any, len(entries))
	for i, e := range entries {
		es[i] = e
	}
	return obj{"schema": "olm.channel", "package": pkg, "name": name, "entries": es}
}

func entry(name string, kv ...any) obj {
	e := obj{"name": name}
	for i := 0; i < len(kv); i += 2 {
		e[kv[i].(string)] = kv[i+1]
	}
	return e
}

func bundleBlob(pkg, name, version, release string, extra ...obj) obj {
	v := obj{"packageName": pkg, "version": version}
	if release != "" {
		v["release"] = release
	}
	props := []any{obj{"type": "olm.package", "value": v}}
	for _, p := range extra {
		props = append(props, p)
	}
	return obj{"schema": "olm.bundle", "package": pkg, "name": name, "image": "quay.io/example/" + name, "properties": props}
}

func sub(name, base string) obj { return obj{"name": name, "base": base} }

func tmpl(t *testing.T, entries []obj, subs ...obj) string {
	t.Helper()
	if subs == nil {
		subs = []obj{}
	}
	b, err := json.Marshal(obj{"schema": Schema, "entries": entries, "substitutions": subs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fooCatalog is package foo, channel stable: 1.0.0 <- 1.1.0 <- 1.2.0 (which
// also skips 1.0.0).
func fooCatalog() []obj {
	return []obj{
		pkgBlob("foo", "stable"),
		chanBlob("foo", "stable",
			entry("foo.v1.0.0"),
			entry("foo.v1.1.0", "replaces", "foo.v1.0.0", "skipRange", ">=0.9.0 <1.1.0"),
			entry("foo.v1.2.0", "replaces", "foo.v1.1.0", "skips", []any{"foo.v1.0.0"})),
		bundleBlob("foo", "foo.v1.0.0", "1.0.0", ""),
		bundleBlob("foo", "foo.v1.1.0", "1.1.0", ""),
		bundleBlob("foo", "foo.v1.2.0", "1.2.0", ""),
	}
}

// images renders references from blobs. Each rendering is counted.
type images struct {
	blobs map[string]obj
	errs  map[string]error
	delay func() time.Duration

	mu      sync.Mutex
	calls   map[string]int
	active  atomic.Int32
	maxSeen atomic.Int32
}

func newImages(blobs map[string]obj) *images {
	return &images{blobs: blobs, errs: map[string]error{}, calls: map[string]int{}}
}

func (im *images) render(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
	n := im.active.Add(1)
	defer im.active.Add(-1)
	for {
		m := im.maxSeen.Load()
		if n <= m || im.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	im.mu.Lock()
	im.calls[ref]++
	im.mu.Unlock()
	if im.delay != nil {
		select {
		case <-time.After(im.delay()):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err := im.errs[ref]; err != nil {
		return nil, err
	}
	blob, ok := im.blobs[ref]
	if !ok {
		return &declcfg.DeclarativeConfig{}, nil
	}
	js, err := json.Marshal(blob)
	if err != nil {
		return nil, err
	}
	b, err := declcfg.DecodeBundle(js)
	if err != nil {
		return nil, err
	}
	b.Image = ref
	if csv, ok := blob["csvJson"].(string); ok {
		b.CsvJSON = csv
	}
	return &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{b}}, nil
}

func render(t *testing.T, template string, im *images) (*declcfg.DeclarativeConfig, error) {
	t.Helper()
	return Render(context.Background(), strings.NewReader(template), im.render)
}

// channel returns the entries of a channel of cfg as compact JSON.
func channel(t *testing.T, cfg *declcfg.DeclarativeConfig, name string) string {
	t.Helper()
	for i := range cfg.Channels {
		if cfg.Channels[i].Name == name {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(cfg.Channels[i].Entries); err != nil {
				t.Fatal(err)
			}
			return strings.TrimSuffix(buf.String(), "\n")
		}
	}
	t.Fatalf("no channel %q", name)
	return ""
}

func bundleNames(cfg *declcfg.DeclarativeConfig) []string {
	var out []string
	for _, b := range cfg.Bundles {
		out = append(out, b.Name)
	}
	return out
}

func TestParseErrors(t *testing.T) {
	const pre = "render: unable to parse template: "
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", pre + "decoding template schema: EOF"},
		{"null", "null\n", pre + "unmarshalling template: unexpected end of JSON input"},
		{"comments", "# nothing\n\n", pre + "unmarshalling template: unexpected end of JSON input"},
		{"blank", "   ", pre + "unmarshalling template: unexpected end of JSON input"},
		{"empty first document", "---\n---\nschema: olm.template.substitutes\n", pre + "unmarshalling template: unexpected end of JSON input"},
		{"json syntax", `{"schema": "olm.template.substitutes", "entries": [,]}`, pre + `decoding template schema: json: offset 52: invalid character ',' looking for beginning of value`},
		{"json syntax, no yaml either", `{"schema": olm.template.substitutes, "x": [}`, pre + `decoding template schema: json: offset 12: invalid character 'o' looking for beginning of value`},
		{"yaml syntax", "schema: olm.template.substitutes\nentries: [\n", pre + "decoding template schema: error converting YAML to JSON: yaml: line 2: did not find expected node content"},
		{"yaml syntax after a separator", "---\nschema: olm.template.substitutes\nentries: [\n", pre + "decoding template schema: error converting YAML to JSON: yaml: line 3: did not find expected node content"},
		{"bad separator", "schema: olm.template.substitutes\n--- x\n", pre + "decoding template schema: invalid Yaml document separator: x"},
		{"list", "- a\n- b\n", pre + "unmarshalling template: json: cannot unmarshal array into Go value of type substitutes.SubstitutesTemplateData"},
		{"scalar", "hello\n", pre + "unmarshalling template: json: cannot unmarshal string into Go value of type substitutes.SubstitutesTemplateData"},
		{"schema type", "schema: 5\n", pre + "unmarshalling template: json: cannot unmarshal number into Go struct field SubstitutesTemplateData.schema of type string"},
		{"substitutions type", "schema: olm.template.substitutes\nsubstitutions: 5\n", pre + "unmarshalling template: json: cannot unmarshal number into Go struct field SubstitutesTemplateData.substitutions of type []substitutes.Substitute"},
		{"substitution name type", "schema: olm.template.substitutes\nsubstitutions:\n  - name: 5\n", pre + "unmarshalling template: json: cannot unmarshal number into Go struct field Substitute.substitutions.name of type string"},
		{"entries type", "schema: olm.template.substitutes\nentries: 5\n", pre + "unmarshalling template: json: cannot unmarshal number into Go struct field SubstitutesTemplateData.entries of type []*declcfg.Meta"},
		{"entry not an object", "schema: olm.template.substitutes\nentries: [hello]\n", pre + "unmarshalling template: entries[0]: json: cannot unmarshal string into Go value of type map[string]interface {}: every entry must be an FBC object"},
		{"null entry", "schema: olm.template.substitutes\nentries: [{schema: olm.package, name: a}, null]\n", pre + "unmarshalling template: entries[1]: an entry is null: every entry must be an FBC object"},
		{"duplicate meta keys", "schema: olm.template.substitutes\nentries: [{name: x, Name: y, schema: olm.package}]\n", pre + `unmarshalling template: entries[0]: duplicate keys for key "name": [Name name]`},
		{"meta key not a string", "schema: olm.template.substitutes\nentries: [{name: 5, schema: olm.package}]\n", pre + `unmarshalling template: entries[0]: expected value for key "name" to be a string, got %!t(float64=5): 5`},
		{"unknown schema", "schema: olm.template.basic\n", pre + `template has unknown schema ("olm.template.basic"), should be "olm.template.substitutes"`},
		{"no schema", "entries: []\n", pre + `template has unknown schema (""), should be "olm.template.substitutes"`},
		{"json null schema", `{"schema":null}`, pre + `template has unknown schema (""), should be "olm.template.substitutes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.in, newImages(nil))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"leading separator", "---\nschema: olm.template.substitutes\n"},
		{"later documents ignored", "schema: olm.template.substitutes\n---\ngarbage: [\n"},
		{"json value then garbage", `{"schema":"olm.template.substitutes"} garbage`},
		{"json read as yaml", `{"schema":"olm.template.substitutes",}`},
		{"keys in any case", "Schema: olm.template.substitutes\nENTRIES: []\nSubstitutions: []\n"},
		{"repeated key, last wins", "schema: x\nschema: olm.template.substitutes\n"},
		{"crlf", "schema: olm.template.substitutes\r\nentries: []\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := render(t, tc.in, newImages(nil))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(cfg.Items()); n != 0 {
				t.Errorf("%d blobs from an empty template", n)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	const pre = "render: unable to create declarative config from entries: "
	badObject := obj{"type": "olm.bundle.object", "value": obj{"data": 5}}
	for _, tc := range []struct {
		name    string
		entries []obj
		want    string
	}{
		{"no schema", append(fooCatalog(), obj{"name": "notes", "text": "<no schema>"}),
			pre + "object '{\"name\":\"notes\",\"text\":\"<no schema>\"}\n' is missing root schema field"},
		{"typed field", []obj{pkgBlob("foo", "stable"), {"schema": "olm.channel", "package": "foo", "name": "stable", "entries": "x"}},
			pre + `entries[1]: invalid olm.channel blob: field "entries" must be a list, found string`},
		{"bundle object", []obj{bundleBlob("foo", "foo.v1.0.0", "1.0.0", "", badObject)},
			pre + `read bundle objects: package "foo", bundle "foo.v1.0.0": parse property at index 1 as bundle object: json: cannot unmarshal number into Go struct field BundleObject.data of type []uint8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tmpl(t, tc.entries), newImages(nil))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestEntriesValidation(t *testing.T) {
	const pre = "render: entries are not valid FBC: "
	cat := fooCatalog()
	for _, tc := range []struct {
		name    string
		entries []obj
		want    string
	}{
		{"bundle in no channel", append(cat, bundleBlob("foo", "foo.v0.9.0", "0.9.0", "")),
			pre + `package "foo", bundle "foo.v0.9.0" not found in any channel entries`},
		{"bad version and no channel: upstream checks the version first", append(cat, bundleBlob("foo", "foo.v0.9.0", "0.9", "")),
			pre + `error parsing bundle "foo.v0.9.0" version "0.9": No Major.Minor.Patch elements found`},
		{"entry without a bundle, after the bundles' problems", append(append([]obj{}, cat[:4]...), chanBlob("foo", "fast", entry("foo.v1.0.0"), entry("foo.v9.0.0", "replaces", "foo.v1.0.0"))),
			pre + `no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v1.2.0 foo.v9.0.0]`},
		{"unknown package of a channel", append(cat, chanBlob("bar", "stable", entry("bar.v1.0.0"))),
			pre + `unknown package "bar" for channel "stable"`},
		{"property of the wrong type", append(cat[:4], bundleBlob("foo", "foo.v1.2.0", "1.2.0", "", obj{"type": "olm.gvk", "value": "x"})),
			pre + `parse properties for bundle "foo.v1.2.0": parse property[1] of type "olm.gvk": json: cannot unmarshal string into Go value of type property.GVK (property 1 of type "olm.gvk": the value must be an object, found a string)`},
		{"graph", []obj{pkgBlob("foo", "stable"), chanBlob("foo", "stable", entry("foo.v1.0.0"), entry("foo.v1.1.0")),
			bundleBlob("foo", "foo.v1.0.0", "1.0.0", ""), bundleBlob("foo", "foo.v1.1.0", "1.1.0", "")},
			pre + "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"stable\":\n        └── multiple channel heads found in graph: foo.v1.0.0, foo.v1.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tmpl(t, tc.entries), newImages(nil))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestSubstitutionErrors(t *testing.T) {
	const img11a = "quay.io/foo/bundle:v1.1.0-alpha"
	imgs := func() *images {
		return newImages(map[string]obj{
			img11a:                          bundleBlob("foo", "foo-v1.1.0-alpha", "1.1.0", "alpha"),
			"quay.io/foo/bundle:v1.1.0-b":   bundleBlob("foo", "foo-v1.1.0-b", "1.1.0", "b"),
			"quay.io/foo/bundle:v1.0.5":     bundleBlob("foo", "foo.v1.0.5", "1.0.5", ""),
			"quay.io/foo/bundle:v1.1.0":     bundleBlob("foo", "foo.v1.1.0", "1.1.0", ""),
			"quay.io/foo/bundle:twopkgs":    bundleBlob("foo", "foo.v1.5.0", "1.5.0", "", obj{"type": "olm.package", "value": obj{"packageName": "foo", "version": "1.5.0"}}),
			"quay.io/foo/bundle:nopkg":      {"schema": "olm.bundle", "package": "foo", "name": "foo.v1.5.0", "properties": []any{}},
			"quay.io/foo/bundle:badver":     bundleBlob("foo", "foo.v1.5", "1.5", ""),
			"quay.io/foo/bundle:badrel":     bundleBlob("foo", "foo-v1.5.0-01", "1.5.0", "01"),
			"quay.io/bar/bundle:v2.0.0":     bundleBlob("bar", "bar.v2.0.0", "2.0.0", ""),
			"quay.io/foo/bundle:v1.1.0-dup": bundleBlob("foo", "foo.v1.2.0", "1.1.0", "dup"),
		})
	}
	const pre = "render: "
	proc := func(base, name, msg string) string {
		return fmt.Sprintf("render: error processing substitution %q -> %q: %s", base, name, msg)
	}
	for _, tc := range []struct {
		name    string
		entries []obj
		subs    []obj
		fail    map[string]error
		want    string
	}{
		{"empty name", nil, []obj{{"base": "foo.v1.1.0"}}, nil, proc("foo.v1.1.0", "", "substitution name cannot be empty")},
		{"empty base", nil, []obj{{"name": img11a}}, nil, proc("", img11a, "substitution base cannot be empty")},
		{"same name and base", nil, []obj{sub("foo.v1.1.0", "foo.v1.1.0")}, nil, proc("foo.v1.1.0", "foo.v1.1.0", "substitution name and base cannot be the same")},
		{"reused base", nil, []obj{sub(img11a, "foo.v1.1.0"), sub("quay.io/foo/bundle:v1.1.0-b", "foo.v1.1.0")}, nil,
			pre + `cannot reuse the same substitution base "foo.v1.1.0"`},
		{"reused image", nil, []obj{sub(img11a, "foo.v1.1.0"), sub(img11a, "foo.v1.0.0")}, nil,
			pre + `cannot reuse the same substitution "quay.io/foo/bundle:v1.1.0-alpha" for different bases ("foo.v1.1.0" and "foo.v1.0.0")`},
		{"reused pair: the base is checked first", nil, []obj{sub(img11a, "foo.v1.1.0"), sub(img11a, "foo.v1.1.0")}, nil,
			pre + `cannot reuse the same substitution base "foo.v1.1.0"`},
		{"render fails", nil, []obj{sub("quay.io/foo/bundle:gone", "foo.v1.1.0")}, map[string]error{"quay.io/foo/bundle:gone": errors.New("manifest unknown")},
			proc("foo.v1.1.0", "quay.io/foo/bundle:gone", `failed to render bundle image reference "quay.io/foo/bundle:gone": manifest unknown`)},
		{"an earlier error wins over a later failed render", nil,
			[]obj{{"name": img11a}, sub("quay.io/foo/bundle:gone", "foo.v1.1.0")}, map[string]error{"quay.io/foo/bundle:gone": errors.New("manifest unknown")},
			proc("", img11a, "substitution base cannot be empty")},
		{"no bundles", nil, []obj{sub("quay.io/foo/bundle:empty", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:empty", `rendered bundle image reference "quay.io/foo/bundle:empty" contains no bundles`)},
		{"substitute with two olm.package", nil, []obj{sub("quay.io/foo/bundle:twopkgs", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:twopkgs", `failed to get VersionRelease for substitute bundle "quay.io/foo/bundle:twopkgs": must be exactly one property of type "olm.package"`)},
		{"substitute without olm.package", nil, []obj{sub("quay.io/foo/bundle:nopkg", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:nopkg", `failed to get VersionRelease for substitute bundle "quay.io/foo/bundle:nopkg": no "olm.package" property found for bundle "foo.v1.5.0"`)},
		{"substitute version", nil, []obj{sub("quay.io/foo/bundle:badver", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:badver", `failed to get VersionRelease for substitute bundle "quay.io/foo/bundle:badver": invalid semver version "1.5" in "olm.package" property for bundle "foo.v1.5": No Major.Minor.Patch elements found`)},
		{"substitute release", nil, []obj{sub("quay.io/foo/bundle:badrel", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:badrel", `failed to get VersionRelease for substitute bundle "quay.io/foo/bundle:badrel": invalid release "01" in "olm.package" property for bundle "foo-v1.5.0-01": invalid release "01": segment 0: Numeric PreRelease version must not contain leading zeroes "01"`)},
		{"missing base", nil, []obj{sub(img11a, "foo.v0.1.0")}, nil,
			proc("foo.v0.1.0", img11a, `base bundle "foo.v0.1.0" does not exist in catalog`)},
		{"lower version", nil, []obj{sub("quay.io/foo/bundle:v1.0.5", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:v1.0.5", `base bundle "foo.v1.1.0" is not less than substitute bundle "quay.io/foo/bundle:v1.0.5"`)},
		{"same version, no release", nil, []obj{sub("quay.io/foo/bundle:v1.1.0", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:v1.1.0", `base bundle "foo.v1.1.0" is not less than substitute bundle "quay.io/foo/bundle:v1.1.0"`)},
		{"lower release", nil, []obj{sub("quay.io/foo/bundle:v1.1.0-b", "foo.v1.1.0"), sub(img11a, "foo-v1.1.0-b")}, nil,
			proc("foo-v1.1.0-b", img11a, `base bundle "foo-v1.1.0-b" is not less than substitute bundle "quay.io/foo/bundle:v1.1.0-alpha"`)},
		{"result: other package", nil, []obj{sub("quay.io/bar/bundle:v2.0.0", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/bar/bundle:v2.0.0", `resulting config is not valid FBC: unknown package "bar" for bundle "bar.v2.0.0"`)},
		{"result: duplicate bundle", nil, []obj{sub("quay.io/foo/bundle:v1.1.0-dup", "foo.v1.1.0")}, nil,
			proc("foo.v1.1.0", "quay.io/foo/bundle:v1.1.0-dup", `resulting config is not valid FBC: invalid package "foo", channel "stable": duplicate entry "foo.v1.2.0"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := tc.entries
			if entries == nil {
				entries = fooCatalog()
			}
			im := imgs()
			for ref, err := range tc.fail {
				im.errs[ref] = err
			}
			cfg, err := render(t, tmpl(t, entries, tc.subs...), im)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
			if cfg != nil {
				t.Error("a config with the error")
			}
			if im.calls[""] != 0 {
				t.Error("rendered an empty reference")
			}
			for ref, n := range im.calls {
				if n > 1 {
					t.Errorf("%s rendered %d times", ref, n)
				}
			}
		})
	}
}

func TestRewiring(t *testing.T) {
	imgs := newImages(map[string]obj{
		"img/foo:1.1.0-1": bundleBlob("foo", "foo-v1.1.0-1", "1.1.0", "1"),
		"img/foo:1.1.0-2": bundleBlob("foo", "foo-v1.1.0-2", "1.1.0", "2"),
		"img/foo:1.0.0-1": bundleBlob("foo", "foo-v1.0.0-1", "1.0.0", "1"),
	})
	entries := []obj{
		pkgBlob("foo", "stable"),
		chanBlob("foo", "stable",
			entry("foo.v1.0.0"),
			entry("foo.v1.1.0", "replaces", "foo.v1.0.0", "skips", []any{"foo.v0.9.0"}, "skipRange", ">=0.9.0 <1.1.0"),
			entry("foo.v1.2.0", "replaces", "foo.v1.1.0", "skips", []any{"foo.v0.8.0"})),
		chanBlob("foo", "candidate",
			entry("foo.v1.1.0"),
			// replaces and skips the base: only the replaces is rewired.
			entry("foo.v1.2.0", "replaces", "foo.v1.1.0", "skips", []any{"foo.v1.1.0"})),
		chanBlob("foo", "fast",
			entry("foo.v1.1.0"),
			// skips the base twice: both go, the substitute is added once.
			entry("foo.v1.2.0", "skips", []any{"foo.v1.1.0", "foo.v0.8.0", "foo.v1.1.0"})),
		chanBlob("foo", "old", entry("foo.v1.0.0")),
		{"schema": "olm.deprecations", "package": "foo", "entries": []any{obj{"reference": obj{"schema": "olm.channel", "name": "old"}, "message": "old\n"}}},
		{"schema": "example.notes", "package": "foo", "name": "n", "text": "kept"},
		bundleBlob("foo", "foo.v1.0.0", "1.0.0", ""),
		bundleBlob("foo", "foo.v1.1.0", "1.1.0", ""),
		bundleBlob("foo", "foo.v1.2.0", "1.2.0", ""),
	}

	t.Run("one", func(t *testing.T) {
		cfg, err := render(t, tmpl(t, entries, sub("img/foo:1.1.0-1", "foo.v1.1.0")), imgs)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{
			"candidate": `[{"name":"foo.v1.1.0"},{"name":"foo.v1.2.0","replaces":"foo-v1.1.0-1","skips":["foo.v1.1.0","foo.v1.1.0"]},{"name":"foo-v1.1.0-1","skips":["foo.v1.1.0"]}]`,
			"stable": `[{"name":"foo.v1.0.0"},{"name":"foo.v1.1.0"},{"name":"foo.v1.2.0","replaces":"foo-v1.1.0-1","skips":["foo.v0.8.0","foo.v1.1.0"]},` +
				`{"name":"foo-v1.1.0-1","replaces":"foo.v1.0.0","skips":["foo.v0.9.0","foo.v1.1.0"],"skipRange":">=0.9.0 <1.1.0"}]`,
			"fast": `[{"name":"foo.v1.1.0"},{"name":"foo.v1.2.0","skips":["foo.v0.8.0","foo-v1.1.0-1"]},{"name":"foo-v1.1.0-1","skips":["foo.v1.1.0"]}]`,
			"old":  `[{"name":"foo.v1.0.0"}]`,
		} {
			if got := channel(t, cfg, name); got != want {
				t.Errorf("channel %s:\n got %s\nwant %s", name, got, want)
			}
		}
		if got := fmt.Sprint(bundleNames(cfg)); got != "[foo.v1.0.0 foo.v1.1.0 foo.v1.2.0 foo-v1.1.0-1]" {
			t.Errorf("bundles %s", got)
		}
		if cfg.Bundles[3].Image != "img/foo:1.1.0-1" {
			t.Errorf("substitute image %q", cfg.Bundles[3].Image)
		}
		if len(cfg.Deprecations) != 1 || len(cfg.Others) != 1 || cfg.Others[0].Name != "n" {
			t.Errorf("deprecations and other blobs not kept: %d, %v", len(cfg.Deprecations), cfg.Others)
		}
	})

	t.Run("chain", func(t *testing.T) {
		// The second substitution's base is the first's substitute; the
		// third substitutes for a bundle that others replace.
		cfg, err := render(t, tmpl(t, entries,
			sub("img/foo:1.1.0-1", "foo.v1.1.0"), sub("img/foo:1.1.0-2", "foo-v1.1.0-1"), sub("img/foo:1.0.0-1", "foo.v1.0.0")), imgs)
		if err != nil {
			t.Fatal(err)
		}
		want := `[{"name":"foo.v1.0.0"},{"name":"foo.v1.1.0"},{"name":"foo.v1.2.0","replaces":"foo-v1.1.0-2","skips":["foo.v0.8.0","foo.v1.1.0","foo-v1.1.0-1"]},` +
			`{"name":"foo-v1.1.0-1"},` +
			`{"name":"foo-v1.1.0-2","replaces":"foo-v1.0.0-1","skips":["foo.v0.9.0","foo.v1.1.0","foo-v1.1.0-1","foo.v1.0.0"],"skipRange":">=0.9.0 <1.1.0"},` +
			`{"name":"foo-v1.0.0-1","skips":["foo.v1.0.0"]}]`
		if got := channel(t, cfg, "stable"); got != want {
			t.Errorf("stable:\n got %s\nwant %s", got, want)
		}
		if got := channel(t, cfg, "old"); got != `[{"name":"foo.v1.0.0"},{"name":"foo-v1.0.0-1","skips":["foo.v1.0.0"]}]` {
			t.Errorf("old: %s", got)
		}
		if got := fmt.Sprint(bundleNames(cfg)); got != "[foo.v1.0.0 foo.v1.1.0 foo.v1.2.0 foo-v1.1.0-1 foo-v1.1.0-2 foo-v1.0.0-1]" {
			t.Errorf("bundles %s", got)
		}
	})
}

func TestLegacyRelease(t *testing.T) {
	csv := func(ann string) string {
		return fmt.Sprintf(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"x","annotations":{"olm.substitutesFor":%q}},"spec":{}}`, ann)
	}
	legacy := bundleBlob("foo", "foo.v1.1.0-0.1", "1.1.0+0.1", "")
	legacy["csvJson"] = csv("foo.v1.1.0")
	plain := bundleBlob("foo", "foo.v1.1.0-0.2", "1.1.0+0.2", "")
	emptyAnn := bundleBlob("foo", "foo.v1.1.0-0.3", "1.1.0+0.3", "")
	emptyAnn["csvJson"] = csv("")
	imgs := newImages(map[string]obj{"img/legacy": legacy, "img/plain": plain, "img/empty": emptyAnn})

	cfg, err := render(t, tmpl(t, fooCatalog(), sub("img/legacy", "foo.v1.1.0")), imgs)
	if err != nil {
		t.Fatal(err)
	}
	if got := channel(t, cfg, "stable"); !strings.Contains(got, `{"name":"foo.v1.1.0-0.1","replaces":"foo.v1.0.0","skips":["foo.v1.1.0"]`) {
		t.Errorf("legacy rebuild not substituted: %s", got)
	}
	for _, ref := range []string{"img/plain", "img/empty"} {
		_, err := render(t, tmpl(t, fooCatalog(), sub(ref, "foo.v1.1.0")), imgs)
		if err == nil || !strings.HasSuffix(err.Error(), "is not less than substitute bundle \""+ref+"\"") {
			t.Errorf("%s: build metadata without the annotation is no release: %v", ref, err)
		}
	}

	// A base whose olm.csv.metadata or first JSON bundle object carries the
	// annotation uses its build metadata as its release too.
	obj64 := func(js string) obj {
		return obj{"type": "olm.bundle.object", "value": obj{"data": []byte(js)}}
	}
	for name, extra := range map[string]obj{
		"csv metadata":  {"type": "olm.csv.metadata", "value": obj{"annotations": obj{"olm.substitutesFor": "foo.v1.1.0"}}},
		"bundle object": obj64(csv("foo.v1.1.0")),
	} {
		t.Run(name, func(t *testing.T) {
			cat := fooCatalog()
			cat[1] = chanBlob("foo", "stable", entry("foo.v1.0.0"), entry("foo.v1.1.0-0.9", "replaces", "foo.v1.0.0"))
			cat[3] = bundleBlob("foo", "foo.v1.1.0-0.9", "1.1.0+0.9", "", extra)
			cat = cat[:4]
			// 1.1.0 release 0.9 is above 1.1.0 release 0.1: not less.
			_, err := render(t, tmpl(t, cat, sub("img/legacy", "foo.v1.1.0-0.9")), imgs)
			if err == nil || !strings.Contains(err.Error(), `base bundle "foo.v1.1.0-0.9" is not less than`) {
				t.Errorf("got %v", err)
			}
			// Without the annotation the base is 1.1.0, below the substitute.
			cat[3] = bundleBlob("foo", "foo.v1.1.0-0.9", "1.1.0+0.9", "")
			if _, err := render(t, tmpl(t, cat, sub("img/legacy", "foo.v1.1.0-0.9")), imgs); err != nil {
				t.Errorf("without the annotation: %v", err)
			}
		})
	}
}

func TestVersionReleaseOrder(t *testing.T) {
	vr := func(v, r, ann string) versionRelease {
		props := []property.Property{{Type: property.TypePackage, Value: json.RawMessage(fmt.Sprintf(`{"packageName":"p","version":%q,"release":%q}`, v, r))}}
		b := &declcfg.Bundle{Name: "b", Properties: props}
		if ann != "" {
			b.CsvJSON = `{"metadata":{"annotations":{"olm.substitutesFor":"` + ann + `"}}}`
		}
		got, err := bundleVersionRelease(b)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ordered := []versionRelease{
		vr("1.0.0-rc.1", "", ""),
		vr("1.0.0", "", ""),
		vr("1.0.0+5", "", ""), // build metadata alone does not count
		vr("1.0.0+0.1", "", "x"),
		vr("1.0.0", "1", ""),
		vr("1.0.0", "2", ""),
		vr("1.0.0", "10", ""),
		vr("1.0.0", "10.a", ""),
		vr("1.0.0", "alpha", ""),
		vr("1.0.1", "", ""),
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if i != j && (i == 1 && j == 2 || i == 2 && j == 1) {
				want = 0
			}
			if got := ordered[i].compare(ordered[j]); got != want {
				t.Errorf("compare(%d, %d) = %d, want %d", i, j, got, want)
			}
		}
	}
}

// TestParallelRenders checks that images render concurrently, at most
// Parallelism at a time, each once, and that the output does not depend on
// the order they finish in.
func TestParallelRenders(t *testing.T) {
	const n = 24
	blobs := map[string]obj{}
	subs := []obj{sub("img/foo:1.2.0-1", "foo.v1.2.0")}
	for i := 1; i <= n; i++ {
		blobs[fmt.Sprintf("img/foo:1.2.0-%d", i)] = bundleBlob("foo", fmt.Sprintf("foo-v1.2.0-%d", i), "1.2.0", fmt.Sprint(i))
		if i > 1 {
			subs = append(subs, sub(fmt.Sprintf("img/foo:1.2.0-%d", i), fmt.Sprintf("foo-v1.2.0-%d", i-1)))
		}
	}
	template := tmpl(t, fooCatalog(), subs...)
	var first []byte
	for run := 0; run < 3; run++ {
		im := newImages(blobs)
		rng := rand.New(rand.NewSource(int64(run)))
		var mu sync.Mutex
		// Until two renders have run at once, a render waits for the next
		// to start (up to a hang guard): they overlap whatever the
		// machine's speed. Then they finish in a random order.
		overlapBy := time.Now().Add(time.Minute)
		im.delay = func() time.Duration {
			for im.maxSeen.Load() < 2 && time.Now().Before(overlapBy) {
				time.Sleep(time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			return time.Duration(rng.Intn(20)) * time.Millisecond
		}
		cfg, err := render(t, template, im)
		if err != nil {
			t.Fatal(err)
		}
		if len(im.calls) != n {
			t.Errorf("%d images rendered, want %d", len(im.calls), n)
		}
		for ref, c := range im.calls {
			if c != 1 {
				t.Errorf("%s rendered %d times", ref, c)
			}
		}
		if m := im.maxSeen.Load(); m > Parallelism || m < 2 {
			t.Errorf("%d renders at once, want 2..%d", m, Parallelism)
		}
		var buf bytes.Buffer
		if err := cfg.WriteTo(&buf, declcfg.FormatJSON); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = buf.Bytes()
		} else if !bytes.Equal(first, buf.Bytes()) {
			t.Fatal("output depends on the order images finish in")
		}
	}
}

func TestCancel(t *testing.T) {
	im := newImages(map[string]obj{"img/foo:1.1.0-1": bundleBlob("foo", "foo-v1.1.0-1", "1.1.0", "1")})
	im.delay = func() time.Duration { return time.Minute }
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	_, err := Render(ctx, strings.NewReader(tmpl(t, fooCatalog(), sub("img/foo:1.1.0-1", "foo.v1.1.0"))), im.render)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
