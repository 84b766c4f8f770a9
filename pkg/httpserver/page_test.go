package httpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	for dst, src := range map[string]string{
		"etcd/catalog.yaml":             "../../testdata/updates/etcd/catalog.yaml",
		"deprecations/catalog.yaml":     "../../testdata/catalogs/fixture-olm-deprecations/example-operator.v0.2.0-deprecations.yaml",
		"kube-descheduler/catalog.json": "../../testdata/catalogs/kube-descheduler-v4.12/cluster-kube-descheduler-operator/catalog.json",
	} {
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
	return dir
}

// TestPage drives the web page in headless Chromium against the real
// server: it searches, opens a package, checks what is shown against the
// JSON answers, draws the graph and asks an upgrade path, at the root and
// under /catalogs/NAME/. With OPM_PAGE_SCREENSHOTS=DIR it saves the two
// pictures of docs/serve-http.md there.
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
		Path []any
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

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 800))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(func(string, ...any) {}), chromedp.WithErrorf(func(string, ...any) {}))
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 5*time.Minute) // hang guards, here and in wait
	defer cancel()

	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	eval := func(expr string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	wait := func(expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
	}
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	shots := os.Getenv("OPM_PAGE_SCREENSHOTS")
	shoot := func(name string) {
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for i, base := range []string{ts.URL + "/", ts.URL + "/catalogs/page-test/"} {
		do(chromedp.Navigate(base))
		wait(`document.querySelectorAll('#results li a').length === 3`)
		// Violations of the Content-Security-Policy from now on.
		eval(`window.cspViolations = []; document.addEventListener('securitypolicyviolation', e => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI)); true`)
		if got := text("#catalog-name"); got != "page-test" {
			t.Errorf("%s: catalog name %q", base, got)
		}
		if got := text("#results-count"); !strings.Contains(got, "3 of 3") {
			t.Errorf("%s: results count %q", base, got)
		}

		// Search, then open the package found. The list is drawn again
		// for each pause in the typing (a debounce): wait for the one of
		// the whole word, the last, or the link clicked may be replaced.
		do(chromedp.SendKeys("#search", "desched"))
		wait(`document.querySelectorAll('#results li a').length === 1 && document.querySelector('#results-count').textContent.includes('matching \u201cdesched\u201d')`)
		do(chromedp.Click("#results li a"))
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
		if d := eval(`document.querySelector('#description *') === null`); d != true {
			t.Error("the description holds elements: catalog text must be shown as text")
		}
		if i == 0 {
			do(chromedp.ScrollIntoView("#package"))
			shoot("serve-http-package.png")
		}

		// The graph, drawn when its section is opened.
		do(chromedp.Click("#graph > summary"))
		wait(`document.querySelector('#graph-img').complete && document.querySelector('#graph-img').naturalWidth > 0`)
		if src := eval(`document.querySelector('#graph-img').getAttribute('src')`); !strings.Contains(fmt.Sprint(src), "api/v1/packages/cluster-kube-descheduler-operator/graph.svg") {
			t.Errorf("graph src %v", src)
		}

		// The upgrade question, on etcd.
		do(chromedp.Navigate(base + "#pkg=etcd"))
		wait(`document.querySelector('#package-name').textContent === 'etcd' && document.querySelectorAll('#updates-from option').length > 1`)
		do(chromedp.SendKeys("#updates-version", "0.9.0"), chromedp.Click("#updates-submit"))
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
		if i == 0 {
			do(chromedp.ScrollIntoView("#updates-form"))
			shoot("serve-http-updates.png")
		}

		// What a new Subscription installs, on etcd: its head.
		do(chromedp.Click("#install-submit"))
		wait(`document.querySelector('#install-summary') !== null`)
		if got := text("#install-summary"); !strings.Contains(got, "installs 1 bundle: "+upd.Head.Name) {
			t.Errorf("install summary %q, head %s", got, upd.Head.Name)
		}
		if n := eval(`document.querySelectorAll('#install-tree li').length`); n != float64(1) {
			t.Errorf("%v bundles in the install tree, want 1", n)
		}
		wait(`document.querySelector('#install-olmv1') !== null`)
		if got := text("#install-olmv1"); !regexp.MustCompile(`^OLM v1: a ClusterExtension gets ` + regexp.QuoteMeta(v1.Bundle.Name) + `[ ,;]`).MatchString(got) {
			t.Errorf("OLM v1 line %q, the API resolves to %s", got, v1.Bundle.Name)
		}

		// Deprecations, and a package that does not exist.
		do(chromedp.Navigate(base + "#pkg=test-package"))
		wait(`document.querySelector('#package-name').textContent === 'test-package'`)
		if got := text("#package-deprecated"); !strings.Contains(got, "has been deprecated") {
			t.Errorf("package deprecation %q", got)
		}
		do(chromedp.Navigate(base + "#pkg=nope"))
		wait(`document.querySelector('#status').textContent.includes('nope')`)

		if v := eval(`window.cspViolations.join('; ')`); v != "" {
			t.Errorf("Content-Security-Policy violations: %v", v)
		}
	}
}

func getJSONInto(t *testing.T, u string, v any) {
	t.Helper()
	_, body := get(t, u)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v: %s", u, err, body)
	}
}
