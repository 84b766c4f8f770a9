package httpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// chainLength is the length of the dependency chain the deep tests ask
// about: package shape depending on dep-1, ..., dep-299 on dep-300.
const chainLength = 300

// deepChainDir writes shapecat's dep-chain of chainLength packages.
func deepChainDir(t *testing.T) string {
	t.Helper()
	s, _ := shapecat.LookupAny("dep-chain")
	dir := t.TempDir()
	if err := s.WriteDir(dir, chainLength); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestInstallDeepChain: /api/v1/install answers a chain of 300
// dependencies with JSON that nests a bounded number of levels (the tree
// stops 8 deep and goes on in continuations), which every client reads.
func TestInstallDeepChain(t *testing.T) {
	ts := newTestServer(t, snapshotDir(t, deepChainDir(t)), "dep-chain")
	resp, body := ts.do(t, "GET", "/api/v1/install?package="+shapecat.Package)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if d := testutil.JSONDepth(t, body); d > 40 {
		t.Errorf("the answer nests %d deep", d)
	}
	var a install.Answer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	if want := (chainLength - 1) / install.MaxDepth; a.Status != install.Installable || len(a.Installs) != chainLength+1 || len(a.Continuations) != want {
		t.Errorf("%s, %d installs, %d continuations; want %d continuations", a.Status, len(a.Installs), len(a.Continuations), want)
	}
}

// TestPageDeepChain: the page shows the answer for a chain of 300
// dependencies as its tree and the continuations after it, each headed by
// the bundle where the list above stops, none nested deeper than the
// answer's trees, without a script error.
func TestPageDeepChain(t *testing.T) {
	exe := chromium(t)
	hs, err := httpserver.New(snapshotDir(t, deepChainDir(t)), httpserver.Options{CatalogName: "dep-chain"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	b := newBrowser(t, exe, 1280, 900)
	checkErrors := watchErrors(b)
	b.do(chromedp.Navigate(ts.URL + "/#pkg=" + shapecat.Package))
	b.wait(`document.querySelector('#install-summary') !== null && document.querySelector('#install-olmv1') !== null`)
	cont := (chainLength - 1) / install.MaxDepth
	if got := b.eval(`document.querySelectorAll('#install-result > ul.install-continuation').length + ' ' + document.querySelectorAll('#install-result code').length`); got != fmt.Sprintf("%d %d", cont, chainLength+1+cont) {
		t.Errorf("continuations and bundles shown: %v, want %d %d", got, cont, chainLength+1+cont)
	}
	// Each list ends at a bundle continued below, the head of the next.
	if got := b.eval(`(() => {
		const lists = [...document.querySelectorAll('#install-result > ul')];
		for (let i = 0; i + 1 < lists.length; i++) {
			const codes = lists[i].querySelectorAll('code');
			const last = codes[codes.length - 1], head = lists[i + 1].querySelector('code');
			if (last.textContent !== head.textContent || !last.parentElement.textContent.endsWith('(continued below)') ||
				!head.parentElement.firstElementChild.nextElementSibling.textContent.includes('continued from above')) {
				return 'list ' + i + ' ends at ' + last.parentElement.textContent + '; the next begins with ' + head.parentElement.textContent.slice(0, 200);
			}
		}
		return lists.length;
	})()`); got != float64(cont+1) {
		t.Errorf("the lists: %v", got)
	}
	// Two lists (dependencies, provider) for each level, 8 deep, under
	// the top one.
	if got := b.eval(`Math.max(...[...document.querySelectorAll('#install-result li')].map(li => {
		let n = 0;
		for (let e = li; e.id !== 'install-result'; e = e.parentElement) if (e.tagName === 'UL') n++;
		return n;
	}))`); got.(float64) > 2*8+1 {
		t.Errorf("lists nest %v deep", got)
	}
	checkErrors("the deep chain")
}
