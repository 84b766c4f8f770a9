package updates_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
)

// catalog builds a valid model from a compact description: one line per
// channel entry, "channel name@version [r=replaces] [s=skip,skip]
// [range=...]" (range words joined by '_'), plus "default channel",
// "deprecate bundle" (an olm.deprecations entry) and "olm-deprecated
// bundle" (the bundle's olm.deprecated property) lines.
func catalog(t *testing.T, spec string) model.Model {
	t.Helper()
	var b strings.Builder
	def := ""
	channels := map[string][]string{}
	var order []string
	bundles := map[string]string{}
	var deprecated []string
	olmDeprecated := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(spec), "\n") {
		f := strings.Fields(line)
		switch f[0] {
		case "default":
			def = f[1]
			continue
		case "deprecate":
			deprecated = append(deprecated, f[1])
			continue
		case "olm-deprecated":
			olmDeprecated[f[1]] = true
			continue
		}
		name, version, _ := strings.Cut(f[1], "@")
		e := fmt.Sprintf("  - name: %s\n", name)
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "r":
				e += fmt.Sprintf("    replaces: %s\n", v)
			case "s":
				e += fmt.Sprintf("    skips: [%s]\n", v)
			case "range":
				e += fmt.Sprintf("    skipRange: %q\n", strings.ReplaceAll(v, "_", " "))
			}
		}
		if _, ok := channels[f[0]]; !ok {
			order = append(order, f[0])
		}
		channels[f[0]] = append(channels[f[0]], e)
		bundles[name] = version
	}
	if def == "" {
		def = order[0]
	}
	fmt.Fprintf(&b, "---\nschema: olm.package\nname: p\ndefaultChannel: %s\n", def)
	for _, ch := range order {
		fmt.Fprintf(&b, "---\nschema: olm.channel\npackage: p\nname: %s\nentries:\n%s", ch, strings.Join(channels[ch], ""))
	}
	for name, v := range bundles {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\npackage: p\nname: %s\nimage: example.com/p:%s\nproperties:\n- type: olm.package\n  value: {packageName: p, version: %s}\n", name, v, v)
		if olmDeprecated[name] {
			b.WriteString("- type: olm.deprecated\n  value: {}\n")
		}
	}
	if len(deprecated) > 0 {
		b.WriteString("---\nschema: olm.deprecations\npackage: p\nentries:\n")
		for _, d := range deprecated {
			fmt.Fprintf(&b, "- reference: {schema: olm.bundle, name: %s}\n  message: do not use %s\n", d, d)
		}
	}
	res, err := action.Validate{FS: fstest.MapFS{"c.yaml": {Data: []byte(b.String())}}, SkipSchema: true}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("invalid test catalog: %v\n%s", err, b.String())
	}
	return res.Model
}

