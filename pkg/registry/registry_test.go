package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/fastopm/fastopm/internal/testutil"
)

// memSink records answers in memory.
type memSink struct {
	mu      sync.Mutex
	bundles map[string]BundleAnswer // by package/name
	metas   [][]byte
}

func (s *memSink) PutBundle(a *BundleAnswer) (BodyRef, error) {
	c := *a
	c.CsvJSON = bytes.Clone(a.CsvJSON)
	c.Objects = nil
	for _, o := range a.Objects {
		c.Objects = append(c.Objects, bytes.Clone(o))
	}
	c.ProvidedAPIs = slices.Clone(a.ProvidedAPIs)
	c.RequiredAPIs = slices.Clone(a.RequiredAPIs)
	c.Dependencies = cloneProps(a.Dependencies)
	c.Properties = cloneProps(a.Properties)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bundles == nil {
		s.bundles = map[string]BundleAnswer{}
	}
	s.bundles[a.PackageName+"/"+a.CsvName] = c
	return BodyRef{Off: uint64(len(s.bundles))}, nil
}

func (s *memSink) PutMeta(blob []byte) (BodyRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metas = append(s.metas, bytes.Clone(blob))
	return BodyRef{Off: uint64(len(s.metas) - 1)}, nil
}

func cloneProps(ps []Property) []Property {
	out := make([]Property, len(ps))
	for i, p := range ps {
		out[i] = Property{Type: p.Type, Value: bytes.Clone(p.Value)}
	}
	return out
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

const csvV1 = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"a.v1"},"spec":{"displayName":"A"}}`
const crdV1 = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n"

// testCatalog is a catalog exercising the query semantics: two packages,
// skips, a replaces chain leaving its channel, deprecations, bundle
// objects, olm.csv.metadata (in a file whose package blob comes after its
// bundles), dependencies and custom blobs.
func testCatalog() fstest.MapFS {
	alpha := fmt.Sprintf(`---
