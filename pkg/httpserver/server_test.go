package httpserver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/httpserver"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

const catalogs = "../../testdata/catalogs"

func TestMain(m *testing.M) { os.Exit(testutil.RunWithGraphviz(m)) }

// snapshot loads a test catalog as serve does, keeping the JSON lines: a
// cold start (temporary storage) or a saved cache opened again.
func snapshot(t testing.TB, name string, saved bool) *cache.Snapshot {
	t.Helper()
	return loadSnapshot(t, filepath.Join(catalogs, name), saved)
}

// snapshotDir is the cold-start snapshot of the catalog in dir.
func snapshotDir(t testing.TB, dir string) *cache.Snapshot {
	t.Helper()
	return loadSnapshot(t, dir, false)
}

func loadSnapshot(t testing.TB, catalogDir string, saved bool) *cache.Snapshot {
	t.Helper()
	fsys := os.DirFS(catalogDir)
	if saved {
		dir := t.TempDir()
		snap, err := action.LoadServeDir(context.Background(), fsys, dir, "test", true)
		if err != nil {
			t.Fatal(err)
		}
		snap.Close()
		if snap, err = cache.OpenDir(dir); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { snap.Close() })
		return snap
	}
	st, err := scratch.Create(t.TempDir(), "snap-*")
	if err != nil {
		t.Fatal(err)
	}
	w, err := cache.NewWriter(st)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := scratch.Create(t.TempDir(), "lines-*")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.KeepLines(lines); err != nil {
		t.Fatal(err)
	}
	x, err := registry.Load(context.Background(), fsys, registry.Options{Sink: w, Lines: w})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := w.Snapshot(x)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snap.Close() })
	return snap
}

// derivedSnapshot is a saved cache of a test catalog built without the
// JSON lines (a gRPC-only image), opened again, with the lines derived
// from the catalog as opm serve --http-addr derives them.
func derivedSnapshot(t testing.TB, name string) *cache.Snapshot {
	t.Helper()
	fsys := os.DirFS(filepath.Join(catalogs, name))
	dir := t.TempDir()
	snap, err := action.LoadServeDir(context.Background(), fsys, dir, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if snap, err = cache.OpenDir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snap.Close() })
	if snap.Lines() != nil {
		t.Fatal("a cache built without lines holds lines")
	}
	lines, _, err := action.LoadServeLines(context.Background(), fsys, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.AddLines(lines); err != nil {
		t.Fatal(err)
	}
	return snap
}

type testServer struct {
	*httptest.Server
	metrics *httpserver.Metrics
	ready   bool
}

func newTestServer(t testing.TB, snap *cache.Snapshot, name string) *testServer {
	t.Helper()
	return newTestServerOpts(t, snap, httpserver.Options{CatalogName: name})
}