func violations(vs []updates.Violation) string {
	var out []string
	for _, v := range vs {
		s := v.Rule + ":" + v.Channel + "/" + v.Bundle
		if v.Warning {
			s += "(warning)"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestCheck(t *testing.T) {
	base := `
stable a@1.0.0
stable b@1.1.0 r=a
stable c@1.2.0 r=b`
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"new head replaces", base, base + "\nstable d@1.3.0 r=c", ""},
		{"new head's skipRange covers all", base, base + "\nstable d@1.3.0 r=c range=>=1.0.0_<1.3.0", ""},
		{"head removed without replacement", base, `
stable a@1.0.0
stable b@1.1.0 r=a`, "head-downgrade:stable/b stranded:stable/c"},
		{"bundle dropped from the middle", base, `
stable a@1.0.0
stable c@1.2.0 r=a`, "stranded:stable/b"},
		{"bundle dropped, skipRange covers it", base, `
stable a@1.0.0
stable c@1.2.0 r=a range=>=1.1.0_<1.2.0`, ""},
		{"bundle dropped, skipped by name", base, `
stable a@1.0.0
stable c@1.2.0 r=a s=b`, ""},
		{"stranded in old already: a warning", `
stable a@1.0.0
stable b@1.1.0 s=a
stable c@1.2.0 r=b s=b`, `
stable a@1.0.0
stable b@1.1.0 s=a
stable c@1.2.0 r=b s=b
stable d@1.3.0 r=c`, "stranded:stable/a(warning)"},
		{"channel removed", base + "\nfast c@1.2.0", base, "channel-removed:fast/"},
		{"default channel changes", base + "\nfast c@1.2.0", base + "\nfast c@1.2.0\ndefault fast", "default-channel:/(warning)"},
		{"z-stream: the only way forward is skipped", `
stable a@1.0.0
stable b@1.1.0 r=a`, `
stable a@1.0.0
stable b@1.1.0 r=a
stable q@1.1.0-1
stable x1@1.1.1 r=b s=q
stable y1@1.1.2 r=b s=x1
stable c@1.2.0 r=y1`, "skipped-only-way:stable/q"},
		// The edge shapes, where OLM's own resolver decides (see
		// TestOLMResolverCases).
		{"a head covering its own version strands nobody", base, `
stable a@1.0.0
stable b@1.1.0 r=a range=>=1.1.0
stable c@1.2.0 r=b range=<=1.2.0`, ""},
		{"a head covering its own version, with itself", `
stable a@1.0.0
stable b@1.1.0 r=a range=>=1.1.0
stable c@1.2.0 r=b range=<=1.2.0`, `
stable a@1.0.0
stable b@1.1.0 r=a range=>=1.1.0
stable c@1.2.0 r=b range=<=1.2.0`, ""},
		{"a backward skipRange strands the head", base, `
stable a@1.0.0 range=>=1.2.0
stable b@1.1.0 r=a
stable c@1.2.0 r=b`, "stranded:stable/a stranded:stable/b stranded:stable/c"},
		{"olm.deprecated on the head takes it back", base, base + "\nolm-deprecated c", "head-downgrade:stable/b"},
		{"olm.deprecated inside the chain strands the bundle below", base, base + "\nolm-deprecated b", "stranded:stable/a"},
		{"olm.deprecated on every entry", base, base + "\nolm-deprecated a\nolm-deprecated b\nolm-deprecated c", "no-installable-entry:stable/"},
		{"z-stream: the only way forward has olm.deprecated", `
stable a@1.0.0
stable b@1.1.0 r=a`, `
stable a@1.0.0
stable b@1.1.0 r=a
stable q@1.1.0-1
stable x1@1.1.1 r=b s=q
stable c@1.2.0 r=x1 range=>=1.1.0_<1.2.0
olm-deprecated x1`, "skipped-only-way:stable/q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := violations(updates.Check(catalog(t, tc.old), catalog(t, tc.new)))
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	old := catalog(t, `
stable a@1.0.0
stable b@1.1.0 r=a
fast b@1.1.0`)
	new := catalog(t, `
stable a@1.0.0
stable b@1.1.0 r=a
stable c@1.2.0 r=b range=<1.2.0
beta c@1.2.0
deprecate a
default beta`)
	var got []string
	for _, c := range updates.Diff(old, new) {
		got = append(got, fmt.Sprintf("%s %s/%s %s→%s", c.Kind, c.Channel, c.Bundle, c.Old, c.New))
	}
	want := []string{
		"default-channel / stable→beta",
		"channel-added beta/ →c",
		"channel-removed fast/ b→",
		"head stable/ b→c",
		"deprecation-added stable/a →do not use a",
		"bundle-added stable/c →1.2.0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDiffOLMDeprecated: the olm.deprecated property is a change, and the
// head a diff reports is the bundle a new subscription gets.
func TestDiffOLMDeprecated(t *testing.T) {
	base := `
stable a@1.0.0
stable b@1.1.0 r=a`
	var got []string
	for _, c := range updates.Diff(catalog(t, base), catalog(t, base+"\nolm-deprecated b")) {
		got = append(got, fmt.Sprintf("%s %s/%s %s→%s", c.Kind, c.Channel, c.Bundle, c.Old, c.New))
	}
	want := "head stable/ b→a\nolm-deprecated-added stable/b →"
	if strings.Join(got, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}

// contentsCatalog loads a catalog's model and its bundles' contents,
// from YAML, or with asJSON from canonical JSON (the blobs read back at
// their positions rather than by parsing their files again).
func contentsCatalog(t *testing.T, text string, asJSON bool) (model.Model, *updates.Contents) {
	t.Helper()
	cc := updates.NewContentCollector()
	fsys := fstest.MapFS{"c.yaml": {Data: []byte(text)}}
	if asJSON {
		var mu sync.Mutex
		blobs := map[int]string{}
		if err := declcfg.Walk(context.Background(), fsys, func(b *declcfg.Blob) error {
			mu.Lock()
			blobs[b.Index] = string(b.JSON)
			mu.Unlock()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var js strings.Builder
		for _, i := range slices.Sorted(maps.Keys(blobs)) {
			js.WriteString(blobs[i] + "\n")
		}
		fsys = fstest.MapFS{"c.json": {Data: []byte(js.String())}}
	}
	res, err := action.Validate{FS: fsys, SkipSchema: true, Visit: cc.AddBlob}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("invalid test catalog: %v\n%s", err, text)
	}
	return res.Model, cc.Contents("", fsys)
}

// TestDiffContents: what a bundle carries is compared (issue 27: a diff
// said "no changes" when only properties or CRDs changed, and --check
// then listed violations below it): each property value added, removed
// or changed, each object added, removed or changed by kind and name
// (the same object written another way is the same), each related image;
// a long value is said to change without its text.
func TestDiffContents(t *testing.T) {
	obj := func(js string) string {
		return "- type: olm.bundle.object\n  value: {data: " + base64.StdEncoding.EncodeToString([]byte(js)) + "}\n"
	}
	crd := func(v string) string {
		return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},"spec":{"versions":[{"name":"` + v + `"}]}}`
	}
	long := func(s string) string { return strings.Repeat(s, updates.MaxShownValue) }
	cat := func(props, related string) string {
		return `---
schema: olm.package
name: p
defaultChannel: stable
---
schema: olm.channel
package: p
name: stable
entries:
  - name: p.v1
---
schema: olm.bundle
package: p
name: p.v1
image: example.com/p:1
properties:
- type: olm.package
  value: {packageName: p, version: 1.0.0}
` + props + related
	}
	old := cat(`- type: olm.gvk
  value: {group: example.com, kind: Foo, version: v1}
- type: olm.package.required
  value: {packageName: q, versionRange: ">=1.0.0"}
- type: olm.csv.metadata
  value: {description: `+long("a")+`}
- type: olm.deprecated
  value: {}
`+obj(crd("v1"))+obj(`{"kind":"Service","metadata":{"name":"svc","namespace":"ns"},"spec":{"a":1,"b":2}}`)+obj(`{"kind":"ConfigMap","metadata":{"name":"gone"}}`),
		"relatedImages:\n- {name: op, image: example.com/op:1}\n- {image: example.com/other:1}\n")
	new := cat(`- type: olm.gvk
  value: {group: example.com, kind: Foo, version: v1}
- type: olm.gvk.required
  value: {group: example.com, kind: Bar, version: v1}
- type: olm.package.required
  value: {packageName: q, versionRange: ">=1.1.0"}
- type: olm.csv.metadata
  value: {description: `+long("b")+`}
`+obj(crd("v2"))+obj("kind: Service\nmetadata:\n  namespace: ns\n  name: svc\nspec:\n  b: 2\n  a: 1\n")+obj(`{"kind":"Secret","metadata":{"name":"new"}}`),
		"relatedImages:\n- {name: op, image: example.com/op:2}\n- {image: example.com/other:1}\n")
	for _, oldJSON := range []bool{false, true} {
		for _, newJSON := range []bool{false, true} {
			om, oc := contentsCatalog(t, old, oldJSON)
			nm, nc := contentsCatalog(t, new, newJSON)
			checkContents(t, fmt.Sprintf("old JSON %v, new JSON %v", oldJSON, newJSON), om, nm, oc, nc)
		}
	}
}

func checkContents(t *testing.T, name string, om, nm model.Model, oc, nc *updates.Contents) {
	t.Helper()
	cd, err := updates.CompareContents(context.Background(), oc, nc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range updates.DiffWith(om, nm, cd) {
		got = append(got, fmt.Sprintf("%s %s/%s %s%s %s→%s", c.Kind, c.Channel, c.Bundle, c.Property, c.Object, c.Old, c.New))
	}
	want := []string{
		`property-changed /p.v1 olm.csv.metadata →`,
		`property-added /p.v1 olm.gvk.required →{"group":"example.com","kind":"Bar","version":"v1"}`,
		`property-changed /p.v1 olm.package.required {"packageName":"q","versionRange":">=1.0.0"}→{"packageName":"q","versionRange":">=1.1.0"}`,
		`object-removed /p.v1 ConfigMap gone →`,
		`object-changed /p.v1 CustomResourceDefinition foos.example.com →`,
		`object-added /p.v1 Secret new →`,
		`related-image-removed /p.v1  op=example.com/op:1→`,
		`related-image-added /p.v1  →op=example.com/op:2`,
		`head stable/  →p.v1`,
		`olm-deprecated-removed stable/p.v1  →`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: got\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without contents, or against itself: none of them.
	same, err := updates.CompareContents(context.Background(), oc, oc)
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range [][]updates.Change{updates.Diff(om, nm), updates.DiffWith(om, om, same)} {
		for _, c := range cs {
			if c.Property != "" || c.Object != "" || strings.HasPrefix(c.Kind, "related-image") {
				t.Errorf("a content change: %+v", c)
			}
		}
	}
}

// A catalog whose file changes between the walk and the read back is an
// error that names the catalog as well as its file: both catalogs of a
// diff often have a catalog.yaml.
func TestCompareContentsErrorNamesCatalog(t *testing.T) {
	cat := func(version string) []byte {
		return []byte(`---
schema: olm.package
name: p
---
schema: olm.channel
package: p
name: stable
entries:
  - name: p.v1
---
schema: olm.bundle
package: p
name: p.v1
image: example.com/p:1
properties:
- type: olm.package
  value: {packageName: p, version: ` + version + `}
`)
	}
	var contents [2]*updates.Contents
	fss := [2]fstest.MapFS{}
	for i, v := range []string{"1.0.0", "1.0.1"} {
		cc := updates.NewContentCollector()
		fss[i] = fstest.MapFS{"catalog.yaml": {Data: cat(v)}}
		if _, err := (action.Validate{FS: fss[i], SkipSchema: true, Visit: cc.AddBlob}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		contents[i] = cc.Contents([]string{"./old-catalog", "./new-catalog"}[i], fss[i])
	}
	// The new catalog's bundle is gone when it is read back.
	fss[1]["catalog.yaml"] = &fstest.MapFile{Data: []byte("---\nschema: olm.package\nname: p\n")}
	_, err := updates.CompareContents(context.Background(), contents[0], contents[1])
	if err == nil {
		t.Fatal("a catalog changed while read: no error")
	}
	if !strings.Contains(err.Error(), "./new-catalog: catalog.yaml") {
		t.Errorf("the error does not name the catalog and its file: %v", err)
	}
}
