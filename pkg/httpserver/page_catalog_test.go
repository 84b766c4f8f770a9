package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/csv"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// templateSources are the real catalogs whose packages are copied, under
// new names, into the browser test's large catalog.
var templateSources = []string{
	"../../testdata/catalogs/okderators",
	"../../testdata/catalogs/kube-descheduler-v4.12",
	"../../testdata/catalog-samples/community-operators-v4.22",
	"../../testdata/catalog-samples/certified-operators-v4.16",
}

// largeCatalog writes a catalog of n packages (the scale of bench-n8):
// copies of the real packages of templateSources under new names, each
// with its olm.package blob (icon included), one channel and its head
// bundle, whose CSV (an olm.csv.metadata property, or the CSV among its
// objects, turned into one) is kept whole; plus testdata/page's hand-made
// package. It returns the directory.
func largeCatalog(t *testing.T, n int) string {
	t.Helper()
	type template struct {
		pkg    declcfg.Package
		bundle declcfg.Bundle
	}
	var templates []template
	for _, src := range templateSources {
		cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(src))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range cfg.Packages {
			// The default channel's bundle of highest version.
			var head *declcfg.Bundle
			var headVersion string
			entries := map[string]bool{}
			for _, c := range cfg.Channels {
				if c.Package == p.Name && c.Name == p.DefaultChannel {
					for _, e := range c.Entries {
						entries[e.Name] = true
					}
				}
			}
			for i := range cfg.Bundles {
				b := &cfg.Bundles[i]
				if b.Package != p.Name || !entries[b.Name] {
					continue
				}
				v := bundleVersionOf(t, b)
				if head == nil || compareVersions(v, headVersion) > 0 {
					head, headVersion = b, v
				}
			}
			if head == nil {
				continue
			}
			meta := csvMetadataProperty(t, head)
			if meta == nil {
				continue
			}
			props := []property.Property{*meta}
			for _, pr := range head.Properties {
				if pr.Type == property.TypeGVK || pr.Type == property.TypeGVKRequired || pr.Type == property.TypePackageRequired {
					props = append(props, pr)
				}
			}
			templates = append(templates, template{pkg: p, bundle: declcfg.Bundle{
				Schema: declcfg.SchemaBundle, Image: head.Image, Properties: props, RelatedImages: head.RelatedImages,
			}})
			templates[len(templates)-1].bundle.Name = headVersion // the version, kept here
		}
	}
	if len(templates) < 15 {
		t.Fatalf("%d template packages, want 15 at least", len(templates))
	}
	dir := t.TempDir()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for i := range n {
		tp := templates[i%len(templates)]
		name := fmt.Sprintf("%s-%03d", tp.pkg.Name, i)
		version := tp.bundle.Name
		bundle := name + ".v" + version
		pkg := declcfg.Package{Schema: declcfg.SchemaPackage, Name: name, DefaultChannel: "stable", Icon: tp.pkg.Icon, Description: tp.pkg.Description}
		if pkg.Icon != nil && len(pkg.Icon.Data) == 0 {
			pkg.Icon = nil
		}
		ch := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: name, Name: "stable", Entries: []declcfg.ChannelEntry{{Name: bundle}}}
		b := tp.bundle
		b.Name, b.Package = bundle, name
		pv, _ := json.Marshal(map[string]string{"packageName": name, "version": version})
		b.Properties = append([]property.Property{{Type: property.TypePackage, Value: pv}}, b.Properties...)
		for _, v := range []any{pkg, ch, b} {
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile("../../testdata/page/markdown-test/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "markdown-test.yaml"), md, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func bundleVersionOf(t *testing.T, b *declcfg.Bundle) string {
	for _, p := range b.Properties {
		if p.Type == property.TypePackage {
			var v struct{ Version string }
			if err := json.Unmarshal(p.Value, &v); err != nil {
				t.Fatal(err)
			}
			return v.Version
		}
	}
	return ""
}

// compareVersions compares dotted versions by their numbers, well enough
// to pick the latest of a channel's real bundles.
func compareVersions(a, b string) int {
	pa, pb := strings.FieldsFunc(a, func(r rune) bool { return r == '.' || r == '-' || r == '+' }), strings.FieldsFunc(b, func(r rune) bool { return r == '.' || r == '-' || r == '+' })
	for i := 0; i < len(pa) && i < len(pb); i++ {
		var x, y int
		_, ex := fmt.Sscan(pa[i], &x)
		_, ey := fmt.Sscan(pb[i], &y)
		if ex != nil || ey != nil {
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
			continue
		}
		if x != y {
			return x - y
		}
	}
	return len(pa) - len(pb)
}

// csvMetadataProperty is the bundle's olm.csv.metadata property, or one
// made from the CSV among its objects.
func csvMetadataProperty(t *testing.T, b *declcfg.Bundle) *property.Property {
	for _, p := range b.Properties {
		if p.Type == property.TypeCSVMetadata {
			return &p
		}
	}
	for _, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		var obj struct{ Data []byte }
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			t.Fatal(err)
		}
		data, err := yaml.YAMLToJSON(obj.Data)
		if err != nil {
			t.Fatal(err)
		}
		var c csv.ClusterServiceVersion
		if json.Unmarshal(data, &c) != nil || c.Kind != csv.Kind {
			continue
		}
		prop, err := property.BuildCSVMetadata(&c)
		if err != nil {
			t.Fatal(err)
		}
		return &prop
	}
	return nil
}

