package ui

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mounted serves Handler under /catalogs/test/ as pkg/httpserver mounts it,
// over a real HTTP server.
func mounted(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/catalogs/test/", http.StripPrefix("/catalogs/test/", Handler()))
	mux.Handle("/", http.StripPrefix("/", Handler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func embedded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkCommon(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Get("Content-Security-Policy"); got != "default-src 'self'; img-src 'self' data:; style-src 'self'" {
		t.Errorf("%s: Content-Security-Policy %q", what, got)
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q", what, got)
	}
}

func TestHandlerServesThePageAndAssets(t *testing.T) {
	srv := mounted(t)
	cases := []struct {
		path, file, contentType string
	}{
		{"/", "index.html", "text/html; charset=utf-8"},
		{"/index.html", "index.html", "text/html; charset=utf-8"},
		{"/catalogs/test/", "index.html", "text/html; charset=utf-8"},
		{"/catalogs/test/index.html", "index.html", "text/html; charset=utf-8"},
		{"/ui/app.js", "app.js", "text/javascript; charset=utf-8"},
		{"/catalogs/test/ui/app.js", "app.js", "text/javascript; charset=utf-8"},
		{"/ui/style.css", "style.css", "text/css; charset=utf-8"},
		{"/catalogs/test/ui/style.css", "style.css", "text/css; charset=utf-8"},
		{"/ui/favicon.png", "favicon.png", "image/png"},
	}
	etags := map[string]string{}
	for _, c := range cases {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d", c.path, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != c.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.contentType)
		}
		if !bytes.Equal(body, embedded(t, c.file)) {
			t.Errorf("GET %s: the body is not %s", c.path, c.file)
		}
		if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q", c.path, got)
		}
		etag := resp.Header.Get("ETag")
		if !regexp.MustCompile(`^"[0-9a-f]{24}"$`).MatchString(etag) {
			t.Errorf("GET %s: ETag %q is not a strong hash tag", c.path, etag)
		}
		if prev, ok := etags[c.file]; ok && prev != etag {
			t.Errorf("GET %s: ETag %q, another path of %s gave %q", c.path, etag, c.file, prev)
		}
		etags[c.file] = etag
		checkCommon(t, "GET "+c.path, resp)

		// The ETag answers a revalidation with 304 and no body.
		req, _ := http.NewRequest(http.MethodGet, srv.URL+c.path, nil)
		req.Header.Set("If-None-Match", etag)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("GET %s with If-None-Match %s: status %d, %d bytes; want 304 and none", c.path, etag, resp.StatusCode, len(body))
		}
	}
	seen := map[string]bool{}
	for _, e := range etags {
		if seen[e] {
			t.Errorf("two files share the ETag %s", e)
		}
		seen[e] = true
	}
}

func TestHandlerHead(t *testing.T) {
	srv := mounted(t)
	resp, err := http.Head(srv.URL + "/ui/app.js")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Fatalf("HEAD: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp.ContentLength != int64(len(embedded(t, "app.js"))) {
		t.Errorf("HEAD: Content-Length %d, want %d", resp.ContentLength, len(embedded(t, "app.js")))
	}
}

func TestHandlerRefusesTheRest(t *testing.T) {
	h := Handler()
	cases := []struct {
		method, path string
		status       int
	}{
		{"GET", "ui/nope.js", http.StatusNotFound},
		{"GET", "ui/", http.StatusNotFound},
		{"GET", "ui", http.StatusNotFound},
		{"GET", "app.js", http.StatusNotFound},
		{"GET", "assets/app.js", http.StatusNotFound},
		{"GET", "assets/index.html", http.StatusNotFound},
		{"GET", "ui/../index.html", http.StatusNotFound},
		{"GET", "ui/./app.js", http.StatusNotFound},
		{"GET", "ui/APP.JS", http.StatusNotFound},
		{"GET", "index.htm", http.StatusNotFound},
		{"POST", "", http.StatusMethodNotAllowed},
		{"PUT", "ui/app.js", http.StatusMethodNotAllowed},
		{"DELETE", "index.html", http.StatusMethodNotAllowed},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, "/", nil)
		req.URL.Path = c.path
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		resp := rec.Result()
		if resp.StatusCode != c.status {
			t.Errorf("%s %q: status %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
		if c.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %q: Allow %q", c.method, c.path, resp.Header.Get("Allow"))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("%s %q: Content-Type %q, want a plain text error", c.method, c.path, ct)
		}
		checkCommon(t, c.method+" "+c.path, resp)
	}
}

var (
	attrURL     = regexp.MustCompile(`(?i)\s(?:src|href)\s*=\s*"([^"]*)"`)
	remoteURL   = regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	inlineEvent = regexp.MustCompile(`(?i)<[^>]*\son[a-z]+\s*=`)
)

