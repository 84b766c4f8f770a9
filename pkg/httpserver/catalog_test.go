package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// copyFiles copies each file src to dir/dst, for dst, src in files,
// making dst's directories.
func copyFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for dst, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(dst)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pageServer serves testdata/page (the hand-made markdown-test package)
// and testdata/updates' etcd.
func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	copyFiles(t, dir, map[string]string{
		"markdown-test/catalog.yaml": "../../testdata/page/markdown-test/catalog.yaml",
		"etcd/catalog.yaml":          "../../testdata/updates/etcd/catalog.yaml",
	})
	hs, err := httpserver.New(snapshotDir(t, dir), httpserver.Options{CatalogName: "page"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts
}

type summary struct {
	Name, DefaultChannel, Head, Version                string
	DisplayName, ShortDescription, Provider            string
	Capabilities                                       string
	Icon                                               bool
	Keywords, Categories, InstallModes, Infrastructure []string
}

// TestPackageListOperators: each package of a real catalog carries what its
// default channel's head says in its CSV (an olm.csv.metadata property or
// the CSV among its objects: okderators has both), read here from the
// catalog on its own.
func TestPackageListOperators(t *testing.T) {
	const dir = "../../testdata/catalogs/okderators"
	hs, err := httpserver.New(snapshotDir(t, dir), httpserver.Options{CatalogName: "okd"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	var list struct {
		Total    int
		Packages []summary
	}
	getJSONInto(t, ts.URL+"/api/v1/packages?limit=all", &list)
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != len(cfg.Packages) || len(list.Packages) != list.Total {
		t.Fatalf("%d packages listed of %d, the catalog has %d", len(list.Packages), list.Total, len(cfg.Packages))
	}
	fromObjects := 0
	for _, p := range list.Packages {
		// The head, as the package's own answer gives it.
		var pa struct {
			Channels []struct{ Name, Head string }
		}
		getJSONInto(t, ts.URL+"/api/v1/packages/"+p.Name, &pa)
		for _, c := range pa.Channels {
			if c.Name == p.DefaultChannel && c.Head != p.Head {
				t.Errorf("%s: head %q, the channel's is %q", p.Name, p.Head, c.Head)
			}
		}
		i := slices.IndexFunc(cfg.Bundles, func(b declcfg.Bundle) bool { return b.Package == p.Name && b.Name == p.Head })
		if i < 0 {
			t.Fatalf("%s: head %q is no bundle of the catalog", p.Name, p.Head)
		}
		b := &cfg.Bundles[i]
		if !slices.ContainsFunc(b.Properties, func(pr property.Property) bool { return pr.Type == property.TypeCSVMetadata }) {
			fromObjects++
		}
		prop := csvMetadataProperty(t, b)
		if prop == nil {
			t.Errorf("%s: the head has no CSV", p.Name)
			continue
		}
		var m property.CSVMetadata
		if err := json.Unmarshal(prop.Value, &m); err != nil {
			t.Fatal(err)
		}
		want := summary{DisplayName: m.DisplayName, Provider: m.Provider.Name, Capabilities: m.Annotations["capabilities"], Keywords: m.Keywords}
		for c := range strings.SplitSeq(m.Annotations["categories"], ",") {
			if c = strings.TrimSpace(c); c != "" {
				want.Categories = append(want.Categories, c)
			}
		}
		for _, im := range m.InstallModes {
			if im.Supported {
				want.InstallModes = append(want.InstallModes, im.Type)
			}
		}
		got := summary{DisplayName: p.DisplayName, Provider: p.Provider, Capabilities: p.Capabilities, Keywords: p.Keywords, Categories: p.Categories,
			InstallModes: want.InstallModes}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", p.Name, got, want)
		}
		slices.Sort(want.InstallModes)
		gotModes := slices.Sorted(slices.Values(p.InstallModes))
		if !slices.Equal(gotModes, want.InstallModes) {
			t.Errorf("%s: install modes %v, want %v", p.Name, p.InstallModes, want.InstallModes)
		}
		if want.DisplayName != "" && p.ShortDescription == "" {
			t.Errorf("%s: no short description", p.Name)
		}
		if p.Version != bundleVersionOf(t, b) {
			t.Errorf("%s: version %q, want %q", p.Name, p.Version, bundleVersionOf(t, b))
		}
	}
	if fromObjects == 0 || fromObjects == len(list.Packages) {
		t.Errorf("%d of %d heads have their CSV among their objects: the test should see both kinds", fromObjects, len(list.Packages))
	}
}

// TestPackageListSearchAndFilters: the search looks in the name, display
// name, keywords and short description, every word; each filter keeps the
// packages with one of its values, case insensitively.
func TestPackageListSearchAndFilters(t *testing.T) {
	ts := pageServer(t)
	names := func(query string) []string {
		t.Helper()
		var a struct {
			Total    int
			Packages []summary
		}
		getJSONInto(t, ts.URL+"/api/v1/packages?"+query, &a)
		var out []string
		for _, p := range a.Packages {
			out = append(out, p.Name)
		}
		if a.Total != len(out) && !strings.Contains(query, "limit") {
			t.Errorf("%s: total %d, %d listed", query, a.Total, len(out))
		}
		return out
	}
	for q, want := range map[string]string{
		"":                                     "[etcd markdown-test]",
		"q=etcd":                               "[etcd]",
		"q=MARKDOWN":                           "[markdown-test]",
		"q=widgets":                            "[markdown-test]", // a keyword, and the short description
		"q=manages+tests":                      "[markdown-test]", // every word, anywhere
		"q=manages+etcd":                       "[]",              // every word
		"q=markdown+test+operator":             "[markdown-test]", // the display name
		"category=storage":                     "[markdown-test]", // case insensitive
		"category=Storage&category=Networking": "[markdown-test]", // any value
		"category=Networking":                  "[]",
		"provider=Example+Org":                 "[markdown-test]",
		"capability=Full+Lifecycle":            "[markdown-test]",
		"installMode=AllNamespaces":            "[markdown-test]",
		"installMode=MultiNamespace":           "[]", // listed, not supported
		"infrastructure=disconnected":          "[markdown-test]",
		"infrastructure=Designed+for+FIPS":     "[]", // "false"
		"infrastructure=Proxy-aware&q=widgets": "[markdown-test]",
		"limit=1":                              "[etcd]",
	} {
		if got := fmt.Sprint(names(q)); got != want {
			t.Errorf("?%s: %s, want %s", q, got, want)
		}
	}
	var a struct {
		Total    int
		Packages []summary
	}
	getJSONInto(t, ts.URL+"/api/v1/packages?q=markdown", &a)
	p := a.Packages[0]
	want := summary{Name: "markdown-test", DefaultChannel: "stable", Head: "markdown-test.v1.1.0", Version: "1.1.0",
		DisplayName: "Markdown Test Operator", ShortDescription: "Manages widgets, for the page's tests.", Provider: "Example Org",
		Capabilities: "Full Lifecycle", Keywords: []string{"widgets", "markdown", "testing"}, Categories: []string{"Developer Tools", "Storage"},
		InstallModes: []string{"OwnNamespace", "SingleNamespace", "AllNamespaces"}, Infrastructure: []string{"Disconnected", "Proxy-aware"}}
	if fmt.Sprintf("%+v", p) != fmt.Sprintf("%+v", want) {
		t.Errorf("markdown-test:\n got %+v\nwant %+v", p, want)
	}
	for _, bad := range []string{"limit=0", "limit=x", "limit=1001", "color=red", "category=" + strings.Repeat("x", 300)} {
		resp, body := get(t, ts.URL+"/api/v1/packages?"+bad)
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(`"error"`)) {
			t.Errorf("?%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}

// TestPackageOperator: a package's answer carries its head's operator
// details, the long description rendered and sanitized, the CRDs with
// their examples.
func TestPackageOperator(t *testing.T) {
	ts := pageServer(t)
	var p struct {
		Description, DescriptionHTML string
		Operator                     struct {
			Bundle, DisplayName, Provider, ProviderURL, Description, DescriptionHTML string
			Repository, ContainerImage, CreatedAt, MinKubeVersion, Maturity, Support string
			Maintainers                                                              []struct{ Name, Email string }
			Links                                                                    []struct{ Name, URL string }
			InstallModes, UnsupportedInstallModes, Infrastructure                    []string
			OwnedCRDs, RequiredCRDs                                                  []struct {
				Name, Version, Kind, DisplayName string
				Examples                         []string
			}
			Examples []string
		}
	}
	getJSONInto(t, ts.URL+"/api/v1/packages/markdown-test", &p)
	op := p.Operator
	if op.Bundle != "markdown-test.v1.1.0" || op.DisplayName != "Markdown Test Operator" || op.ProviderURL != "https://example.com" ||
		op.Repository != "https://example.com/markdown-test" || op.ContainerImage != "example.com/markdown-test/operator:v1.1.0" ||
		op.CreatedAt != "2026-11-26T00:00:00Z" || op.MinKubeVersion != "1.25.0" || op.Maturity != "stable" || op.Support != "Example Org" {
		t.Errorf("operator %+v", op)
	}
	if fmt.Sprint(op.Maintainers, op.UnsupportedInstallModes) != "[{Jane Doe jane@example.com}] [MultiNamespace]" || len(op.Links) != 2 {
		t.Errorf("maintainers %v, unsupported install modes %v, links %v", op.Maintainers, op.UnsupportedInstallModes, op.Links)
	}
	if !strings.Contains(op.Description, "<script>window.pwned = 1</script>") {
		t.Error("the Markdown source is not in the answer")
	}
	for _, w := range []string{"<h1>Markdown Test Operator</h1>", "<strong>Markdown Test</strong>", `<th align="left">Setting</th>`, `href="https://example.com/docs"`} {
		if !strings.Contains(op.DescriptionHTML, w) {
			t.Errorf("descriptionHTML lacks %q: %s", w, op.DescriptionHTML)
		}
	}
	for _, n := range []string{"<script", "pwned", "onerror", "javascript:", "<img", "#pkg=etcd"} {
		if strings.Contains(op.DescriptionHTML, n) {
			t.Errorf("descriptionHTML holds %q: %s", n, op.DescriptionHTML)
		}
	}
	if p.DescriptionHTML != "<p>A hand-made package for the page&#39;s tests.</p>\n" {
		t.Errorf("the package's description rendered: %q", p.DescriptionHTML)
	}
	if len(op.OwnedCRDs) != 1 || len(op.OwnedCRDs[0].Examples) != 1 || len(op.RequiredCRDs) != 1 || len(op.Examples) != 1 {
		t.Fatalf("CRDs: owned %+v, required %+v, other examples %v", op.OwnedCRDs, op.RequiredCRDs, op.Examples)
	}
	var cr struct {
		Kind     string
		Metadata struct{ Name string }
	}
	if err := json.Unmarshal([]byte(op.OwnedCRDs[0].Examples[0]), &cr); err != nil || cr.Kind != "Widget" || cr.Metadata.Name != "widget-sample" {
		t.Errorf("the Widget example %q: %v", op.OwnedCRDs[0].Examples[0], err)
	}
	if !strings.Contains(op.Examples[0], "stray-sample") || op.RequiredCRDs[0].Name != "gadgets.example.com" {
		t.Errorf("other example %q, required %+v", op.Examples[0], op.RequiredCRDs)
	}
}

// TestBundleAnswer: one bundle's version, channels, deprecation,
// properties and operator details; from an olm.csv.metadata property and
// from a CSV among the bundle's objects.
func TestBundleAnswer(t *testing.T) {
	ts := pageServer(t)
	type answer struct {
		Package, Name, Version, Image, Deprecated string
		Channels                                  []string
		Properties                                []property.Property
		RelatedImages                             []struct{ Name, Image string }
		Objects                                   int
		Operator                                  *struct{ Bundle, DisplayName, Description string }
	}
	var a answer
	getJSONInto(t, ts.URL+"/api/v1/packages/markdown-test/bundles/markdown-test.v1.0.0", &a)
	if a.Version != "1.0.0" || fmt.Sprint(a.Channels) != "[stable]" || a.Deprecated != "markdown-test.v1.0.0 has a known bug" ||
		a.Image != "example.com/markdown-test/bundle:v1.0.0" || a.Operator == nil || a.Operator.DisplayName != "Markdown Test (old)" {
		t.Errorf("v1.0.0: %+v", a)
	}
	getJSONInto(t, ts.URL+"/api/v1/packages/markdown-test/bundles/markdown-test.v1.1.0", &a)
	var types []string
	for _, p := range a.Properties {
		types = append(types, p.Type)
	}
	if fmt.Sprint(a.Channels, types, a.RelatedImages) != "[fast stable] [olm.package olm.gvk olm.gvk.required] [{operator example.com/markdown-test/operator:v1.1.0}]" {
		t.Errorf("v1.1.0: channels %v, properties %v, related images %v", a.Channels, types, a.RelatedImages)
	}
	for _, c := range []struct{ path, want string }{
		{"/api/v1/packages/markdown-test/bundles/nope", `bundle \"nope\" not found in package \"markdown-test\"`},
		{"/api/v1/packages/nope/bundles/x", `package \"nope\" not found`},
	} {
		resp, body := get(t, ts.URL+c.path)
		if resp.StatusCode != 404 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}

	// The CSV among the objects (kube-descheduler's bundles have no
	// olm.csv.metadata).
	hs, err := httpserver.New(snapshotDir(t, "../../testdata/catalogs/kube-descheduler-v4.12"), httpserver.Options{CatalogName: "d"})
	if err != nil {
		t.Fatal(err)
	}
	ds := httptest.NewServer(hs.Handler())
	defer ds.Close()
	var b answer
	getJSONInto(t, ds.URL+"/api/v1/packages/cluster-kube-descheduler-operator/bundles/clusterkubedescheduleroperator.4.12.0-202301042354", &b)
	if b.Objects == 0 || b.Operator == nil || b.Operator.DisplayName == "" || b.Operator.Description == "" {
		t.Errorf("a bundle with objects: %d objects, operator %+v", b.Objects, b.Operator)
	}
}

// TestJSONNotModified: the JSON answers and the icons carry an ETag; a
// request that names it gets a 304 without a body, compressed or not.
func TestJSONNotModified(t *testing.T) {
	ts := pageServer(t)
	for _, path := range []string{"/api/v1/packages?limit=all", "/catalogs/page/api/v1/packages", "/api/v1/packages/markdown-test",
		"/api/v1/packages/markdown-test/bundles/markdown-test.v1.1.0", "/api/v1/updates?package=etcd&from=0.9.0"} {
		resp, _ := get(t, ts.URL+path)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || !strings.HasPrefix(etag, `"`) || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: %d, ETag %q, Cache-Control %q", path, resp.StatusCode, etag, resp.Header.Get("Cache-Control"))
			continue
		}
		for _, h := range [][2]string{{"If-None-Match", etag}, {"If-None-Match", "W/" + etag}, {"If-None-Match", `"other", ` + etag}, {"Accept-Encoding", "gzip"}} {
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			req.Header.Set("If-None-Match", etag)
			req.Header.Set(h[0], h[1])
			r, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			var n bytes.Buffer
			_, _ = n.ReadFrom(r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusNotModified || n.Len() != 0 {
				t.Errorf("%s with %s: %d, %d bytes", path, h, r.StatusCode, n.Len())
			}
		}
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("If-None-Match", `"stale"`)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Errorf("%s with a stale ETag: %d", path, r.StatusCode)
		}
	}
	// Another answer, another ETag.
	r1, _ := get(t, ts.URL+"/api/v1/packages?q=etcd")
	r2, _ := get(t, ts.URL+"/api/v1/packages?q=markdown")
	if r1.Header.Get("ETag") == r2.Header.Get("ETag") {
		t.Error("two answers share an ETag")
	}
	// Errors have none.
	if r, _ := get(t, ts.URL+"/api/v1/packages/nope"); r.Header.Get("ETag") != "" {
		t.Errorf("a 404 has the ETag %q", r.Header.Get("ETag"))
	}
}

// TestIconCached: an icon is read from its olm.package blob alone, with its
// media type, a restrictive policy, and an ETag answered with a 304.
func TestIconCached(t *testing.T) {
	hs, err := httpserver.New(snapshotDir(t, "../../testdata/catalogs/kube-descheduler-v4.12"), httpserver.Options{CatalogName: "d"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	u := ts.URL + "/api/v1/packages/cluster-kube-descheduler-operator/icon"
	resp, body := get(t, u)
	h := resp.Header
	if resp.StatusCode != 200 || !strings.HasPrefix(h.Get("Content-Type"), "image/") || h.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") || h.Get("ETag") == "" || len(body) == 0 {
		t.Fatalf("icon: %d %v, %d bytes", resp.StatusCode, h, len(body))
	}
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("If-None-Match", h.Get("ETag"))
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotModified {
		t.Errorf("icon with its ETag: %d", r.StatusCode)
	}
	ps := pageServer(t)
	for _, path := range []string{"/api/v1/packages/markdown-test/icon", "/api/v1/packages/nope/icon"} {
		if r, body := get(t, ps.URL+path); r.StatusCode != 404 || !strings.Contains(string(body), "error") {
			t.Errorf("%s: %d %s", path, r.StatusCode, body)
		}
	}
}