// listAnswer is /api/v1/packages.
type listAnswer struct {
	Total    int
	Packages []struct {
		Name, DisplayName, Provider, Capabilities string
		Categories, InstallModes, Infrastructure  []string
	}
}

// TestPageCatalog drives the page on a catalog of 600 real packages (the
// scale of bench-n8) and the hand-made markdown-test package: the first
// render and every filter change are timed in the browser (logged, and
// recorded in docs/performance.md; not asserted: a test never depends on
// the machine's speed), the search and each filter are checked against
// the JSON answers, the Markdown description is checked to be rendered
// and neutralised, a CRD's example shown, deep links with back and
// forward and in a new tab, the keyboard path, a phone-width window, and
// no Content-Security-Policy violation.
func TestPageCatalog(t *testing.T) {
	exe := chromium(t)
	dir := largeCatalog(t, 600)
	snap := snapshotDir(t, dir)
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "large"})
	if err != nil {
		t.Fatal(err)
	}
	// The requests answered 304 Not Modified: a reload revalidates.
	var (
		mu          sync.Mutex
		notModified []string
	)
	h := hs.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.code == http.StatusNotModified {
			mu.Lock()
			notModified = append(notModified, r.URL.Path)
			mu.Unlock()
		}
	}))
	defer ts.Close()
	api := func(query url.Values) listAnswer {
		t.Helper()
		query.Set("limit", "all")
		var a listAnswer
		getJSONInto(t, ts.URL+"/api/v1/packages?"+query.Encode(), &a)
		return a
	}
	all := api(url.Values{})
	if all.Total != 601 {
		t.Fatalf("the catalog has %d packages, want 601", all.Total)
	}

	b := newBrowser(t, exe, 1280, 900)
	base := ts.URL + "/catalogs/large/"
	b.do(chromedp.Navigate(base))
	b.wait(`document.querySelectorAll('#results li a.tile').length === 601 && window.catalogTimings.allTiles !== null`)
	b.watchCSP()
	first := b.eval(`window.catalogTimings.firstRender`).(float64)
	firstAt := b.eval(`window.catalogTimings.firstRenderAt`).(float64)
	t.Logf("first render of 601 packages: %.1f ms to the first screenful laid out (%v), %.1f ms after navigation start; every tile in the page after %.1f ms",
		first, b.eval(`JSON.stringify(window.catalogTimings.firstRenderParts)`), firstAt, b.eval(`window.catalogTimings.allTiles`))
	if got := b.text("#results-count"); !strings.HasPrefix(got, "601 of 601 packages") {
		t.Errorf("results count %q", got)
	}
	if n := b.eval(`document.querySelectorAll('#results a.tile .tile-title').length`); n != float64(601) {
		t.Errorf("%v tiles with a title", n)
	}

	// The search: every word in the name, display name, keywords or
	// short description, as the API answers it.
	for _, q := range []string{"storage", "cert manager", "nfs", "zzz-nothing"} {
		b.setSearch(q)
		want := api(url.Values{"q": {q}}).Total
		b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelector('#results-count').textContent.includes('\u201c%s\u201d')`, want, q))
		if q != "zzz-nothing" && want == 0 {
			t.Errorf("the API finds no package for %q", q)
		}
	}
	b.setSearch("")
	b.wait(`document.querySelectorAll('#results li a.tile').length === 601`)

	// Each filter: the first and the last value of each, alone, then with
	// a search; the tiles shown are what the API answers, the count shown
	// beside the value is the number of tiles.
	facets := b.eval(`[...document.querySelectorAll('#filters fieldset.facet')].map(f => f.dataset.facet)`).([]any)
	if fmt.Sprint(facets) != "[category provider capability installMode infrastructure]" {
		t.Errorf("filters %v", facets)
	}
	var timings []float64
	for _, f := range facets {
		values := b.eval(fmt.Sprintf(`[...document.querySelectorAll('#filters fieldset[data-facet=%q] input')].map(i => i.dataset.value)`, f)).([]any)
		if len(values) == 0 {
			t.Errorf("filter %s has no value", f)
			continue
		}
		for _, v := range []any{values[0], values[len(values)-1]} {
			sel := fmt.Sprintf(`#filters fieldset[data-facet=%q] input[data-value=%q]`, f, v)
			if b.eval(fmt.Sprintf(`document.querySelector(%q).closest('li').offsetParent === null`, sel)) == true {
				// Past the first values: shown by "Show N more".
				b.click(fmt.Sprintf(`#filters fieldset[data-facet=%q] button.more-toggle`, f))
				b.wait(fmt.Sprintf(`document.querySelector(%q).closest('li').offsetParent !== null`, sel))
			}
			shownCount := b.eval(fmt.Sprintf(`document.querySelector(%q).parentElement.querySelector('.count').textContent`, sel))
			b.click(sel)
			want := api(url.Values{f.(string): {v.(string)}}).Total
			b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelector(%q).checked`, want, sel))
			if shownCount != fmt.Sprintf("(%d)", want) {
				t.Errorf("filter %s=%s: the count beside it says %v, it shows %d packages", f, v, shownCount, want)
			}
			if h := b.eval(`location.hash`); !strings.Contains(fmt.Sprint(h), url.QueryEscape(f.(string))+"=") {
				t.Errorf("filter %s=%s: the address %v does not keep it", f, v, h)
			}
			b.click(sel)
			b.wait(`document.querySelectorAll('#results li a.tile').length === 601`)
		}
	}
	// Two filters and a search together.
	cat := b.eval(`document.querySelector('#filters fieldset[data-facet=category] input').dataset.value`).(string)
	mode := "AllNamespaces"
	b.click(fmt.Sprintf(`#filters fieldset[data-facet=category] input[data-value=%q]`, cat))
	b.click(fmt.Sprintf(`#filters fieldset[data-facet=installMode] input[data-value=%q]`, mode))
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelectorAll('#filters input:checked').length === 2`,
		api(url.Values{"category": {cat}, "installMode": {mode}}).Total))
	b.setSearch("operator")
	want := api(url.Values{"category": {cat}, "installMode": {mode}, "q": {"operator"}}).Total
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelector('#results-count').textContent.includes('with the filters')`, want))
	// Every count beside a value with two filters and a search: the
	// packages the search and the other filters let through that have the
	// value (a filter's own selection does not narrow its counts).
	sel := map[string]string{"category": cat, "installMode": mode}
	var shown map[string]map[string]string
	if err := json.Unmarshal([]byte(b.eval(`JSON.stringify(Object.fromEntries([...document.querySelectorAll('#filters fieldset.facet')].map(f => [f.dataset.facet,
		Object.fromEntries([...f.querySelectorAll('input')].map(i => [i.dataset.value, i.parentElement.querySelector('.count').textContent]))])))`).(string)), &shown); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range facets {
		values := b.eval(fmt.Sprintf(`[...document.querySelectorAll('#filters fieldset[data-facet=%q] input')].map(i => i.dataset.value)`, f)).([]any)
		if len(values) > 4 {
			values = append(values[:3], values[len(values)-1])
		}
		for _, v := range values {
			q := url.Values{"q": {"operator"}, f.(string): {v.(string)}}
			for k, x := range sel {
				if k != f {
					q.Set(k, x)
				}
			}
			if want, got := fmt.Sprintf("(%d)", api(q).Total), shown[f.(string)][v.(string)]; got != want {
				t.Errorf("with %v and a search, the count beside %s=%s says %s, want %s", sel, f, v, got, want)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("%d counts checked", checked)
	}
	filtered := b.eval(`location.hash`).(string)
	for _, v := range b.eval(`window.catalogTimings.filters`).([]any) {
		timings = append(timings, v.(float64))
	}
	var complete []float64
	for _, v := range b.eval(`window.catalogTimings.filtersComplete.filter(x => x !== null)`).([]any) {
		complete = append(complete, v.(float64))
	}
	slices.Sort(timings)
	slices.Sort(complete)
	t.Logf("%d search and filter changes: median %.1f ms, max %.1f ms to the first screenful; median %.1f ms, max %.1f ms to every tile",
		len(timings), timings[len(timings)/2], timings[len(timings)-1], complete[len(complete)/2], complete[len(complete)-1])

	// A reload keeps the search and filters: the address holds them.
	b.do(chromedp.Reload())
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelector('#search').value === 'operator'`, want))
	b.watchCSP()
	if got := b.eval(`document.querySelectorAll('#filters input:checked').length`); got != float64(2) {
		t.Errorf("after a reload, %v filters are checked, want 2", got)
	}
	mu.Lock()
	if !slices.Contains(notModified, "/catalogs/large/api/v1/packages") {
		t.Errorf("after a reload, the package list was sent again: the 304s were %v", notModified)
	}
	mu.Unlock()
	b.click(`#filters-clear`)
	b.wait(`document.querySelectorAll('#results li a.tile').length === 601 && location.hash === ''`)

	// The Markdown description: rendered, and what must not get through
	// did not.
	b.setSearch("markdown")
	b.wait(`document.querySelectorAll('#results li a.tile').length === 1`)
	b.click(`#results li a.tile`)
	b.wait(`document.querySelector('#package-name').textContent === 'markdown-test' && document.querySelector('#description h1') !== null`)
	if got := b.text("#package-title"); got != "Markdown Test Operator" {
		t.Errorf("title %q", got)
	}
	checks := map[string]string{
		`document.querySelector('#description table th').textContent`:                                                                     "Setting",
		`document.querySelector('#description strong').textContent`:                                                                       "Markdown Test",
		`document.querySelector('#description a[href="https://example.com/docs"]').target`:                                                "_blank",
		`document.querySelector('#description a[href="https://example.com/logo.png"]').textContent`:                                       "the logo",
		`String(document.querySelectorAll('#description script, #description img, #description [onerror], #description [style]').length)`: "0",
		`String([...document.querySelectorAll('#description a')].filter(a => !/^https:/.test(a.getAttribute('href'))).length)`:            "0",
		`String(window.pwned)`: "undefined",
		`document.querySelector('#description pre code').textContent.trim()`:                                                                 "apiVersion: example.com/v1\nkind: Widget",
		`String(document.querySelector('#description').textContent.includes('javascript link'))`:                                             "true",
		`String(document.querySelector('#facts').textContent.includes('Full Lifecycle'))`:                                                    "true",
		`String(document.querySelector('#facts').textContent.includes('Disconnected, Proxy-aware'))`:                                         "true",
		`String(document.querySelector('#facts').textContent.includes('OwnNamespace, SingleNamespace, AllNamespaces (not MultiNamespace)'))`: "true",
		`String(document.querySelector('#facts a[href^="javascript"]'))`:                                                                     "null",
		`document.querySelector('#facts a[href="mailto:jane@example.com"]').textContent`:                                                     "Jane Doe",
	}
	for expr, want := range checks {
		if got := fmt.Sprint(b.eval(expr)); got != want {
			t.Errorf("%s = %q, want %q", expr, got, want)
		}
	}
	// An owned CRD's example; the required CRD; the example of no CRD.
	b.click(`#crds details.crd[data-kind=Widget] > summary`)
	ex := b.text(`#crds details.crd[data-kind=Widget] pre.example`)
	var cr map[string]any
	if err := json.Unmarshal([]byte(ex), &cr); err != nil || fmt.Sprint(cr["metadata"]) != "map[name:widget-sample]" {
		t.Errorf("the Widget example %q: %v", ex, err)
	}
	if got := b.text("#crds"); !strings.Contains(got, "gadgets.example.com") || !strings.Contains(got, "stray-sample") {
		t.Errorf("the custom resources section lacks the required CRD or the other example: %q", got)
	}
	if got := b.text("#package-deprecated"); got != "" {
		t.Errorf("the package is not deprecated, the page says %q", got)
	}

	// Deep links: a channel, a bundle; back and forward; a new tab.
	pkgURL := b.eval(`location.href`).(string)
	b.click(`#channels details.channel[data-channel=fast] summary`)
	b.click(`#channels details.channel[data-channel=fast] a.ch-link`)
	b.wait(`document.querySelector('#view-title').textContent === 'Channel fast of package markdown-test' && !document.querySelector('#view').hidden`)
	if got := b.text("#view-deprecation"); !strings.Contains(got, "ChannelDeprecated") || !strings.Contains(got, "channel fast is no longer updated, use stable") {
		t.Errorf("channel deprecation %q", got)
	}
	if got := b.eval(`document.querySelector('#updates-channel').value + ' ' + document.querySelector('#install-channel').value`); got != "fast fast" {
		t.Errorf("the channel view's questions ask about %v", got)
	}
	chURL := b.eval(`location.href`).(string)
	b.click(`#channels details.channel[data-channel=stable] summary`)
	b.click(`#channels details.channel[data-channel=stable] a[href*="bundle=markdown-test.v1.0.0"]`)
	b.wait(`document.querySelector('#view-title').textContent === 'Bundle markdown-test.v1.0.0 of package markdown-test' && document.querySelector('#description').textContent.includes('The old version.')`)
	if got := b.text("#view-deprecation"); !strings.Contains(got, "BundleDeprecated") || !strings.Contains(got, "has a known bug") {
		t.Errorf("bundle deprecation %q", got)
	}
	if got := b.eval(`document.querySelector('#updates-from').value`); got != "markdown-test.v1.0.0" {
		t.Errorf("the bundle view's upgrade question starts from %v", got)
	}
	bundleURL := b.eval(`location.href`).(string)
	b.back()
	b.wait(`document.querySelector('#view-title').textContent === 'Channel fast of package markdown-test' && !document.querySelector('#view').hidden`)
	b.back()
	b.wait(`document.querySelector('#view').hidden && document.querySelector('#description h1') !== null && !document.querySelector('#package').hidden`)
	if got := b.eval(`location.href`); got != pkgURL {
		t.Errorf("back to %v, want %s", got, pkgURL)
	}
	b.back()
	b.wait(`!document.querySelector('#browse').hidden && document.querySelector('#search').value === 'markdown' && document.querySelectorAll('#results li a.tile').length === 1`)
	b.forward()
	b.wait(`document.querySelector('#package-name').textContent === 'markdown-test' && !document.querySelector('#package').hidden && document.querySelector('#browse').hidden`)
	b.forward()
	b.wait(`document.querySelector('#view-title').textContent === 'Channel fast of package markdown-test'`)
	if got := b.eval(`location.href`); got != chURL {
		t.Errorf("forward to %v, want %s", got, chURL)
	}
	// Each address opened in a new tab shows the same view.
	for _, c := range []struct{ url, ready string }{
		{bundleURL, `document.querySelector('#view-title').textContent === 'Bundle markdown-test.v1.0.0 of package markdown-test'`},
		{chURL, `document.querySelector('#view-title').textContent === 'Channel fast of package markdown-test' && document.querySelector('#channels details.channel[data-channel=fast]').open`},
		{base + filtered, fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelectorAll('#filters input:checked').length === 2`, want)},
	} {
		tab := b.newTab()
		tab.do(chromedp.Navigate(c.url))
		tab.wait(c.ready)
		tab.close()
	}

	// The keyboard alone: "/" to the search, type, down to the first
	// result, Enter opens it; Shift+Tab twice to "All packages", Enter
	// goes back with the focus on the package's tile.
	b.do(chromedp.Navigate(base))
	b.wait(`document.querySelectorAll('#results li a.tile').length === 601`)
	b.do(slashKey())
	b.wait(`document.activeElement === document.querySelector('#search')`)
	b.do(chromedp.KeyEvent("widgets"))
	b.wait(`document.querySelectorAll('#results li a.tile').length === 1`)
	b.do(chromedp.KeyEvent(kb.ArrowDown))
	b.wait(`document.activeElement && document.activeElement.dataset.name === 'markdown-test'`)
	b.do(chromedp.KeyEvent(kb.Enter))
	b.wait(`document.querySelector('#package-name').textContent === 'markdown-test' && document.activeElement === document.querySelector('#package-title')`)
	shiftTab := chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))
	b.do(shiftTab)
	b.wait(`document.activeElement === document.querySelector('#crumb-package')`)
	b.do(shiftTab)
	b.wait(`document.activeElement === document.querySelector('#back-link')`)
	b.do(chromedp.KeyEvent(kb.Enter))
	b.wait(`!document.querySelector('#browse').hidden && document.activeElement && document.activeElement.dataset.name === 'markdown-test'`)
	// The arrow keys between tiles, after changes that took hundreds of
	// tiles out (the list they were in was retired for a new #results,
	// app.js retireResults): they move in the list shown, and the retired
	// list is emptied and leaves the page.
	b.setSearch("")
	b.wait(`document.querySelectorAll('#results li a.tile').length === 601`)
	storage := api(url.Values{"q": {"storage"}}).Total
	if storage < 3 {
		t.Fatalf("the API finds %d packages for storage, want 3 or more", storage)
	}
	b.setSearch("storage")
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d`, storage))
	b.eval(`document.querySelector('#results a.tile').focus(); true`)
	b.do(chromedp.KeyEvent(kb.ArrowRight))
	b.wait(`document.activeElement === document.querySelectorAll('#results a.tile')[1]`)
	b.do(chromedp.KeyEvent(kb.ArrowDown))
	b.wait(`document.activeElement === document.querySelectorAll('#results a.tile')[2]`)
	b.do(chromedp.KeyEvent(kb.ArrowUp))
	b.do(chromedp.KeyEvent(kb.ArrowLeft))
	b.do(chromedp.KeyEvent(kb.ArrowLeft))
	b.wait(`document.activeElement === document.querySelector('#search')`)
	b.wait(fmt.Sprintf(`document.querySelectorAll('ul.tiles').length === 1 && document.querySelectorAll('#results').length === 1 && document.querySelectorAll('a.tile').length === %d`, storage))
	b.checkCSP()

	// A phone's width: nothing wider than the window, on the list and on
	// the package (tables and code scroll within their boxes).
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Navigate(base + "#pkg=markdown-test"))
	b.wait(`document.querySelector('#package-name').textContent === 'markdown-test' && !document.querySelector('#package').hidden`)
	for _, view := range []string{"#pkg=markdown-test", "#pkg=markdown-test&bundle=markdown-test.v1.1.0", ""} {
		b.do(chromedp.Navigate(base + view))
		if view == "" {
			b.wait(`!document.querySelector('#browse').hidden && document.querySelectorAll('#results li a.tile').length === 601`)
		} else {
			b.wait(`!document.querySelector('#package').hidden && document.querySelector('#description').childElementCount > 0`)
		}
		if w := b.eval(`document.documentElement.scrollWidth - window.innerWidth`); w.(float64) > 0 {
			t.Errorf("%q at 390 px: the page is %v px wider than the window", view, w)
		}
	}
	if open := b.eval(`document.querySelector('#filters-box').open`); open != false {
		t.Error("at a phone's width the filters start folded")
	}
	b.checkCSP()
}

