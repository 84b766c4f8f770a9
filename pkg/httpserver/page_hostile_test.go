package httpserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fastopm/fastopm/pkg/httpserver"
)

// A catalog as its authors sometimes write it: CSV fields of the wrong
// type, alm-examples that are not a list of objects, icons that are not
// images, words longer than a phone's screen, HTML where text is expected,
// names that need escaping in a URL. The server answers valid JSON and the
// page shows what it can, safely, at any width.

// Names of hostileCatalog's bundles and channels that need escaping.
const (
	oddBundle  = "b/../x?#%2F y"
	oddChannel = "a/b #?&=%2F <x>"
)

var (
	longWord  = strings.Repeat("W", 240)
	longCRD   = strings.Repeat("verylongplural", 12) + ".example.com"
	longEntry = "long-words.v1.0.0-" + strings.Repeat("build", 40)
	// pngPixel is a 1x1 PNG.
	pngPixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
)

// hostileCatalog writes the catalog and returns its directory.
func hostileCatalog(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	add := func(v any) {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	type m = map[string]any
	pkgProp := func(pkg, version string) m {
		return m{"type": "olm.package", "value": m{"packageName": pkg, "version": version}}
	}
	// one adds a package with one channel and one bundle.
	one := func(pkg string, icon m, props ...m) {
		p := m{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"}
		if icon != nil {
			p["icon"] = icon
		}
		add(p)
		add(m{"schema": "olm.channel", "package": pkg, "name": "stable", "entries": []m{{"name": pkg + ".v1.0.0"}}})
		add(m{"schema": "olm.bundle", "package": pkg, "name": pkg + ".v1.0.0", "image": "example.com/" + pkg + ":v1",
			"properties": append([]m{pkgProp(pkg, "1.0.0")}, props...)})
	}
	meta := func(v m) m { return m{"type": "olm.csv.metadata", "value": v} }

	// Words longer than a phone's screen, everywhere.
	long := meta(m{
		"displayName": "Long " + longWord,
		"provider":    m{"name": "Provider" + longWord},
		"keywords":    []string{"keyword" + longWord},
		"annotations": m{
			"description":    "Short" + longWord,
			"categories":     "Category" + longWord,
			"capabilities":   "Basic Install",
			"containerImage": "registry.example.com/" + strings.ToLower(longWord) + ":v1",
			"repository":     "https://example.com/" + strings.ToLower(longWord),
		},
		"description":     "# Long\n\nA line: " + longWord + longWord + "\n\n    " + longWord + "\n",
		"links":           []m{{"name": "Link" + longWord, "url": "https://example.com/" + longWord}},
		"crdDescriptions": m{"owned": []m{{"name": longCRD, "version": "v1", "kind": "Long"}}, "required": []m{{"name": "x" + longCRD, "version": "v1", "kind": "Other"}}},
	})
	add(m{"schema": "olm.package", "name": "long-words", "defaultChannel": "stable"})
	add(m{"schema": "olm.channel", "package": "long-words", "name": "stable", "entries": []m{{"name": longEntry}, {"name": "long-words.v1.1.0", "replaces": longEntry}}})
	add(m{"schema": "olm.bundle", "package": "long-words", "name": longEntry, "image": "example.com/long-words:v1.0.0", "properties": []m{pkgProp("long-words", "1.0.0"), long}})
	add(m{"schema": "olm.bundle", "package": "long-words", "name": "long-words.v1.1.0", "image": "example.com/long-words:v1.1.0", "properties": []m{pkgProp("long-words", "1.1.0"), long}})

	// A CSV among the bundle's objects (the loader does not check its
	// fields) with values of the wrong types: what decodes is shown.
	csvObj, err := json.Marshal(m{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": m{"name": "odd-types.v1.0.0", "annotations": m{"capabilities": 3, "containerImage": "example.com/odd:v1",
			"alm-examples": `[1, "x", null, {"apiVersion": "odd.example.com/v1", "kind": "Odd", "metadata": {"name": "odd-sample"}}]`}},
		"spec": m{
			"displayName": 42, "provider": "Odd Corp", "keywords": "single",
			"maintainers":  []any{m{"name": 5}, m{"email": "odd@example.com"}, m{}},
			"links":        []any{m{"name": "Docs", "url": "https://example.com/docs"}, "str", 5, m{}},
			"installModes": []any{m{"type": 1, "supported": "yes"}, m{"type": "AllNamespaces", "supported": true}},
			"customresourcedefinitions": m{
				"owned":    []any{m{"name": "odds.odd.example.com", "version": "v1", "kind": "Odd"}, 5, "x", nil},
				"required": []any{m{"name": 1, "kind": []string{"K"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	one("odd-types", nil, m{"type": "olm.bundle.object", "value": m{"data": base64.StdEncoding.EncodeToString(csvObj)}})
	one("alm-object", nil, meta(m{"displayName": "ALM object", "annotations": m{"alm-examples": `{"apiVersion": "x.example.com/v1", "kind": "X"}`}}))
	one("alm-broken", nil, meta(m{"displayName": "ALM broken", "annotations": m{"alm-examples": `[{"apiVersion": "x.example.com/v1"`}}))

	// HTML where text is expected: shown as text.
	add(m{"schema": "olm.deprecations", "package": "html-text", "entries": []m{{"reference": m{"schema": "olm.package"}, "message": `<img src=x onerror="window.pwned=1">`}}})
	one("html-text", nil, meta(m{
		"displayName": `<img src=x onerror="window.pwned=2">HTML`, "provider": m{"name": "<b>bold</b>", "url": "javascript:window.pwned=3"},
		"maintainers": []m{{"name": "<script>window.pwned=4</script>", "email": `"><script>window.pwned=5</script>`}},
		"annotations": m{"repository": "javascript:window.pwned=6", "categories": "<b>Cat</b>",
			"alm-examples": `[{"apiVersion": "x.example.com/v1", "kind": "</pre><script>window.pwned=7</script>"}]`},
		"description": "<script>window.pwned=8</script>\n\n[x](javascript:window.pwned=9) <img src=x onerror=\"window.pwned=10\">",
	}))

	// Icons: not an image; an image with no media type; bytes that are
	// no image under an image type.
	one("icon-html", m{"base64data": base64.StdEncoding.EncodeToString([]byte("<html><script>window.pwned=11</script></html>")), "mediatype": "text/html"},
		meta(m{"displayName": "Icon HTML"}))
	one("icon-untyped", m{"base64data": base64.StdEncoding.EncodeToString(pngPixel), "mediatype": ""}, meta(m{"displayName": "Icon untyped"}))
	one("icon-broken", m{"base64data": base64.StdEncoding.EncodeToString([]byte("not a picture")), "mediatype": "image/png"}, meta(m{"displayName": "Icon broken"}))

	// Names that need escaping in a URL.
	add(m{"schema": "olm.package", "name": "odd-names", "defaultChannel": oddChannel})
	add(m{"schema": "olm.channel", "package": "odd-names", "name": oddChannel, "entries": []m{{"name": oddBundle}}})
	add(m{"schema": "olm.bundle", "package": "odd-names", "name": oddBundle, "image": "example.com/odd-names:v1",
		"properties": []m{pkgProp("odd-names", "1.0.0"), meta(m{"displayName": "Odd names"})}})

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOperatorHostile checks the JSON answers for hostileCatalog: what a
// CSV of wrong types gives, alm-examples that are not a list of objects,
// and icons that are not images.
func TestOperatorHostile(t *testing.T) {
	hs, err := httpserver.New(snapshotDir(t, hostileCatalog(t)), httpserver.Options{CatalogName: "hostile"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()

	type crd struct {
		Name, Kind string
		Examples   []string
	}
	type operator struct {
		Maintainers                []struct{ Name, Email string }
		Links                      []struct{ Name, URL string }
		OwnedCRDs, RequiredCRDs    []crd
		Examples                   []string
		ExamplesProblem            string
		InstallModes               []string
		ContainerImage, Capability string
	}
	var odd struct{ Operator operator }
	getJSONInto(t, ts.URL+"/api/v1/packages/odd-types", &odd)
	op := odd.Operator
	// The empty ones (a number, a string, {} in the list) are left out.
	if fmt.Sprint(op.Maintainers) != "[{ odd@example.com}]" {
		t.Errorf("maintainers %v", op.Maintainers)
	}
	if fmt.Sprint(op.Links) != "[{Docs https://example.com/docs}]" {
		t.Errorf("links %v", op.Links)
	}
	if len(op.OwnedCRDs) != 1 || op.OwnedCRDs[0].Name != "odds.odd.example.com" || len(op.OwnedCRDs[0].Examples) != 1 ||
		!strings.Contains(op.OwnedCRDs[0].Examples[0], "odd-sample") {
		t.Errorf("owned CRDs %+v", op.OwnedCRDs)
	}
	if len(op.RequiredCRDs) != 0 || len(op.Examples) != 0 {
		t.Errorf("required CRDs %+v, other examples %q", op.RequiredCRDs, op.Examples)
	}
	if op.ExamplesProblem != "3 of the 4 items of the alm-examples annotation are not objects (custom resources): left out" {
		t.Errorf("examplesProblem %q", op.ExamplesProblem)
	}
	if fmt.Sprint(op.InstallModes) != "[AllNamespaces]" || op.ContainerImage != "example.com/odd:v1" {
		t.Errorf("install modes %v, container image %q: what decodes is kept", op.InstallModes, op.ContainerImage)
	}
	for pkg, want := range map[string]string{
		"alm-object": "the alm-examples annotation is a JSON object, not a JSON list of custom resources",
		"alm-broken": "the alm-examples annotation is not valid JSON: unexpected end of JSON input",
	} {
		var a struct{ Operator operator }
		getJSONInto(t, ts.URL+"/api/v1/packages/"+pkg, &a)
		if a.Operator.ExamplesProblem != want {
			t.Errorf("%s: examplesProblem %q, want %q", pkg, a.Operator.ExamplesProblem, want)
		}
	}

	// Icons: the list and the package say icon only for an image.
	var list struct {
		Packages []struct {
			Name string
			Icon bool
		}
	}
	getJSONInto(t, ts.URL+"/api/v1/packages?limit=all", &list)
	icons := map[string]bool{}
	for _, p := range list.Packages {
		icons[p.Name] = p.Icon
	}
	for pkg, want := range map[string]struct {
		icon bool
		code int
		typ  string
	}{
		"icon-html":    {false, http.StatusNotFound, "application/json"},
		"icon-untyped": {true, http.StatusOK, "image/png"},
		"icon-broken":  {true, http.StatusOK, "image/png"},
		"odd-types":    {false, http.StatusNotFound, "application/json"},
	} {
		var p struct{ Icon bool }
		getJSONInto(t, ts.URL+"/api/v1/packages/"+pkg, &p)
		if icons[pkg] != want.icon || p.Icon != want.icon {
			t.Errorf("%s: icon %v in the list, %v in the package, want %v", pkg, icons[pkg], p.Icon, want.icon)
		}
		resp, _ := get(t, ts.URL+"/api/v1/packages/"+pkg+"/icon")
		if resp.StatusCode != want.code || !strings.HasPrefix(resp.Header.Get("Content-Type"), want.typ) {
			t.Errorf("%s: icon answered %d %s, want %d %s", pkg, resp.StatusCode, resp.Header.Get("Content-Type"), want.code, want.typ)
		}
	}

	// Escaped names: the bundle's answer.
	var b struct{ Name string }
	getJSONInto(t, ts.URL+"/api/v1/packages/odd-names/bundles/"+url.PathEscape(oddBundle), &b)
	if b.Name != oddBundle {
		t.Errorf("bundle %q, want %q", b.Name, oddBundle)
	}
}

// TestPageHostile drives the page on hostileCatalog: nothing from the
// catalog runs or is put in the page as HTML, no script error, no
// Content-Security-Policy violation, nothing wider than a phone's window,
// empty values leave no stray commas, an icon that is no image gives way to
// the placeholder, escaped names deep-link, and a package opened in a new
// tab has the catalog's name in its title even when its answer comes
// before the package list's.
func TestPageHostile(t *testing.T) {
	exe := chromium(t)
	hs, err := httpserver.New(snapshotDir(t, hostileCatalog(t)), httpserver.Options{CatalogName: "hostile"})
	if err != nil {
		t.Fatal(err)
	}
	// The package list waits, when asked, until a package's answer has
	// been sent: the order of a new tab whose list is slow.
	var (
		mu       sync.Mutex
		holdList chan struct{}
	)
	h := hs.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hold := holdList
		mu.Unlock()
		if hold != nil && r.URL.Path == "/api/v1/packages" {
			<-hold
		}
		h.ServeHTTP(w, r)
		if hold != nil && strings.HasPrefix(r.URL.Path, "/api/v1/packages/") && !strings.HasSuffix(r.URL.Path, "/icon") {
			mu.Lock()
			if holdList == hold {
				close(hold)
				holdList = nil
			}
			mu.Unlock()
		}
	}))
	defer ts.Close()
	base := ts.URL + "/"

	b := newBrowser(t, exe, 1280, 900)
	checkErrors := watchErrors(b)
	b.do(chromedp.Navigate(base))
	b.wait(`window.catalogTimings.allTiles !== null && document.querySelectorAll('#results a.tile').length === 9`)
	// Icons: the placeholder for an icon that is no image (the server
	// says so) and for one the browser cannot show; the image otherwise.
	b.wait(`document.querySelector('a.tile[data-name=icon-broken] .tile-icon.placeholder') !== null`)
	for name, want := range map[string]string{"icon-html": "SPAN", "icon-broken": "SPAN", "icon-untyped": "IMG"} {
		if got := b.eval(fmt.Sprintf(`document.querySelector('a.tile[data-name=%q] .tile-icon').tagName`, name)); got != want {
			t.Errorf("%s's tile icon is a %v, want a %s", name, got, want)
		}
	}

	// Every package, and the views with escaped names, opened in a new
	// tab: shown, nothing runs, the title names the catalog.
	views := []struct{ hash, ready string }{
		{"#pkg=odd-names&channel=" + url.QueryEscape(oddChannel), fmt.Sprintf(`document.querySelector('#view-title').textContent === %q`, "Channel "+oddChannel+" of package odd-names")},
		{"#pkg=odd-names&bundle=" + url.QueryEscape(oddBundle), fmt.Sprintf(`document.querySelector('#view-title').textContent === %q`, "Bundle "+oddBundle+" of package odd-names")},
	}
	for _, p := range []string{"long-words", "odd-types", "alm-object", "alm-broken", "html-text", "icon-html", "icon-untyped", "icon-broken", "odd-names"} {
		views = append(views, struct{ hash, ready string }{"#pkg=" + p, fmt.Sprintf(`document.querySelector('#package-name').textContent === %q`, p)})
	}
	for _, v := range views {
		mu.Lock()
		holdList = make(chan struct{})
		mu.Unlock()
		tab := b.newTab()
		checkTab := watchErrors(tab)
		tab.do(chromedp.Navigate(base + v.hash))
		tab.wait(v.ready + ` && !document.querySelector('#package').hidden && document.querySelector('#status').hidden && document.querySelector('#install-summary') !== null`)
		tab.wait(`document.querySelector('#catalog-name').textContent === 'hostile'`)
		if got := tab.eval(`document.title`).(string); !strings.HasSuffix(got, " · hostile") {
			t.Errorf("%s: the title %q does not name the catalog", v.hash, got)
		}
		if got := tab.eval(`String(window.pwned) + ' ' + document.querySelectorAll('#package img:not(#package-icon, #graph-img), #package script, #package [onerror], #package a[href^="javascript"]').length`); got != "undefined 0" {
			t.Errorf("%s: window.pwned and elements from the catalog's text: %v", v.hash, got)
		}
		checkTab(v.hash)
		tab.close()
	}

	// A view of something the catalog does not have says so in the
	// title too, with the catalog's name.
	for _, v := range []struct{ hash, title string }{
		{"#pkg=no-such-package", "No package no-such-package · hostile"},
		{"#pkg=odd-names&channel=no-such-channel", "No channel no-such-channel · "},
		{"#pkg=odd-names&bundle=no-such-bundle", "No bundle no-such-bundle · "},
	} {
		b.do(chromedp.Navigate(base + v.hash))
		b.wait(fmt.Sprintf(`!document.querySelector('#status').hidden && document.title.startsWith(%q)`, v.title))
		if got := b.eval(`document.title`).(string); !strings.HasSuffix(got, " · hostile") {
			t.Errorf("%s: the title is %q, want %q… naming the catalog", v.hash, got, v.title)
		}
	}

	// Empty values leave no stray commas; what decodes is shown.
	b.do(chromedp.Navigate(base + "#pkg=odd-types"))
	b.wait(`document.querySelector('#package-name').textContent === 'odd-types' && document.querySelector('#facts').textContent.includes('Maintainers')`)
	facts := b.eval(`[...document.querySelectorAll('#facts dt')].map(dt => dt.textContent + ': ' + dt.nextElementSibling.textContent).join('\n')`).(string)
	for _, want := range []string{"Maintainers: odd@example.com", "Links: Docs", "Container image: example.com/odd:v1", "Install modes: AllNamespaces"} {
		if !strings.Contains(facts, want+"\n") && !strings.HasSuffix(facts, want) {
			t.Errorf("the facts lack %q:\n%s", want, facts)
		}
	}
	if got := b.eval(`document.querySelectorAll('#crds details.crd').length + ' ' + document.querySelector('#crds').textContent.includes('Required')`); got != "1 false" {
		t.Errorf("CRDs shown and required ones: %v, want the one owned CRD", got)
	}

	// A phone's width: nothing wider than the window.
	b.do(chromedp.EmulateViewport(390, 844))
	for _, v := range []string{"", "#pkg=long-words", "#pkg=long-words&bundle=long-words.v1.1.0", "#pkg=html-text", "#pkg=odd-names"} {
		b.do(chromedp.Navigate(base+v), chromedp.Reload())
		if v == "" {
			b.wait(`window.catalogTimings.allTiles !== null && !document.querySelector('#browse').hidden`)
		} else {
			b.wait(`!document.querySelector('#package').hidden && document.querySelector('#description').childElementCount > 0 && document.querySelector('#install-summary') !== null && (!location.hash.includes('bundle=') || !document.querySelector('#view').hidden)`)
		}
		if w := b.eval(`document.documentElement.scrollWidth - window.innerWidth`); w.(float64) > 0 {
			wide := b.eval(`[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && e.offsetParent !== null).slice(0, 6).map(e => e.tagName + '#' + e.id + '.' + e.className).join(' ')`)
			t.Errorf("%q at 390 px: the page is %v px wider than the window (%v)", v, w, wide)
		}
	}
	checkErrors("the main tab")
}

// watchErrors records, from now on, the tab's script errors and
// Content-Security-Policy violations (on every page it loads); the func it
// returns fails the test on any.
func watchErrors(b *browser) func(where string) {
	b.t.Helper()
	var (
		mu   sync.Mutex
		errs []string
	)
	if err := chromedp.Listen(b.ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs = append(errs, e.ExceptionDetails.Text+" "+fmt.Sprint(e.ExceptionDetails.Exception))
		case *log.EventEntryAdded:
			if strings.Contains(e.Entry.Text, "Content Security Policy") {
				errs = append(errs, e.Entry.Text)
			}
		}
	}); err != nil {
		b.t.Fatal(err)
	}
	return func(where string) {
		b.t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if len(errs) > 0 {
			b.t.Errorf("%s: script errors or Content-Security-Policy violations: %q", where, errs)
		}
	}
}
