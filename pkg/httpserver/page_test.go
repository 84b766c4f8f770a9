package httpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// chromium finds a Chromium to drive; the test skips, saying so, without
// one (.ci/run installs Debian's chromium package).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (chromium, chromium-browser or google-chrome on the PATH): the page's browser test needs one; hack/install-chromium.sh installs Debian's")
	return ""
}

// pageCatalog is three real and hand-made packages in one catalog: etcd
// (testdata/updates: replaces, skips, skipRange), test-package
// (deprecations) and cluster-kube-descheduler-operator (icon,
// description, 44 bundles).
func pageCatalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFiles(t, dir, map[string]string{
		"etcd/catalog.yaml":             "../../testdata/updates/etcd/catalog.yaml",
		"deprecations/catalog.yaml":     "../../testdata/catalogs/fixture-olm-deprecations/example-operator.v0.2.0-deprecations.yaml",
		"kube-descheduler/catalog.json": "../../testdata/catalogs/kube-descheduler-v4.12/cluster-kube-descheduler-operator/catalog.json",
		// cron: an update whose CRD changes scope (crds_test.go).
		"cron/catalog.json": filepath.Join(writeCron(t), "catalog.json"),
	})
	return dir
}

// TestPage drives the web page in headless Chromium against the real
// server: it searches, opens a package, checks what is shown against the
// JSON answers, draws the graph and asks an upgrade path, at the root and
// under /catalogs/NAME/. (The pictures of docs/serve-http.md are
// TestPageScreenshots'.)
func TestPage(t *testing.T) {
	exe := chromium(t)
	testutil.UseGraphviz(t)
	snap := snapshotDir(t, pageCatalog(t))
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "page-test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()

	// What the page must show, from the JSON answers.
	var desched struct {
		Channels []struct{ Name string }
		Bundles  []struct{ Name string }
	}
	getJSONInto(t, ts.URL+"/api/v1/packages/cluster-kube-descheduler-operator", &desched)
	var upd struct {
		Head struct{ Name string }
		Next struct{ To struct{ Name string } }
		Path []struct {
			CRDs *struct {
				Unknown string
				Changes []any
			}
		}
	}
	getJSONInto(t, ts.URL+"/api/v1/updates?"+url.Values{"package": {"etcd"}, "from": {"0.9.0"}}.Encode(), &upd)
	if upd.Next.To.Name == "" || len(upd.Path) == 0 {
		t.Fatalf("no upgrade path from etcd 0.9.0: %+v", upd)
	}

	// OLM v1's answer for etcd's default channel, the page's first choice.
	var etcd struct{ DefaultChannel string }
	getJSONInto(t, ts.URL+"/api/v1/packages/etcd", &etcd)
	var v1 struct{ Bundle struct{ Name string } }
	getJSONInto(t, ts.URL+"/api/v1/olmv1/resolve?"+url.Values{"package": {"etcd"}, "channel": {etcd.DefaultChannel}}.Encode(), &v1)
	if v1.Bundle.Name == "" {
		t.Fatalf("OLM v1 resolves etcd's channel %q to nothing", etcd.DefaultChannel)
	}

	b := newBrowser(t, exe, 1280, 800)
	text, eval, wait := b.text, b.eval, b.wait
	for _, base := range []string{ts.URL + "/", ts.URL + "/catalogs/page-test/"} {
		b.do(chromedp.Navigate(base))
		wait(`document.querySelectorAll('#results li a').length === 4`)
		// Violations of the Content-Security-Policy from now on.
		b.watchCSP()
		if got := text("#catalog-name"); got != "page-test" {
			t.Errorf("%s: catalog name %q", base, got)
		}
		if got := text("#results-count"); !strings.Contains(got, "4 of 4") {
			t.Errorf("%s: results count %q", base, got)
		}

		// A deprecated package is marked on its tile.
		if got := eval(`[...document.querySelectorAll('#results li.deprecated a.tile')].map(a => a.dataset.name + ': ' + a.querySelector('.badge.warn').textContent).join()`); got != "test-package: deprecated" {
			t.Errorf("%s: deprecated tiles %v", base, got)
		}

		// Search, then open the package found: wait for the list of the
		// whole word, or the link clicked may be replaced.
		b.do(chromedp.SendKeys("#search", "desched"))
		wait(`document.querySelectorAll('#results li a').length === 1 && document.querySelector('#results-count').textContent.includes('matching \u201cdesched\u201d')`)
		b.click("#results li a")
		wait(`document.querySelector('#package-name').textContent === 'cluster-kube-descheduler-operator'`)
		if h := eval(`location.hash`); h != "#pkg=cluster-kube-descheduler-operator" {
			t.Errorf("location.hash %v", h)
		}
		wait(`document.querySelector('#package-icon').naturalWidth > 0`)
		if got := text("#package-default-channel"); !strings.Contains(got, "stable") {
			t.Errorf("default channel %q", got)
		}
		if n := eval(`document.querySelectorAll('#channels details.channel').length`); n != float64(len(desched.Channels)) {
			t.Errorf("%v channels shown, the package has %d", n, len(desched.Channels))
		}
		if n := eval(`document.querySelectorAll('#bundles tr').length`); n != float64(len(desched.Bundles)) {
			t.Errorf("%v bundle rows, the package has %d", n, len(desched.Bundles))
		}
		if got := text("#bundles tr"); !strings.Contains(got, desched.Bundles[0].Name) {
			t.Errorf("first bundle row %q, want %s (highest version first)", got, desched.Bundles[0].Name)
		}
		if d := eval(`document.querySelector("#description script, #description [onerror], #description img") === null`); d != true {
			t.Error("the description holds a script, an image or an event handler: it must be sanitized")
		}

		// The graph, drawn when its section is opened.
		b.click("#graph > summary")
		wait(`document.querySelector('#graph-img').complete && document.querySelector('#graph-img').naturalWidth > 0`)
		if src := eval(`document.querySelector('#graph-img').getAttribute('src')`); !strings.Contains(fmt.Sprint(src), "api/v1/packages/cluster-kube-descheduler-operator/graph.svg") {
			t.Errorf("graph src %v", src)
		}

		// The upgrade question, on etcd.
		b.do(chromedp.Navigate(base + "#pkg=etcd"))
		wait(`document.querySelector('#package-name').textContent === 'etcd' && document.querySelectorAll('#updates-from option').length > 1`)
		b.do(chromedp.SendKeys("#updates-version", "0.9.0"))
		b.click("#updates-submit")
		wait(`document.querySelector('#updates-verdict') && document.querySelector('#updates-verdict').textContent !== ''`)
		if got := text("#updates-next"); !strings.Contains(got, upd.Next.To.Name) {
			t.Errorf("next update shown %q, the API says %s", got, upd.Next.To.Name)
		}
		if got := text("#updates-verdict"); !strings.Contains(got, upd.Head.Name) {
			t.Errorf("verdict %q, head %s", got, upd.Head.Name)
		}
		if n := eval(`document.querySelectorAll('#updates-path tbody tr').length`); n != float64(len(upd.Path)) {
			t.Errorf("%v path rows, the API gives %d steps", n, len(upd.Path))
		}
		// Each step's CRDs, as the API compares them (etcd's bundles
		// carry no objects: not compared).
		var wantCRDs []string
		for _, st := range upd.Path {
			switch {
			case st.CRDs == nil:
				wantCRDs = append(wantCRDs, "")
			case st.CRDs.Unknown != "":
				wantCRDs = append(wantCRDs, "muted crds-unknown")
			case len(st.CRDs.Changes) == 0:
				wantCRDs = append(wantCRDs, "ok crds-ok")
			default:
				wantCRDs = append(wantCRDs, "crds-changes")
			}
		}
		if got := eval(`[...document.querySelectorAll('#updates-path tbody tr')].map(tr => tr.cells[5].className).join(',')`); got != strings.Join(wantCRDs, ",") {
			t.Errorf("the CRDs column: %v, want %s", got, strings.Join(wantCRDs, ","))
		}

		// What a new Subscription installs, on etcd: its head, shown
		// as the package opened; asked again with the button; and the
		// OLM v1 line under it.
		for _, ask := range []bool{false, true} {
			if ask {
				eval(`document.querySelector('#install-result').replaceChildren(); true`)
				b.click("#install-submit")
			}
			wait(`document.querySelector('#install-summary') !== null`)
			if got := text("#install-summary"); !strings.Contains(got, "installs 1 bundle: "+upd.Head.Name) {
				t.Errorf("install summary %q, head %s", got, upd.Head.Name)
			}
			if n := eval(`document.querySelectorAll('#install-tree li').length`); n != float64(1) {
				t.Errorf("%v bundles in the install tree, want 1", n)
			}
		}
		wait(`document.querySelector('#install-olmv1') !== null`)
		if got := text("#install-olmv1"); !regexp.MustCompile(`^OLM v1: a ClusterExtension gets ` + regexp.QuoteMeta(v1.Bundle.Name) + `[ ,;]`).MatchString(got) {
			t.Errorf("OLM v1 line %q, the API resolves to %s", got, v1.Bundle.Name)
		}

		// A step OLM refuses: cron.v1 -> cron.v2 changes its CRD's scope;
		// cron.v3 carries no objects.
		b.do(chromedp.Navigate(base + "#pkg=cron"))
		wait(`document.querySelector('#package-name').textContent === 'cron' && document.querySelector('#updates-from').value === 'cron.v1'`)
		wait(`document.querySelector('#install-olmv1') !== null`) // the answers above the form are in
		b.click("#updates-submit")
		wait(`document.querySelector('#updates-verdict') !== null && document.querySelectorAll('#updates-path tbody tr').length === 2`)
		if got := eval(`[...document.querySelectorAll('#updates-path tbody tr')].map(tr => tr.cells[5].className).join(',')`); got != "crds-changes,muted crds-unknown" {
			t.Errorf("cron's CRDs column: %v", got)
		}
		b.click("#updates-path td.crds-changes summary")
		if got := text("#updates-path td.crds-changes"); !strings.Contains(got, "1 incompatible change") || !strings.Contains(got, "crontabs.stable.example.com") ||
			!strings.Contains(got, "scope") || !strings.Contains(got, "refuse") {
			t.Errorf("cron's refused step: %q", got)
		}
		if got := text("#updates-crds"); !strings.HasPrefix(got, "1 step of this path changes a CRD") {
			t.Errorf("cron's CRD warning %q", got)
		}

		// Deprecations, and a package that does not exist.
		b.do(chromedp.Navigate(base + "#pkg=test-package"))
		wait(`document.querySelector('#package-name').textContent === 'test-package'`)
		if got := text("#package-deprecated"); !strings.Contains(got, "has been deprecated") {
			t.Errorf("package deprecation %q", got)
		}
		b.do(chromedp.Navigate(base + "#pkg=nope"))
		wait(`document.querySelector('#status').textContent.includes('nope')`)

		b.checkCSP()
	}
}