// statusRecorder keeps the status of an answer.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// slashKey presses "/" as a keyboard does: one keyDown that carries its
// text (chromedp's KeyEvent sends the character as an event of its own,
// which a page's keydown handler cannot cancel).
func slashKey() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: "/", Code: "Slash", WindowsVirtualKeyCode: 191, NativeVirtualKeyCode: 191}
			if typ == input.DispatchKeyEventTypeKeyDown {
				p.Text, p.UnmodifiedText = "/", "/"
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// browser is a headless Chromium tab driven by a test.
type browser struct {
	t      *testing.T
	ctx    context.Context
	cancel context.CancelFunc
}

func newBrowser(t *testing.T, exe string, w, h int) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(w, h))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx, chromedp.WithLogf(func(string, ...any) {}), chromedp.WithErrorf(func(string, ...any) {}))
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 15*time.Minute) // a hang guard
	t.Cleanup(cancel3)
	return &browser{t: t, ctx: ctx, cancel: cancel3}
}

// newTab opens another tab of the same browser.
func (b *browser) newTab() *browser {
	ctx, cancel := chromedp.NewContext(b.ctx)
	return &browser{t: b.t, ctx: ctx, cancel: cancel}
}

func (b *browser) close() {
	_ = chromedp.Cancel(b.ctx)
	b.cancel()
}