// TestPageURLsAreRelative: the page works at "/" and at "/catalogs/NAME/"
// only when every URL it names is relative, and each must be served.
func TestPageURLsAreRelative(t *testing.T) {
	page := string(embedded(t, "index.html"))
	srv := mounted(t)
	urls := attrURL.FindAllStringSubmatch(page, -1)
	if len(urls) < 3 {
		t.Fatalf("index.html names %d URLs; want the icon, style sheet and script at least", len(urls))
	}
	for _, m := range urls {
		u := m[1]
		if u == "" || strings.HasPrefix(u, "/") || strings.Contains(u, ":") || strings.HasPrefix(u, ".") {
			t.Errorf("index.html: URL %q is not a plain relative path", u)
			continue
		}
		for _, base := range []string{"/", "/catalogs/test/"} {
			resp, err := http.Get(srv.URL + base + u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("index.html names %q: GET %s%s is %d", u, base, u, resp.StatusCode)
			}
		}
	}
}

// TestAssetsAreSelfContained: nothing is loaded from the internet, and
// nothing inline that the Content-Security-Policy would block.
func TestAssetsAreSelfContained(t *testing.T) {
	names := []string{}
	for path, f := range files {
		if path != "" && !slices.Contains(names, f.name) {
			names = append(names, f.name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"app.js", "favicon.png", "hub.js", "index.html", "style.css"}) {
		t.Errorf("served files %v", names)
	}
	for _, name := range names {
		b := embedded(t, name)
		low := bytes.ToLower(b)
		for _, bad := range []string{"http://", "https://"} {
			if i := bytes.Index(low, []byte(bad)); i >= 0 {
				t.Errorf("%s: %q at byte %d: no asset may name a remote URL", name, bad, i)
			}
		}
		if name != "favicon.png" {
			if m := remoteURL.Find(b); m != nil {
				t.Errorf("%s: %q looks like a remote URL", name, m)
			}
		}
	}

	page := string(embedded(t, "index.html"))
	for _, s := range regexp.MustCompile(`(?is)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(page, -1) {
		if !strings.Contains(s[1], "src=") || strings.TrimSpace(s[2]) != "" {
			t.Errorf("index.html: inline script %q: the CSP forbids it", s[0])
		}
	}
	if m := inlineEvent.FindString(page); m != "" {
		t.Errorf("index.html: inline event handler in %q: the CSP forbids it", m)
	}
	if regexp.MustCompile(`(?i)<style|\sstyle\s*=`).MatchString(page) {
		t.Error("index.html: inline style: the CSP forbids it")
	}

	// Catalog data is only ever text: no HTML parsing of strings, and
	// every request URL relative.
	for _, name := range []string{"app.js", "hub.js"} {
		js := string(embedded(t, name))
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", `"/api`, `'/api`, "`/api", ".style.", "setAttribute(\"style"} {
			if strings.Contains(js, bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
		for _, m := range regexp.MustCompile(`"(api/v1/[^"]*)"`).FindAllStringSubmatch(js, -1) {
			if !slices.Contains([]string{"api/v1/packages?limit=all", "api/v1/packages/", "api/v1/updates?package=", "api/v1/install?package=", "api/v1/olmv1/resolve?package=",
				"api/v1/hub", "api/v1/cluster/installed", "api/v1/cluster?namespace="}, m[1]) {
				t.Errorf("%s: unexpected API URL %q", name, m[1])
			}
		}
	}
}

// TestIDsDocumented: the ids the browser test relies on are listed at the
// top of index.html, and each exists in the page or is made by app.js.
func TestIDsDocumented(t *testing.T) {
	page := string(embedded(t, "index.html"))
	js := string(embedded(t, "app.js")) + string(embedded(t, "hub.js"))
	end := strings.Index(page, "-->")
	if end < 0 {
		t.Fatal("index.html has no leading comment")
	}
	comment := page[:end]
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`#([a-z][a-z0-9-]*)\b`).FindAllStringSubmatch(comment, -1) {
		documented[m[1]] = true
	}
	inPage := map[string]bool{}
	for _, m := range regexp.MustCompile(`\sid="([^"]+)"`).FindAllStringSubmatch(page[end:], -1) {
		inPage[m[1]] = true
	}
	for _, id := range []string{"search", "results", "results-count", "package", "channels", "bundles", "graph", "graph-channel", "graph-img", "updates-form", "updates-from", "updates-channel", "updates-version", "updates-result", "install-form", "install-channel", "install-result", "install-olmv1", "updates-crds",
		"filters", "filters-clear", "browse", "package-title", "package-name", "view", "overview", "description", "facts", "crds"} {
		if !documented[id] {
			t.Errorf("id %q is not listed at the top of index.html", id)
		}
	}
	for id := range documented {
		if id == "pkg" || id == "q" || id == "installed" || id == "ns" || id == "catalog" { // the hash's names, not ids
			continue
		}
		if !inPage[id] && !strings.Contains(js, `id: "`+id+`"`) && !strings.Contains(js, `id: pre + "-`+strings.TrimPrefix(strings.TrimPrefix(id, "ns-"), "whatif-")+`"`) {
			t.Errorf("id %q is listed at the top of index.html but neither in the page nor made by app.js", id)
		}
	}
}