// TestPageDeepLink opens a channel and a bundle by their addresses (a
// new tab each, as a shared link opens), and by a link far down the
// package's page: the view's heading names the package, and the page is
// shown from its top (no band above the header: the header at 0), the
// page's header, the package's heading and the view's heading all within
// the window, read from the elements' positions in the browser. In a
// window too short for all three, the view's heading at least.
func TestPageDeepLink(t *testing.T) {
	exe := chromium(t)
	snap := snapshotDir(t, pageCatalog(t))
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "page-test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	const desched = "cluster-kube-descheduler-operator"
	b := newBrowser(t, exe, 1280, 800)
	type box struct{ Top, Bottom float64 }
	var pos struct {
		Header, Title, View box
		Height              float64
		Heading             string
	}
	// settled waits for the view and what loads after it (the icon, the
	// description, the install answer), then reads the positions.
	settled := func(b *browser, heading string) {
		t.Helper()
		b.wait(fmt.Sprintf(`!document.querySelector('#view').hidden && document.querySelector('#view-title').textContent === %q && document.querySelector('#description').childElementCount > 0 && document.querySelector('#install-summary') !== null && (document.querySelector('#package-icon').hidden || document.querySelector('#package-icon').complete)`, heading))
		js := b.eval(`(() => {
			const r = (s) => { const b = document.querySelector(s).getBoundingClientRect(); return {top: b.top, bottom: b.bottom}; };
			return JSON.stringify({header: r('header.top'), title: r('#package-title'), view: r('#view-title'), height: window.innerHeight, heading: document.querySelector('#view-title').textContent});
		})()`).(string)
		pos.Header, pos.Title, pos.View = box{}, box{}, box{}
		if err := json.Unmarshal([]byte(js), &pos); err != nil {
			t.Fatal(err)
		}
	}
	inView := func(b box) bool { return b.Top >= -0.5 && b.Bottom <= pos.Height+0.5 && b.Bottom > b.Top }
	for _, c := range []struct {
		name, hash, heading string
		w, h                int64 // 0: the browser's window
		short               bool  // too short for the header, package and view headings
	}{
		{"channel", "#pkg=" + desched + "&channel=stable", "Channel stable of package " + desched, 0, 0, false},
		{"bundle", "#pkg=etcd&bundle=etcdoperator.v0.9.2", "Bundle etcdoperator.v0.9.2 of package etcd", 0, 0, false},
		{"bundle on a phone", "#pkg=" + desched + "&bundle=clusterkubedescheduleroperator.v4.12.1", "Bundle clusterkubedescheduleroperator.v4.12.1 of package " + desched, 390, 844, false},
		{"short window", "#pkg=" + desched + "&channel=stable", "Channel stable of package " + desched, 1280, 160, true},
	} {
		tab := b.newTab()
		if c.w > 0 {
			tab.do(chromedp.EmulateViewport(c.w, c.h))
		}
		tab.do(chromedp.Navigate(ts.URL + "/" + c.hash))
		settled(tab, c.heading)
		switch {
		case c.short:
			if !inView(pos.View) {
				t.Errorf("%s: the view's heading is not in the window: %+v", c.name, pos)
			}
		case pos.Header.Top < -0.5 || pos.Header.Top > 0.5 || !inView(pos.Header) || !inView(pos.Title) || !inView(pos.View):
			t.Errorf("%s: want the page from its top, header, package and view headings in the window (%v px high): header %+v, package %+v, view %+v", c.name, pos.Height, pos.Header, pos.Title, pos.View)
		}
		tab.close()
	}

	// A channel's link at the foot of the package's page.
	b.do(chromedp.Navigate(ts.URL + "/#pkg=" + desched))
	b.wait(`document.querySelector('#package-name').textContent === ` + fmt.Sprintf("%q", desched) + ` && document.querySelector('#install-summary') !== null`)
	b.eval(`document.querySelector('#channels-section').scrollIntoView(); true`)
	if y := b.eval(`window.scrollY`).(float64); y < 500 {
		t.Fatalf("the channels are %v px down only: the page does not scroll", y)
	}
	b.click(`#channels details.channel[data-channel=stable] summary`)
	b.click(`#channels details.channel[data-channel=stable] a.ch-link`)
	settled(b, "Channel stable of package "+desched)
	if pos.Header.Top < -0.5 || pos.Header.Top > 0.5 || !inView(pos.Header) || !inView(pos.Title) || !inView(pos.View) {
		t.Errorf("a channel's link: header %+v, package %+v, view %+v in a window %v px high", pos.Header, pos.Title, pos.View, pos.Height)
	}
}

func getJSONInto(t *testing.T, u string, v any) {
	t.Helper()
	_, body := get(t, u)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v: %s", u, err, body)
	}
}