// back and forward go through the tab's history, as its buttons do (a
// hash change loads no page: chromedp's NavigateBack would wait for one).
func (b *browser) back()    { b.eval(`history.back(); true`) }
func (b *browser) forward() { b.eval(`history.forward(); true`) }

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) eval(expr string) any {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](expr))
	// Not run: the page was being replaced (see wait).
	for i := 0; err != nil && i < 20 && b.ctx.Err() == nil && contextReplaced(err); i++ {
		v, err = chromedp.Run(b.ctx, chromedp.Evaluate[any](expr))
	}
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// wait waits until expr is true: on readiness, with a generous deadline
// as a hang guard only.
func (b *browser) wait(expr string) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[any](expr, chromedp.WithPollingTimeout(5*time.Minute)))
	// A navigation or reload that replaces the page while the poll starts
	// takes its JavaScript context away: poll again in the new one.
	for i := 0; err != nil && i < 20 && b.ctx.Err() == nil && contextReplaced(err); i++ {
		_, err = chromedp.Run(b.ctx, chromedp.Poll[any](expr, chromedp.WithPollingTimeout(5*time.Minute)))
	}
	if err != nil {
		state, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`JSON.stringify({url: location.href, search: document.querySelector('#search').value, count: document.querySelector('#results-count').textContent, status: document.querySelector('#status').textContent, install: document.querySelector('#install-result').textContent.slice(0, 300), updates: document.querySelector('#updates-result').textContent.slice(0, 300), active: document.activeElement && (document.activeElement.id || document.activeElement.tagName)})`))
		b.t.Fatalf("waiting for %s: %v; the page: %s", expr, err, state)
	}
}