// newTestServerOpts is newTestServer with options (the metrics and
// readiness are the test server's).
func newTestServerOpts(t testing.TB, snap *cache.Snapshot, opts httpserver.Options) *testServer {
	t.Helper()
	ts := &testServer{metrics: httpserver.NewMetrics(), ready: true}
	opts.Metrics, opts.Ready = ts.metrics, func() bool { return ts.ready }
	hs, err := httpserver.New(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// get sends a request without Go's transparent gzip.
func (ts *testServer) do(t testing.TB, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func readAll(t testing.TB, snap *cache.Snapshot) []byte {
	t.Helper()
	b, err := io.ReadAll(snap.Lines().All())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAll: /api/v1/all is the catalog's lines with ServeContent's
// behaviour, at the root and under /catalogs/NAME/.
func TestAll(t *testing.T) {
	for _, saved := range []bool{false, true} {
		t.Run(fmt.Sprintf("saved=%v", saved), func(t *testing.T) {
			snap := snapshot(t, "kube-descheduler-v4.12", saved) // 1.3 MB
			ts := newTestServer(t, snap, "descheduler")
			want := readAll(t, snap)
			for _, path := range []string{"/api/v1/all", "/catalogs/descheduler/api/v1/all"} {
				resp, body := ts.do(t, "GET", path)
				if resp.StatusCode != 200 || !bytes.Equal(body, want) {
					t.Fatalf("%s: %d, %d bytes, want the %d bytes of the lines", path, resp.StatusCode, len(body), len(want))
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/jsonl" {
					t.Errorf("Content-Type %q", ct)
				}
				if lm := resp.Header.Get("Last-Modified"); lm != snap.Modified.UTC().Format(http.TimeFormat) {
					t.Errorf("Last-Modified %q, snapshot %v", lm, snap.Modified)
				}
				if resp.Header.Get("Content-Length") != fmt.Sprint(len(want)) || resp.Header.Get("Accept-Ranges") != "bytes" {
					t.Errorf("headers %v", resp.Header)
				}
			}
			lm := snap.Modified.UTC().Format(http.TimeFormat)
			if resp, body := ts.do(t, "GET", "/api/v1/all", "If-Modified-Since", lm); resp.StatusCode != 304 || len(body) != 0 {
				t.Errorf("If-Modified-Since the snapshot's time: %d, %d bytes", resp.StatusCode, len(body))
			}
			earlier := snap.Modified.Add(-time.Hour).UTC().Format(http.TimeFormat)
			if resp, _ := ts.do(t, "GET", "/api/v1/all", "If-Modified-Since", earlier); resp.StatusCode != 200 {
				t.Errorf("If-Modified-Since an hour before: %d", resp.StatusCode)
			}
			if resp, _ := ts.do(t, "GET", "/api/v1/all", "If-Unmodified-Since", earlier); resp.StatusCode != 412 {
				t.Errorf("If-Unmodified-Since an hour before: %d", resp.StatusCode)
			}
			if resp, body := ts.do(t, "GET", "/api/v1/all", "Range", "bytes=100-199"); resp.StatusCode != 206 || !bytes.Equal(body, want[100:200]) {
				t.Errorf("Range: %d, %q", resp.StatusCode, body)
			}
			if resp, body := ts.do(t, "GET", "/api/v1/all", "Range", "bytes=-10"); resp.StatusCode != 206 || !bytes.Equal(body, want[len(want)-10:]) {
				t.Errorf("suffix Range: %d, %q", resp.StatusCode, body)
			}
			if resp, _ := ts.do(t, "GET", "/api/v1/all", "Range", fmt.Sprintf("bytes=%d-", len(want)+10)); resp.StatusCode != 416 ||
				resp.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", len(want)) {
				t.Errorf("Range past the end: %d %v", resp.StatusCode, resp.Header)
			}
			if resp, body := ts.do(t, "HEAD", "/api/v1/all"); resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != fmt.Sprint(len(want)) {
				t.Errorf("HEAD: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
			}
			if resp, _ := ts.do(t, "POST", "/api/v1/all"); resp.StatusCode != 405 {
				t.Errorf("POST: %d", resp.StatusCode)
			}
			// gzip, as catalogd compresses.
			resp, body := ts.do(t, "GET", "/api/v1/all", "Accept-Encoding", "gzip")
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("no gzip: %v", resp.Header)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, want) {
				t.Errorf("gzip body: %d bytes, %v", len(plain), err)
			}
			if len(body) >= len(want)/2 {
				t.Errorf("gzip body of %d bytes for %d", len(body), len(want))
			}
		})
	}
}

// TestCatalogNames: another catalog's name is a 404, an invalid one a 400.
func TestCatalogNames(t *testing.T) {
	ts := newTestServer(t, snapshot(t, "fixture-olm-deprecations", false), "my-catalog")
	for path, code := range map[string]int{
		"/catalogs/my-catalog/api/v1/metas?schema=olm.package": 200,
		"/catalogs/other/api/v1/all":                           404,
		"/catalogs/Not_Valid/api/v1/all":                       400,
		"/catalogs/my-catalog/api/v1/nope":                     404,
		"/api/v1/nope":                                         404,
	} {
		if resp, body := ts.do(t, "GET", path); resp.StatusCode != code {
			t.Errorf("%s: %d %s, want %d", path, resp.StatusCode, body, code)
		}
	}
	if _, err := httpserver.New(snapshot(t, "fixture-olm-deprecations", false), httpserver.Options{CatalogName: "Bad/Name"}); err == nil {
		t.Error("an invalid catalog name is accepted")
	}
}

// TestMetas: catalogd's query rules, parameters and headers.
func TestMetas(t *testing.T) {
	snap := snapshot(t, "percona-everest", false)
	ts := newTestServer(t, snap, "everest")
	all := readAll(t, snap)
	lines := strings.SplitAfter(string(all), "\n")
	lines = lines[:len(lines)-1]
	// Each line's schema, package and name, read once.
	type key struct{ schema, pkg, name string }
	keys := make([]key, len(lines))
	for i, l := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		str := func(k string) string {
			var s string
			_ = json.Unmarshal(m[k], &s) // not a string: ""
			return s
		}
		keys[i] = key{str("schema"), str("package"), str("name")}
	}
	match := func(schema, pkg, name string) string {
		var b strings.Builder
		for i, l := range lines {
			k := keys[i]
			if (schema == "" || k.schema == schema) && (pkg == "" || k.pkg == pkg) && (name == "" || k.name == name) {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	for _, q := range [][3]string{
		{"olm.package", "", ""}, {"olm.bundle", "", ""}, {"", "everest-operator", ""},
		{"olm.channel", "everest-operator", ""}, {"", "", "everest-operator"}, {"", "", "stable-v1"},
		{"olm.channel", "", "stable-v1"}, {"", "percona-xtradb-cluster-operator", "stable-v1"},
		{"nope", "", ""}, {"olm.bundle", "everest-operator", "everest-operator.v0.3.1"},
	} {
		v := url.Values{}
		for i, k := range []string{"schema", "package", "name"} {
			if q[i] != "" {
				v.Set(k, q[i])
			}
		}
		resp, body := ts.do(t, "GET", "/api/v1/metas?"+v.Encode())
		if resp.StatusCode != 200 || string(body) != match(q[0], q[1], q[2]) {
			t.Errorf("metas %v: %d, %d bytes, want %d", q, resp.StatusCode, len(body), len(match(q[0], q[1], q[2])))
		}
		if resp.Header.Get("Content-Type") != "application/jsonl" || resp.Header.Get("Last-Modified") == "" {
			t.Errorf("metas %v: headers %v", q, resp.Header)
		}
	}
	if resp, body := ts.do(t, "GET", "/api/v1/metas"); resp.StatusCode != 200 || !bytes.Equal(body, all) {
		t.Errorf("metas without parameters: %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp, body := ts.do(t, "GET", "/api/v1/metas?schema=&package=&name="); resp.StatusCode != 200 || !bytes.Equal(body, all) {
		t.Errorf("metas with empty parameters: %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp, body := ts.do(t, "GET", "/api/v1/metas?schema=olm.package&limit=1"); resp.StatusCode != 400 || string(body) != "400 Bad Request\n" {
		t.Errorf("unknown parameter: %d %q", resp.StatusCode, body)
	}
	if resp, body := ts.do(t, "HEAD", "/api/v1/metas?schema=olm.package"); resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Type") != "application/jsonl" {
		t.Errorf("HEAD: %d %d", resp.StatusCode, len(body))
	}
	lm := snap.Modified.UTC().Format(http.TimeFormat)
	if resp, body := ts.do(t, "GET", "/api/v1/metas?schema=olm.package", "If-Modified-Since", lm); resp.StatusCode != 304 || len(body) != 0 {
		t.Errorf("If-Modified-Since: %d", resp.StatusCode)
	}
	if resp, _ := ts.do(t, "GET", "/api/v1/metas?schema=olm.package", "If-None-Match", "*"); resp.StatusCode != 304 {
		t.Errorf("If-None-Match *: %d", resp.StatusCode)
	}
	if resp, _ := ts.do(t, "GET", "/api/v1/metas?schema=olm.package", "If-Match", `"x"`); resp.StatusCode != 412 {
		t.Errorf("If-Match: %d", resp.StatusCode)
	}
	before := snap.Modified.Add(-time.Hour).UTC().Format(http.TimeFormat)
	if resp, _ := ts.do(t, "GET", "/api/v1/metas?schema=olm.package", "If-Unmodified-Since", before); resp.StatusCode != 412 {
		t.Errorf("If-Unmodified-Since: %d", resp.StatusCode)
	}
}

// TestJSONRoutes: the answers for people and tools agree with the model
// the CLI queries.
func TestJSONRoutes(t *testing.T) {
	testutil.UseGraphviz(t)
	snap := snapshot(t, "kube-descheduler-v4.12", false)
	ts := newTestServer(t, snap, "kd")
	getJSON := func(path string, code int, v any) {
		t.Helper()
		resp, body := ts.do(t, "GET", path)
		if resp.StatusCode != code {
			t.Fatalf("%s: %d %s, want %d", path, resp.StatusCode, body, code)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v: %s", path, err, body)
		}
	}
	var list struct {
		Catalog  string
		Total    int
		Packages []struct {
			Name, DefaultChannel string
			Channels             []string
			Bundles              int
		}
	}
	getJSON("/api/v1/packages", 200, &list)
	if list.Catalog != "kd" || list.Total != 1 || len(list.Packages) != 1 || list.Packages[0].Name != "cluster-kube-descheduler-operator" ||
		list.Packages[0].DefaultChannel != "stable" || list.Packages[0].Bundles != len(snap.Index.Bundles) {
		t.Errorf("packages %+v", list)
	}
	getJSON("/api/v1/packages?q=DESCHED&limit=1", 200, &list)
	if list.Total != 1 {
		t.Errorf("search is not case-insensitive: %+v", list)
	}
	getJSON("/api/v1/packages?q=nothing-like-it", 200, &list)
	if list.Total != 0 || list.Packages == nil || len(list.Packages) != 0 {
		t.Errorf("no match: %+v", list)
	}
	var apiErr struct{ Error string }
	for path, code := range map[string]int{
		"/api/v1/packages?limit=0":                       400,
		"/api/v1/packages?limit=x":                       400,
		"/api/v1/packages?other=1":                       400,
		"/api/v1/packages?q=" + strings.Repeat("a", 300): 400,
		"/api/v1/packages/nope":                          404,
		"/api/v1/packages/nope/graph.svg":                404,
		"/api/v1/packages/cluster-kube-descheduler-operator/graph.svg?channel=nope":  404,
		"/api/v1/updates?package=cluster-kube-descheduler-operator":                  400,
		"/api/v1/updates?from=1.0.0":                                                 400,
		"/api/v1/updates?package=nope&from=1.0.0":                                    404,
		"/api/v1/updates?package=cluster-kube-descheduler-operator&channel=x&from=1": 404,
	} {
		apiErr.Error = ""
		getJSON(path, code, &apiErr)
		if apiErr.Error == "" {
			t.Errorf("%s: no error message", path)
		}
	}

	// A query string that does not parse is refused, not read as if the
	// malformed parameter were absent (that answers another question), and
	// a route without parameters says so.
	for path, want := range map[string]string{
		"/api/v1/updates?package=cluster-kube-descheduler-operator&from=4.12.0&channel=%zz": `malformed query string: invalid URL escape "%zz"`,
		"/api/v1/packages?limit=1&q=%zz":                         `malformed query string: invalid URL escape "%zz"`,
		"/api/v1/packages/cluster-kube-descheduler-operator?x=%": `malformed query string: invalid URL escape "%"`,
		"/api/v1/packages/cluster-kube-descheduler-operator?x=1": `unknown parameter "x": this route takes no parameters`,
	} {
		apiErr.Error = ""
		getJSON(path, 400, &apiErr)
		if apiErr.Error != want {
			t.Errorf("%s: error %q, want %q", path, apiErr.Error, want)
		}
	}

	// A bundle the catalog does not hold is answered (a virtual node).
	var virtual struct {
		Installed struct{ InCatalog bool }
		Problem   string
	}
	getJSON("/api/v1/updates?package=cluster-kube-descheduler-operator&from=not-a-bundle", 200, &virtual)
	if virtual.Installed.InCatalog || !strings.Contains(virtual.Problem, "cannot be updated") {
		t.Errorf("virtual bundle: %+v", virtual)
	}

	var pkg struct {
		Name, DefaultChannel string
		Icon                 bool
		Channels             []struct {
			Name, Head string
			Entries    []struct {
				Name, Version string
				InCatalog     bool
			}
		}
		Bundles []struct {
			Name, Version, Image string
			Channels             []string
		}
	}
	getJSON("/api/v1/packages/cluster-kube-descheduler-operator", 200, &pkg)
	model, err := action.LoadModel(t.Context(), action.DirResolver{}, filepath.Join(catalogs, "kube-descheduler-v4.12"), 0)
	if err != nil {
		t.Fatal(err)
	}
	mp := model["cluster-kube-descheduler-operator"]
	if pkg.Name != mp.Name || pkg.DefaultChannel != mp.DefaultChannel.Name || len(pkg.Channels) != len(mp.Channels) {
		t.Fatalf("package %+v", pkg)
	}
	for _, c := range pkg.Channels {
		mc := mp.Channels[c.Name]
		head, err := mc.Head()
		if err != nil || c.Head != head.Name || len(c.Entries) != len(mc.Bundles) || c.Entries[0].Name != head.Name {
			t.Errorf("channel %s: head %q, %d entries; want %v, %d", c.Name, c.Head, len(c.Entries), head, len(mc.Bundles))
		}
	}
	for i, b := range pkg.Bundles {
		if i > 0 && b.Version > pkg.Bundles[i-1].Version && strings.Count(b.Version, ".") == strings.Count(pkg.Bundles[i-1].Version, ".") && len(b.Version) == len(pkg.Bundles[i-1].Version) {
			t.Errorf("bundles not sorted by version: %s after %s", b.Version, pkg.Bundles[i-1].Version)
		}
		if b.Image == "" || len(b.Channels) == 0 {
			t.Errorf("bundle %+v", b)
		}
	}

	// Every bundle's upgrade path agrees with the CLI's query, each step's
	// CRDs compared (this catalog's bundles carry their objects).
	compared := 0
	cli := cliUpdater(t, filepath.Join(catalogs, "kube-descheduler-v4.12"), pkg.Name)
	for _, c := range pkg.Channels {
		for _, e := range c.Entries {
			var got any
			getJSON("/api/v1/updates?"+url.Values{"package": {pkg.Name}, "channel": {c.Name}, "from": {e.Name}}.Encode(), 200, &got)
			want := cli(c.Name, e.Name)
			if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
				t.Fatalf("updates from %s in %s:\n%s\nwant\n%s", e.Name, c.Name, g, w)
			}
			compared += strings.Count(fmt.Sprint(got), "crds:map[]")
		}
	}
	if compared == 0 {
		t.Error("no step's CRDs were compared")
	}

	// The graph is an SVG that names the channel's bundles.
	resp, body := ts.do(t, "GET", "/api/v1/packages/cluster-kube-descheduler-operator/graph.svg?channel=stable")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("graph: %d %v", resp.StatusCode, resp.Header)
	}
	var svg struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(body, &svg); err != nil || svg.XMLName.Local != "svg" {
		t.Fatalf("graph is not SVG: %v", err)
	}
	if !bytes.Contains(body, []byte(pkg.Channels[0].Entries[0].Name)) && !bytes.Contains(body, []byte(mp.Channels["stable"].Bundles[pkg.Bundles[0].Name].Name)) {
		t.Error("the graph does not name the head")
	}
}

// TestIcon: the icon's bytes with its media type.
func TestIcon(t *testing.T) {
	ts := newTestServer(t, snapshot(t, "submariner-v4.14", false), "sub")
	resp, body := ts.do(t, "GET", "/api/v1/packages/submariner/icon")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") || len(body) == 0 {
		t.Fatalf("icon: %d %v %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	var pkg struct{ Icon bool }
	_, b := ts.do(t, "GET", "/api/v1/packages/submariner")
	if err := json.Unmarshal(b, &pkg); err != nil || !pkg.Icon {
		t.Errorf("icon flag: %s", b)
	}
}

// TestHealthAndMetrics: /readyz follows Ready; /metrics counts the routes.
func TestHealthAndMetrics(t *testing.T) {
	ts := newTestServer(t, snapshot(t, "fixture-olm-deprecations", false), "c")
	if resp, body := ts.do(t, "GET", "/healthz"); resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("healthz: %d %q", resp.StatusCode, body)
	}
	if resp, _ := ts.do(t, "GET", "/readyz"); resp.StatusCode != 200 {
		t.Errorf("readyz: %d", resp.StatusCode)
	}
	ts.ready = false
	if resp, _ := ts.do(t, "GET", "/readyz"); resp.StatusCode != 503 {
		t.Errorf("readyz while not serving: %d", resp.StatusCode)
	}
	ts.do(t, "GET", "/api/v1/metas?schema=olm.package")
	ts.do(t, "GET", "/api/v1/metas?bad=1")
	_, body := ts.do(t, "GET", "/metrics")
	for _, want := range []string{
		`http_requests_total{code="200",handler="metas",method="get"} 1`,
		`http_requests_total{code="400",handler="metas",method="get"} 1`,
		`http_request_duration_seconds_bucket{code="200",handler="metas",method="get",le="+Inf"} 1`,
		"opm_catalog_packages 1",
		"opm_catalog_blobs ",
		"opm_catalog_jsonl_bytes ",
		"go_goroutines ",
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestBadRequests: a huge header is refused, and a client that stops
// reading is cut off after IdleWrite rather than holding the handler.
func TestBadRequests(t *testing.T) {
	snap := snapshot(t, "percona-everest", false)
	m := httpserver.NewMetrics()
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "c", Metrics: m, IdleWrite: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := hs.HTTPServer()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	base := "http://" + lis.Addr().String()

	resp, err := http.Get(base + "/api/v1/metas?schema=" + strings.Repeat("x", 100<<10))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 100 KiB query string: %d", resp.StatusCode)
	}

	// A client that asks for the whole catalog and never reads.
	conn, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	if _, err := io.WriteString(conn, "GET /api/v1/all HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute) // a hang guard
	for {
		_, body := get(t, base+"/metrics")
		if bytes.Contains(body, []byte(`http_requests_total{code="200",handler="all",method="get"} 1`)) {
			break // the handler returned
		}
		if time.Now().After(deadline) {
			t.Fatal("the handler of a client that does not read is still running")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func get(t testing.TB, u string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestEncodedPaths: escaped paths are answered as catalogd answers them
// (operator-controller v1.11.0, internal/catalogd/server/handlers.go: Go's
// ServeMux with the patterns /catalogs/{catalog}/api/v1/all and .../metas,
// which matches each path segment unescaped and redirects unclean paths):
// an escaped letter anywhere is that letter (/catalogs/c%61t/ is
// /catalogs/cat/); an escaped "/" is part of its segment, never a
// separator (a catalog name with "/" is invalid: 400; elsewhere no route
// matches: 404); "." and ".." segments and "//" redirect (307) to the
// clean path, but an escaped ".." is a name (404).
func TestEncodedPaths(t *testing.T) {
	snap := snapshot(t, "fixture-olm-deprecations", false)
	ts := newTestServer(t, snap, "cat")
	all := readAll(t, snap)
	var ref [3][]byte
	for i, p := range []string{"/catalogs/cat/api/v1/metas?schema=olm.package", "/api/v1/packages/test-package", "/catalogs/cat/"} {
		resp, body := ts.do(t, "GET", p)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, body)
		}
		ref[i] = body
	}
	metas, pkg, page := ref[0], ref[1], ref[2]
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		path     string
		code     int
		body     []byte // when not nil, the answer
		location string // of a redirect
	}{
		{"/catalogs/c%61t/api/v1/all", 200, all, ""},
		{"/catalogs/%63%61%74/api/v1/all", 200, all, ""},
		{"/catalogs/cat/api/v1/%61ll", 200, all, ""},
		{"/catalogs/cat/%61pi/v1/all", 200, all, ""},
		{"/catalogs/c%61t/api/v1/metas?schema=olm.package", 200, metas, ""},
		{"/catalogs/c%61t/api/v1/m%65tas?schema=olm%2Epackage", 200, metas, ""},
		{"/api/v1/%61ll", 200, all, ""},
		{"/catalogs/c%61t/api/v1/packages/test%2Dpackage", 200, pkg, ""},
		{"/catalogs/c%61t/", 200, page, ""},
		{"/catalogs/c%2Fat/api/v1/all", 400, nil, ""},
		{"/catalogs/cat%2F/api/v1/all", 400, nil, ""},
		{"/catalogs/CAT/api/v1/all", 400, nil, ""},
		{"/catalogs/c%41t/api/v1/all", 400, nil, ""},
		{"/catalogs/cat/api%2Fv1/all", 404, nil, ""},
		{"/catalogs/cat/api/v1/all%2F", 404, nil, ""},
		{"/catalogs/cat/api/v1/all/", 404, nil, ""},
		{"/catalogs%2Fcat/api/v1/all", 404, nil, ""},
		{"/api%2Fv1/all", 404, nil, ""},
		{"/catalogs/cat/api/v1/%2E%2E/v1/all", 404, nil, ""},
		{"/catalogs/cat/api/v1/./all", 307, nil, "/catalogs/cat/api/v1/all"},
		{"/catalogs/cat/api/v1/x/../all", 307, nil, "/catalogs/cat/api/v1/all"},
		{"//catalogs/cat/api/v1/all", 307, nil, "/catalogs/cat/api/v1/all"},
	} {
		req, err := http.NewRequest("GET", ts.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d %.100s, want %d", tc.path, resp.StatusCode, body, tc.code)
			continue
		}
		if tc.body != nil && !bytes.Equal(body, tc.body) {
			t.Errorf("%s: %d bytes, not the %d bytes of the unescaped path", tc.path, len(body), len(tc.body))
		}
		if got := resp.Header.Get("Location"); got != tc.location {
			t.Errorf("%s: Location %q, want %q", tc.path, got, tc.location)
		}
	}
}
