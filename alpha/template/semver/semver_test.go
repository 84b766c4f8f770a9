package semver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// fakeBundles renders "pkg:version" references to bundles of that
// package and version; "fail:..." references fail.
func fakeBundles(_ context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
	pkg, version, _ := strings.Cut(ref, ":")
	if pkg == "fail" {
		return nil, fmt.Errorf("render reference %q: no such image", ref)
	}
	v, _ := json.Marshal(property.Package{PackageName: pkg, Version: version})
	return &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{{
		Schema: declcfg.SchemaBundle, Name: pkg + ".v" + version, Package: pkg, Image: ref,
		Properties: []property.Property{{Type: property.TypePackage, Value: v}},
	}}}, nil
}

func TestErrorsInTemplateOrder(t *testing.T) {
	tmpl := `schema: olm.semver
candidate: {bundles: [{image: "p:1.0.0"}, {image: "fail:a"}]}
stable: {bundles: [{image: "fail:b"}, {image: "fail:c"}]}
`
	for range 20 {
		_, err := Render(context.Background(), strings.NewReader(tmpl), fakeBundles)
		if err == nil || err.Error() != `render reference "fail:a": no such image` {
			t.Fatalf("error %v, want the first failing reference in template order", err)
		}
	}
}

func TestBuildMetadataConflict(t *testing.T) {
	tmpl := `schema: olm.semver
stable: {bundles: [{image: "p:1.0.0+b"}, {image: "p:1.0.0+a"}, {image: "p:1.0.0+c"}]}
`
	want := `render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: ` +
		`[bundle version "1.0.0+b" cannot be compared to "1.0.0", bundle version "1.0.0+c" cannot be compared to "1.0.0"]`
	for range 10 {
		_, err := Render(context.Background(), strings.NewReader(tmpl), fakeBundles)
		if err == nil || err.Error() != want {
			t.Fatalf("error\n %v\nwant\n %s", err, want)
		}
	}
}

func TestChannelsAndEdges(t *testing.T) {
	tmpl := `schema: olm.semver
generateMajorChannels: true
generateMinorChannels: true
stable: {bundles: [{image: "p:2.0.0"}, {image: "p:1.1.1"}, {image: "p:1.0.0"}, {image: "p:1.0.1"}, {image: "p:1.1.0"}]}
`
	cfg, err := Render(context.Background(), strings.NewReader(tmpl), fakeBundles)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cfg.Channels {
		for _, e := range c.Entries {
			got = append(got, fmt.Sprintf("%s %s replaces=%q skips=%v", c.Name, e.Name, e.Replaces, e.Skips))
		}
	}
	want := []string{
		`stable-v1 p.v1.0.0 replaces="" skips=[]`,
		`stable-v1 p.v1.0.1 replaces="" skips=[p.v1.0.0]`,
		`stable-v1 p.v1.1.0 replaces="" skips=[]`,
		`stable-v1 p.v1.1.1 replaces="p.v1.0.1" skips=[p.v1.0.0 p.v1.1.0]`,
		`stable-v1.0 p.v1.0.0 replaces="" skips=[]`,
		`stable-v1.0 p.v1.0.1 replaces="" skips=[p.v1.0.0]`,
		`stable-v1.1 p.v1.1.0 replaces="" skips=[]`,
		// As upstream: edges run across the minor channels of a major
		// version, so the head of stable-v1.1 replaces the head of
		// stable-v1.0 and skips what came before, bundles that are not in
		// its channel.
		`stable-v1.1 p.v1.1.1 replaces="p.v1.0.1" skips=[p.v1.0.0 p.v1.1.0]`,
		`stable-v2 p.v2.0.0 replaces="" skips=[]`,
		`stable-v2.0 p.v2.0.0 replaces="" skips=[]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("channels\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cfg.Packages[0].DefaultChannel != "stable-v2.0" {
		t.Errorf("default channel %q, want stable-v2.0 (minor preferred)", cfg.Packages[0].DefaultChannel)
	}
}

func TestTemplateOptions(t *testing.T) {
	for _, tc := range []struct{ tmpl, err string }{
		{"schema: olm.semver\ndefaultChannelTypePreference: major\n", "doesn't make sense if not generating major-version channels"},
		{"schema: olm.semver\nfoo: 1\n", `unknown field "foo"`},
		{"schema: olm.other\n", `input file has unknown schema, should be "olm.semver"`},
		{"schema: olm.semver\n", "no bundles specified"},
	} {
		_, err := Render(context.Background(), strings.NewReader(tc.tmpl), fakeBundles)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.tmpl, err, tc.err)
		}
	}
	_, err := Render(context.Background(), strings.NewReader("schema: olm.semver\nstable: {bundles: [{image: 'a:1.0.0'}, {image: 'b:1.0.0'}]}\n"), fakeBundles)
	if err == nil || !strings.Contains(err.Error(), `bundle "b" does not belong to this package: "a"`) {
		t.Errorf("two packages: %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Error("unexpected")
	}
}