// contextReplaced reports whether err is Chromium's answer to a script
// run in a page that a navigation has just replaced.
func contextReplaced(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context with specified id") || strings.Contains(msg, "Execution context was destroyed")
}

// click clicks the element sel selects once it is shown, as the page's
// own click handlers see it. It is not a mouse event at coordinates: an
// answer that arrives above the element (the install tree above the
// upgrade form) moves it between the moment its box is read and the
// moment the mouse would press, and the press would land elsewhere. The
// keyboard path of TestPageCatalog is driven by real key events.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.wait(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e !== null && e.getClientRects().length > 0; })()`, sel))
	b.eval(fmt.Sprintf(`document.querySelector(%q).click(); true`, sel))
}

// setSearch replaces the search text as a person types it.
func (b *browser) setSearch(q string) {
	b.t.Helper()
	b.eval(`document.querySelector('#search').value = ''; document.querySelector('#search').dispatchEvent(new Event('input')); true`)
	if q == "" {
		return
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#search"), q))
}

// watchCSP records the page's Content-Security-Policy violations from now
// on; checkCSP fails the test on any.
func (b *browser) watchCSP() {
	b.eval(`window.cspViolations = window.cspViolations || []; document.addEventListener('securitypolicyviolation', e => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI)); true`)
}

func (b *browser) checkCSP() {
	b.t.Helper()
	if v := b.eval(`(window.cspViolations || []).join('; ')`); v != "" {
		b.t.Errorf("Content-Security-Policy violations: %v", v)
	}
}

func (b *browser) shoot(file string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// TestPageScreenshots saves the pictures of docs/serve-http.md from a real
// catalog: OPM_PAGE_SCREENSHOTS=DIR OPM_PAGE_CATALOG=CATALOG, and
// OPM_PAGE_PACKAGE=NAME for the package page (default: the first tile):
// the front page, the package page, its custom resources, its questions
// (upgrade path and what gets installed) and the package at a phone's
// width.
// It skips, saying so, without them.
func TestPageScreenshots(t *testing.T) {
	shots, catalog := os.Getenv("OPM_PAGE_SCREENSHOTS"), os.Getenv("OPM_PAGE_CATALOG")
	if shots == "" || catalog == "" {
		t.Skip("set OPM_PAGE_SCREENSHOTS=DIR and OPM_PAGE_CATALOG=CATALOG to save the page's pictures")
	}
	exe := chromium(t)
	snap := snapshotDir(t, catalog)
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: filepath.Base(catalog)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	b := newBrowser(t, exe, 1280, 860)
	b.do(chromedp.Navigate(ts.URL + "/"))
	b.wait(`window.catalogTimings.allTiles !== null && [...document.querySelectorAll('#results img.tile-icon')].slice(0, 12).every(i => i.complete)`)
	b.shoot(filepath.Join(shots, "serve-http-catalog.png"))
	pkg := os.Getenv("OPM_PAGE_PACKAGE")
	if pkg == "" {
		pkg = b.eval(`document.querySelector('#results a.tile').dataset.name`).(string)
	}
	b.do(chromedp.Navigate(ts.URL + "/#pkg=" + url.QueryEscape(pkg)))
	b.wait(`!document.querySelector('#package').hidden && document.querySelector('#description').childElementCount > 0 && (document.querySelector('#package-icon').hidden || document.querySelector('#package-icon').complete)`)
	b.shoot(filepath.Join(shots, "serve-http-operator.png"))
	b.click(`#crds details.crd > summary`)
	b.eval(`document.querySelector('#crds-section').scrollIntoView(); true`)
	b.shoot(filepath.Join(shots, "serve-http-crds.png"))
	// The questions: what a new Subscription installs (asked as the
	// package opened), and the upgrade path from the default channel's
	// third entry.
	b.eval(`const s = document.querySelector('#updates-from'); s.selectedIndex = Math.min(3, s.options.length - 1); true`)
	b.click(`#updates-submit`)
	b.wait(`document.querySelector('#updates-verdict') !== null && document.querySelector('#install-summary') !== null`)
	b.eval(`document.querySelector('#install-section').scrollIntoView(); document.activeElement.blur(); true`)
	b.shoot(filepath.Join(shots, "serve-http-questions.png"))
	// A phone's width.
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Reload())
	b.wait(`!document.querySelector('#package').hidden && document.querySelector('#description').childElementCount > 0`)
	b.eval(`window.scrollTo(0, 0); document.activeElement.blur(); true`)
	b.shoot(filepath.Join(shots, "serve-http-phone.png"))
}