schema: olm.bundle
name: a.v1
package: alpha
image: quay.io/x/a:v1
properties:
- {type: olm.package, value: {packageName: alpha, version: 1.0.0}}
- {type: olm.gvk, value: {group: example.com, kind: Widget, version: v1}}
- {type: olm.bundle.object, value: {data: %s}}
- {type: olm.bundle.object, value: {data: %s}}
---
schema: olm.bundle
name: a.v2
package: alpha
image: quay.io/x/a:v2
relatedImages:
- {name: op, image: quay.io/x/op:v2}
properties:
- {type: olm.package, value: {packageName: alpha, version: 2.0.0}}
- {type: olm.gvk, value: {group: example.com, kind: Widget, version: v1}}
- {type: olm.package.required, value: {packageName: beta, versionRange: ">=1.0.0 <2.0.0"}}
- {type: olm.gvk.required, value: {group: example.com, kind: Gadget, version: v1}}
- {type: olm.csv.metadata, value: {displayName: Alpha, annotations: {a: b}, installModes: [{type: AllNamespaces, supported: true}]}}
- {type: custom.thing, value: {x: [1, 2.50]}}
---
schema: olm.bundle
name: a.v3
package: alpha
image: quay.io/x/a:v3
properties:
- {type: olm.package, value: {packageName: alpha, version: 3.0.0}}
---
schema: olm.channel
package: alpha
name: stable
entries:
- {name: a.v1}
- {name: a.v2, replaces: a.v1}
- {name: a.v3, replaces: a.v2, skips: [a.v1, a.v0, a.v1], skipRange: "<3.0.0"}
---
schema: olm.channel
package: alpha
name: fast
entries:
- {name: a.v3, replaces: a.v2}
---
schema: olm.package
name: alpha
defaultChannel: stable
description: The alpha operator.
icon: {base64data: %s, mediatype: image/svg+xml}
---
schema: io.example.lifecycle
package: alpha
name: l1
data: {phase: ga}
---
schema: io.example.lifecycle
package: alpha
name: l1
data: {phase: ga}
---
schema: io.example.lifecycle
name: global
data: {k: v}
`, b64(csvV1), b64(crdV1), b64("<svg/>"))
	beta := `{"schema":"olm.package","name":"beta","defaultChannel":"main"}
{"schema":"olm.channel","package":"beta","name":"main","entries":[{"name":"b.v1"},{"name":"b.v2","replaces":"b.v1"},{"name":"b.v3","replaces":"b.v2","skips":["b.v1"]}]}
{"schema":"olm.bundle","name":"b.v1","package":"beta","image":"quay.io/x/b:v1","properties":[{"type":"olm.package","value":{"packageName":"beta","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"b.v2","package":"beta","image":"quay.io/x/b:v2","properties":[{"type":"olm.package","value":{"packageName":"beta","version":"1.1.0"}}]}
{"schema":"olm.bundle","name":"b.v3","package":"beta","image":"quay.io/x/b:v3","properties":[{"type":"olm.package","value":{"packageName":"beta","version":"1.2.0"}},{"type":"olm.gvk","value":{"group":"example.com","kind":"Widget","version":"v1"}}]}
{"schema":"olm.deprecations","package":"beta","entries":[{"reference":{"schema":"olm.package"},"message":"beta is gone"},{"reference":{"schema":"olm.bundle","name":"b.v1"},"message":"b.v1 is old"}]}
`
	return fstest.MapFS{
		"alpha/catalog.yaml": {Data: []byte(alpha)},
		"beta/catalog.json":  {Data: []byte(beta)},
	}
}

func load(t *testing.T, fsys fstest.MapFS) (*Index, *memSink) {
	t.Helper()
	sink := &memSink{}
	x, err := Load(context.Background(), fsys, Options{Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	return x, sink
}

func TestGetPackage(t *testing.T) {
	t.Parallel()
	x, _ := load(t, testCatalog())
	if got := x.ListPackages(); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("ListPackages = %v", got)
	}
	for _, tc := range []struct {
		name, def string
		channels  []string // name=head
		dep       string
	}{
		{"alpha", "stable", []string{"fast=a.v3", "stable=a.v3"}, ""},
		{"beta", "main", []string{"main=b.v3"}, "beta is gone"},
	} {
		p, err := x.GetPackage(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		var chans []string
		for i := range p.Channels {
			c := &p.Channels[i]
			chans = append(chans, c.Name+"="+x.BundleName(&c.Entries[c.Head]))
		}
		if p.DefaultChannel != tc.def || !slices.Equal(chans, tc.channels) {
			t.Errorf("%s: default %q channels %v, want %q %v", tc.name, p.DefaultChannel, chans, tc.def, tc.channels)
		}
		if got := ""; p.Deprecation != nil {
			got = p.Deprecation.Message
			if got != tc.dep {
				t.Errorf("%s: deprecation %q, want %q", tc.name, got, tc.dep)
			}
		} else if tc.dep != "" {
			t.Errorf("%s: no deprecation, want %q", tc.name, tc.dep)
		}
	}
}

// wantErr checks an error's code and upstream text.
func wantErr(t *testing.T, err error, code Code, msg string) {
	t.Helper()
	var qe *Error
	if !errors.As(err, &qe) {
		t.Fatalf("error %v, want a query error %q", err, msg)
	}
	if qe.Code != code || qe.Msg != msg {
		t.Errorf("error (code %d) %q, want (code %d) %q", qe.Code, qe.Msg, code, msg)
	}
}

func TestLookupErrors(t *testing.T) {
	t.Parallel()
	x, _ := load(t, testCatalog())
	for _, tc := range []struct {
		name string
		call func() error
		code Code
		msg  string
	}{
		{"package", func() error { _, err := x.GetPackage("nope"); return err }, NotFound, `package "nope" not found`},
		{"empty package", func() error { _, err := x.GetPackage(""); return err }, InvalidArgument, `package "" not found`},
		{"bundle package", func() error { _, err := x.GetBundle("nope", "c", "b"); return err }, NotFound, `package "nope" not found`},
		{"bundle channel", func() error { _, err := x.GetBundle("alpha", "nope", "a.v1"); return err }, NotFound, `package "alpha", channel "nope" not found`},
		{"bundle name", func() error { _, err := x.GetBundle("alpha", "fast", "a.v1"); return err }, NotFound, `package "alpha", channel "fast", bundle "a.v1" not found`},
		{"bundle empty name", func() error { _, err := x.GetBundle("alpha", "fast", ""); return err }, InvalidArgument, `package "alpha", channel "fast", bundle "" not found`},
		{"head channel", func() error { _, err := x.GetBundleForChannel("beta", "x"); return err }, NotFound, `package "beta", channel "x" not found`},
		{"replaces package (unquoted)", func() error { _, err := x.GetBundleThatReplaces("a.v1", "nope", "stable"); return err }, NotFound, `package nope not found`},
		{"replaces none", func() error { _, err := x.GetBundleThatReplaces("a.v3", "alpha", "stable"); return err }, NotFound, `no entry found for package "alpha", channel "stable"`},
		{"entries that replace", func() error { _, err := x.GetChannelEntriesThatReplace("b.v3"); return err }, NotFound, `no channel entries found that replace b.v3`},
		{"providers", func() error { _, err := x.GetChannelEntriesThatProvide("g", "v1", "K"); return err }, NotFound, `no channel entries found that provide group:"g" version:"v1" kind:"K"`},
		{"providers empty kind", func() error { _, err := x.GetLatestChannelEntriesThatProvide("g", "v1", ""); return err }, InvalidArgument, `no channel entries found that provide group:"g" version:"v1" kind:""`},
		{"default provider", func() error { _, err := x.GetDefaultBundleThatProvides("g", "v1", "K"); return err }, NotFound, `no channel entries found that provide group:"g" version:"v1" kind:"K"`},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.call(), tc.code, tc.msg) })
	}
}

func entryStrings(es []Edge) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s/%s/%s<%s", e.PackageName, e.ChannelName, e.BundleName, e.Replaces))
	}
	return out
}

func TestEntries(t *testing.T) {
	t.Parallel()
	x, _ := load(t, testCatalog())
	for _, tc := range []struct {
		name string
		call func() ([]Edge, error)
		want []string
	}{
		// a.v3 skips a.v1 twice: one entry per skip, with the bundle's
		// own replaces.
		{"replace a.v1", func() ([]Edge, error) { return x.GetChannelEntriesThatReplace("a.v1") },
			[]string{"alpha/stable/a.v2<a.v1", "alpha/stable/a.v3<a.v2", "alpha/stable/a.v3<a.v2"}},
		{"replace a.v2", func() ([]Edge, error) { return x.GetChannelEntriesThatReplace("a.v2") },
			[]string{"alpha/fast/a.v3<a.v2", "alpha/stable/a.v3<a.v2"}},
		{"replace dangling a.v0", func() ([]Edge, error) { return x.GetChannelEntriesThatReplace("a.v0") },
			[]string{"alpha/stable/a.v3<a.v2"}},
		// Upstream matches "" against every entry's replaces: the entries
		// that replace nothing.
		{"replace nothing", func() ([]Edge, error) { return x.GetChannelEntriesThatReplace("") },
			[]string{"alpha/stable/a.v1<", "beta/main/b.v1<"}},
		// Every provider, plus one entry per skip (replaces = the skip).
		{"provide Widget", func() ([]Edge, error) { return x.GetChannelEntriesThatProvide("example.com", "v1", "Widget") },
			[]string{"alpha/stable/a.v1<", "alpha/stable/a.v2<a.v1", "beta/main/b.v3<b.v1", "beta/main/b.v3<b.v2"}},
		// Heads only: alpha's heads (a.v3) do not provide Widget.
		{"latest Widget", func() ([]Edge, error) {
			return x.GetLatestChannelEntriesThatProvide("example.com", "v1", "Widget")
		}, []string{"beta/main/b.v3<b.v1", "beta/main/b.v3<b.v2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			if s := entryStrings(got); !slices.Equal(s, tc.want) {
				t.Errorf("got %q\nwant %q", s, tc.want)
			}
		})
	}
}

func TestBundleQueries(t *testing.T) {
	t.Parallel()
	x, _ := load(t, testCatalog())
	for _, tc := range []struct {
		name string
		call func() (Hit, error)
		want string // package/channel/bundle
	}{
		{"GetBundle", func() (Hit, error) { return x.GetBundle("alpha", "stable", "a.v2") }, "alpha/stable/a.v2"},
		{"head", func() (Hit, error) { return x.GetBundleForChannel("beta", "main") }, "beta/main/b.v3"},
		// b.v2 replaces b.v1 and b.v3 skips it: upstream picks either,
		// we pick the first by name.
		{"replaces (two candidates)", func() (Hit, error) { return x.GetBundleThatReplaces("b.v1", "beta", "main") }, "beta/main/b.v2"},
		{"replaces via skips", func() (Hit, error) { return x.GetBundleThatReplaces("a.v0", "alpha", "stable") }, "alpha/stable/a.v3"},
		{"default provider", func() (Hit, error) { return x.GetDefaultBundleThatProvides("example.com", "v1", "Widget") }, "beta/main/b.v3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Package.Name + "/" + h.Channel.Name + "/" + h.Bundle.Name; got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	h, _ := x.GetBundle("beta", "main", "b.v1")
	if h.Bundle.Deprecation == nil || h.Bundle.Deprecation.Message != "b.v1 is old" {
		t.Errorf("b.v1 deprecation = %+v", h.Bundle.Deprecation)
	}
	h, _ = x.GetBundle("alpha", "stable", "a.v3")
	if h.Entry.SkipRange != "<3.0.0" || !slices.Equal(h.Entry.Skips, []string{"a.v1", "a.v0", "a.v1"}) || h.Entry.Replaces != "a.v2" {
		t.Errorf("a.v3 entry = %+v", *h.Entry)
	}
}

func TestListBundlesOrder(t *testing.T) {
	t.Parallel()
	x, _ := load(t, testCatalog())
	var got []string
	for _, ref := range x.ListBundles() {
		h := x.Hit(ref)
		got = append(got, h.Channel.Name+"/"+h.Package.Name+"/"+h.Bundle.Name)
	}
	want := []string{"fast/alpha/a.v3", "main/beta/b.v1", "main/beta/b.v2", "main/beta/b.v3", "stable/alpha/a.v1", "stable/alpha/a.v2", "stable/alpha/a.v3"}
	if !slices.Equal(got, want) {
		t.Errorf("ListBundles order %v, want %v", got, want)
	}
}

func TestCustomMetas(t *testing.T) {
	t.Parallel()
	x, sink := load(t, testCatalog())
	for _, tc := range []struct {
		schema, pkg string
		want        []string
	}{
		// The catalog holds this blob twice: both copies are sent, as
		// upstream's default store does.
		{"io.example.lifecycle", "alpha", []string{`{"data":{"phase":"ga"},"name":"l1","package":"alpha","schema":"io.example.lifecycle"}`, `{"data":{"phase":"ga"},"name":"l1","package":"alpha","schema":"io.example.lifecycle"}`}},
		{"io.example.lifecycle", "", []string{`{"data":{"k":"v"},"name":"global","schema":"io.example.lifecycle"}`}},
		{"io.example.lifecycle", "beta", nil},
		{"olm.bundle", "alpha", nil},
	} {
		var got []string
		for _, m := range x.CustomMetas(tc.schema, tc.pkg) {
			got = append(got, string(sink.metas[m.Body.Off]))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("CustomMetas(%q, %q) = %q, want %q", tc.schema, tc.pkg, got, tc.want)
		}
	}
}

func TestBundleAnswers(t *testing.T) {
	t.Parallel()
	_, sink := load(t, testCatalog())
	v1 := sink.bundles["alpha/a.v1"]
	if string(v1.CsvJSON) != csvV1 {
		t.Errorf("a.v1 csvJson = %s", v1.CsvJSON)
	}
	if len(v1.Objects) != 2 || string(v1.Objects[0]) != csvV1 || !strings.Contains(string(v1.Objects[1]), `"kind":"CustomResourceDefinition"`) {
		t.Errorf("a.v1 objects = %q", v1.Objects)
	}
	for _, p := range v1.Properties {
		if p.Type == "olm.bundle.object" {
			t.Errorf("a.v1 properties keep olm.bundle.object")
		}
	}
	if v1.Version != "1.0.0" || v1.BundlePath != "quay.io/x/a:v1" || !reflect.DeepEqual(v1.ProvidedAPIs, []GVK{{"example.com", "v1", "Widget"}}) {
		t.Errorf("a.v1 = %+v", v1)
	}

	v2 := sink.bundles["alpha/a.v2"]
	var props []string
	for _, p := range v2.Properties {
		props = append(props, p.Type+"="+string(p.Value))
	}
	wantProps := []string{
		`olm.package={"packageName":"alpha","version":"2.0.0"}`,
		`olm.gvk={"group":"example.com","kind":"Widget","version":"v1"}`,
		`olm.package.required={"packageName":"beta","versionRange":">=1.0.0 <2.0.0"}`,
		`olm.gvk.required={"group":"example.com","kind":"Gadget","version":"v1"}`,
		`custom.thing={"x":[1,2.5]}`,
	}
	if !slices.Equal(props, wantProps) {
		t.Errorf("a.v2 properties:\n%q\nwant\n%q", props, wantProps)
	}
	var deps []string
	for _, d := range v2.Dependencies {
		deps = append(deps, d.Type+"="+string(d.Value))
	}
	wantDeps := []string{`olm.package={"packageName":"beta","version":">=1.0.0 <2.0.0"}`, `olm.gvk={"group":"example.com","kind":"Gadget","version":"v1"}`}
	if !slices.Equal(deps, wantDeps) {
		t.Errorf("a.v2 dependencies %q, want %q", deps, wantDeps)
	}
	if !reflect.DeepEqual(v2.RequiredAPIs, []GVK{{"example.com", "v1", "Gadget"}}) {
		t.Errorf("a.v2 required APIs %v", v2.RequiredAPIs)
	}
	// The CSV synthesized from olm.csv.metadata, with the package's icon
	// and description (the package blob comes after the bundle).
	var c map[string]any
	if err := json.Unmarshal(v2.CsvJSON, &c); err != nil {
		t.Fatalf("a.v2 csvJson: %v", err)
	}
	want := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"annotations":{"a":"b"},"name":"a.v2"},` +
		`"spec":{"apiservicedefinitions":{},"cleanup":{"enabled":false},"customresourcedefinitions":{},"description":"The alpha operator.","displayName":"Alpha",` +
		`"icon":[{"base64data":"` + b64("<svg/>") + `","mediatype":"image/svg+xml"}],"install":{"spec":{"deployments":null},"strategy":"deployment"},` +
		`"installModes":[{"supported":true,"type":"AllNamespaces"}],"provider":{},"relatedImages":[{"image":"quay.io/x/op:v2","name":"op"}],"version":"2.0.0"},"status":{"cleanup":{}}}`
	if got := canon(t, c); got != want {
		t.Errorf("a.v2 csvJson:\n%s\nwant\n%s", got, want)
	}
	if len(v2.Objects) != 1 || string(v2.Objects[0]) != string(v2.CsvJSON) {
		t.Errorf("a.v2 objects = %q, want [csvJson]", v2.Objects)
	}
	if v3 := sink.bundles["alpha/a.v3"]; v3.CsvJSON != nil || len(v3.Objects) != 0 {
		t.Errorf("a.v3 has csvJson %q objects %d", v3.CsvJSON, len(v3.Objects))
	}
}

func canon(t *testing.T, v any) string {
	b, err := testutil.CanonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInvalidCatalogs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // in the error
	}{
		{"no head", map[string]string{"c.json": `{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"b1","replaces":"b2"},{"name":"b2","replaces":"b1"}]}
{"schema":"olm.bundle","name":"b1","package":"p","image":"x.io/b:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"b2","package":"p","image":"x.io/b:2","properties":[{"type":"olm.package","value":{"packageName":"p","version":"2.0.0"}}]}`}, "no channel head found in graph"},
		{"bad file", map[string]string{"c.json": `{"schema":`}, "c.json"},
		{"two csv metadata", map[string]string{"c.json": `{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"b1"}]}
{"schema":"olm.bundle","name":"b1","package":"p","image":"x.io/b:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{}},{"type":"olm.csv.metadata","value":{}}]}`},
			`expected at most 1 property of type "olm.csv.metadata", found 2`},
		// Upstream refuses to serve custom blobs it could never be asked for.
		{"custom schema with a space", map[string]string{"c.json": `{"schema":"my schema!","name":"x"}`},
			`c.json:1:1: invalid custom schema meta: invalid schema "my schema!": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$`},
		{"custom blob with a path as package", map[string]string{"c.yaml": "schema: io.x\npackage: a/b\n"},
			`c.yaml:1:1: invalid custom schema meta: invalid packageName "a/b": must match`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range tc.files {
				fsys[k] = &fstest.MapFile{Data: []byte(v)}
			}
			_, err := Load(context.Background(), fsys, Options{Sink: &memSink{}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestEmptyCatalog(t *testing.T) {
	t.Parallel()
	x, _ := load(t, fstest.MapFS{})
	if len(x.Packages) != 0 || len(x.ListBundles()) != 0 {
		t.Errorf("empty catalog: %d packages", len(x.Packages))
	}
}

// TestInlineObjectsOnly: as in opm v1.73, a bundle object is its inline
// data; a "ref" is not followed (the object is then JSON null).
func TestInlineObjectsOnly(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"c.json": {Data: []byte(`{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"b1"}]}
{"schema":"olm.bundle","name":"b1","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.bundle.object","value":{"ref":"csv.yaml"}},{"type":"olm.bundle.object","value":{"Data":"` + b64(csvV1) + `","other":1}}]}
`)}, "objects/csv.yaml": {Data: []byte("kind: ClusterServiceVersion\n")}, ".indexignore": {Data: []byte("objects/\n")}}
	_, sink := load(t, fsys)
	b := sink.bundles["p/b1"]
	if len(b.Objects) != 2 || string(b.Objects[0]) != "null" || string(b.Objects[1]) != csvV1 || string(b.CsvJSON) != csvV1 {
		t.Errorf("objects %q, csvJson %q", b.Objects, b.CsvJSON)
	}
}
