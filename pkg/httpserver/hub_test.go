package httpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// hubServer is a Hub behind a test server.
type hubServer struct {
	*httptest.Server
	hub *httpserver.Hub
}

// newHub serves the catalogs (name, directory, priority) from a hub with
// the given cluster; a directory "" is a catalog never loaded.
func newHub(t testing.TB, cluster httpserver.ClusterState, cats ...httpserver.HubCatalog) *hubServer {
	t.Helper()
	hub, err := httpserver.NewHub(httpserver.HubOptions{Catalogs: cats, Cluster: cluster, Metrics: httpserver.NewHubMetrics()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cats {
		if c.Ref == "" {
			continue
		}
		if err := hub.Set(c.Name, loadSnapshotNoCleanup(t, c.Ref), "", time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	ts := &hubServer{Server: httptest.NewServer(hub.Handler()), hub: hub}
	t.Cleanup(func() {
		ts.Close()
		hub.Close()
	})
	return ts
}

// loadSnapshotNoCleanup is a cold-start snapshot the hub owns (it closes
// it).
func loadSnapshotNoCleanup(t testing.TB, dir string) *cache.Snapshot {
	t.Helper()
	snap, _, err := action.LoadServeTemp(t.Context(), os.DirFS(dir), t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func (ts *hubServer) do(t testing.TB, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	return (&testServer{Server: ts.Server}).do(t, method, path, header...)
}

// installCatalogs are testdata/install's three catalogs, as the README
// says: certified at priority 10.
func installCatalogs() []httpserver.HubCatalog {
	return []httpserver.HubCatalog{
		{Name: "community", Ref: "../../testdata/install/community"},
		{Name: "certified", Ref: "../../testdata/install/certified", Priority: 10},
		{Name: "marketplace", Ref: "../../testdata/install/marketplace"},
	}
}

// TestHubCatalogd: each catalog of a hub answers under /catalogs/NAME/
// with serve's bytes: catalogd's recorded answers (testdata/golden/catalogd)
// for /api/v1/all and every metas query, and a Server's own answers for
// the JSON routes and the page.
func TestHubCatalogd(t *testing.T) {
	const dir = "../../testdata/golden/catalogd"
	names := []string{"fixture-olm-deprecations", "kube-descheduler-v4.12", "submariner-v4.14"}
	var cats []httpserver.HubCatalog
	for _, n := range names {
		cats = append(cats, httpserver.HubCatalog{Name: n, Ref: filepath.Join(catalogs, n)})
	}
	ts := newHub(t, nil, cats...)
	queries := 0
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var g golden
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatal(err)
		}
		resp, body := ts.do(t, "GET", "/catalogs/"+n+"/api/v1/all")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jsonl" {
			t.Fatalf("%s all: %d %s", n, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		g.All.check(t, n+" all", body)
		for _, q := range g.Metas {
			resp, body := ts.do(t, "GET", "/catalogs/"+n+"/api/v1/metas?"+q.Query)
			if resp.StatusCode != 200 {
				t.Fatalf("%s metas?%s: %d", n, q.Query, resp.StatusCode)
			}
			q.check(t, n+" metas?"+q.Query, body)
			queries++
		}
		// The other routes: what serve --http-addr answers for this catalog
		// alone, byte for byte.
		alone := newTestServer(t, snapshot(t, n, false), n)
		for _, p := range []string{"api/v1/packages?limit=all", "api/v1/packages?q=operator&limit=3", "", "ui/app.js", "api/v1/nope"} {
			r1, b1 := alone.do(t, "GET", "/catalogs/"+n+"/"+p)
			r2, b2 := ts.do(t, "GET", "/catalogs/"+n+"/"+p)
			if r1.StatusCode != r2.StatusCode || !bytes.Equal(b1, b2) || r1.Header.Get("Content-Type") != r2.Header.Get("Content-Type") {
				t.Errorf("%s /%s: the hub answers %d (%d bytes), serve %d (%d bytes)", n, p, r2.StatusCode, len(b2), r1.StatusCode, len(b1))
			}
		}
		var list struct {
			Packages []struct{ Name string }
		}
		_, b := alone.do(t, "GET", "/api/v1/packages?limit=all")
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatal(err)
		}
		for _, p := range list.Packages {
			for _, path := range []string{"api/v1/packages/" + p.Name, "api/v1/install?package=" + p.Name} {
				_, b1 := alone.do(t, "GET", "/"+path)
				_, b2 := ts.do(t, "GET", "/catalogs/"+n+"/"+path)
				if !bytes.Equal(b1, b2) {
					t.Errorf("%s /%s differs from serve's answer:\n%s\n%s", n, path, b2, b1)
				}
			}
		}
	}
	t.Logf("%d catalogs, %d metas answers compared", len(names), queries)
}

// hubList is the hub's /api/v1/packages.
type hubListAnswer struct {
	Hub      bool
	Catalogs []httpserver.CatalogStatus
	Total    int
	Packages []struct {
		Name, Catalog, Version string
		Catalogs               []struct {
			Catalog, Version string
			Priority         int
		}
	}
}

// TestHubList: the merged list has each package once, from the catalog a
// Subscription without a source uses (the highest priority, then the
// name), with every catalog that offers it; the catalog filter.
func TestHubList(t *testing.T) {
	ts := newHub(t, nil, installCatalogs()...)
	var a hubListAnswer
	getJSONInto(t, ts.URL+"/api/v1/packages?limit=all", &a)
	if !a.Hub || a.Total != 10 || len(a.Catalogs) != 3 {
		t.Fatalf("hub %v, %d packages, %d catalogs", a.Hub, a.Total, len(a.Catalogs))
	}
	for _, p := range a.Packages {
		if p.Name != "elasticsearch" {
			if p.Catalog != "community" || len(p.Catalogs) != 1 {
				t.Errorf("%s: %+v", p.Name, p)
			}
			continue
		}
		// certified (priority 10) before marketplace, whose version is
		// newer; the tile's version is certified's.
		if p.Catalog != "certified" || fmt.Sprint(p.Catalogs) != "[{certified 7.10.0 10} {marketplace 7.17.0 0}]" || p.Version != "7.10.0" {
			t.Errorf("elasticsearch: %+v", p)
		}
	}
	for q, want := range map[string]int{"catalog=marketplace": 1, "catalog=certified&catalog=marketplace": 1, "catalog=community": 9, "catalog=community&q=etcd": 5, "catalog=nope": 0} {
		var a hubListAnswer
		getJSONInto(t, ts.URL+"/api/v1/packages?limit=all&"+q, &a)
		if a.Total != want {
			t.Errorf("%s: %d packages, want %d", q, a.Total, want)
		}
	}
	// One package: the catalog's answer, with the catalogs that offer it.
	var pkg struct {
		Name, Catalog, DefaultChannel string
		Catalogs                      []struct{ Catalog string }
		Bundles                       []struct{ Name string }
	}
	getJSONInto(t, ts.URL+"/api/v1/packages/elasticsearch", &pkg)
	if pkg.Catalog != "certified" || len(pkg.Catalogs) != 2 || len(pkg.Bundles) != 3 || pkg.DefaultChannel != "stable" {
		t.Errorf("elasticsearch: %+v", pkg)
	}
	getJSONInto(t, ts.URL+"/api/v1/packages/elasticsearch?catalog=marketplace", &pkg)
	if pkg.Catalog != "marketplace" || len(pkg.Bundles) != 1 {
		t.Errorf("elasticsearch of marketplace: %+v", pkg)
	}
}

// cliInstall is `opm alpha query install` with several catalogs, -o json,
// as generic JSON.
func cliInstall(t *testing.T, cats []httpserver.HubCatalog, sub install.Subscription) any {
	t.Helper()
	var ics []action.InstallCatalog
	for _, c := range cats {
		ics = append(ics, action.InstallCatalog{Name: c.Name, Ref: c.Ref, Priority: c.Priority})
	}
	loaded, err := action.LoadInstallCatalogs(t.Context(), action.DirResolver{}, ics, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := install.NewResolver(loaded...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.Resolve(t.Context(), sub)
	if err != nil {
		t.Fatal(err)
	}
	return generic(t, a)
}

func generic(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHubInstall: a new Subscription's answer takes every catalog into
// account, as `query install` with the same catalogs answers: logging's
// dependency on elasticsearch, which community (logging's catalog) lacks,
// is met by certified (priority 10), not by marketplace's newer bundle.
// Alone, community cannot install it (TestInstall).
func TestHubInstall(t *testing.T) {
	cats := installCatalogs()
	ts := newHub(t, nil, cats...)
	for _, tc := range []struct {
		query string
		sub   install.Subscription
	}{
		{"package=logging", install.Subscription{Package: "logging", Catalog: "community"}},
		{"package=etcd-backup", install.Subscription{Package: "etcd-backup", Catalog: "community"}},
		{"package=broken", install.Subscription{Package: "broken", Catalog: "community"}},
		{"package=elasticsearch", install.Subscription{Package: "elasticsearch", Catalog: "certified"}},
		{"package=elasticsearch&catalog=marketplace", install.Subscription{Package: "elasticsearch", Catalog: "marketplace"}},
		{"package=elasticsearch&channel=fast", install.Subscription{Package: "elasticsearch", Channel: "fast", Catalog: "certified"}},
		{"package=etcd&bundle=etcdoperator.v0.9.0", install.Subscription{Package: "etcd", StartingCSV: "etcdoperator.v0.9.0", Catalog: "community"}},
	} {
		resp, body := ts.do(t, "GET", "/api/v1/install?"+tc.query)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", tc.query, resp.StatusCode, body)
			continue
		}
		var got any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if want := cliInstall(t, cats, tc.sub); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the hub answers\n%s\nquery install:\n%v", tc.query, body, want)
		}
	}
	var a install.Answer
	getJSONInto(t, ts.URL+"/api/v1/install?package=logging", &a)
	if a.Status != install.Installable || len(a.Installs) != 2 || a.Installs[1].Bundle != "elasticsearch.v7.10.0" || a.Installs[1].Catalog != "certified" {
		t.Errorf("logging: %+v", a)
	}
	for _, tc := range []struct {
		query    string
		code     int
		contains string
	}{
		{"package=nope", 404, `package \"nope\" not found in the hub's catalogs`},
		{"package=loging", 404, "did you mean logging?"},
		{"package=logging&catalog=certified", 404, `package \"logging\" not found in catalog \"certified\"; the catalogs that offer it: community`},
		{"package=logging&catalog=comunity", 404, `catalog \"comunity\" is not one of the hub's (its catalogs: community, certified, marketplace); did you mean community?`},
		{"package=elasticsearch&channel=beta", 404, `channel \"beta\" not found in package \"elasticsearch\" of catalog \"certified\"`},
		{"channel=stable", 400, "the package parameter is required"},
		{"package=etcd&catalog=a&catalog=b", 400, `parameter \"catalog\" given 2 times`},
		{"package=etcd&source=x", 400, "unknown parameter"},
	} {
		resp, body := ts.do(t, "GET", "/api/v1/install?"+tc.query)
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s: %d %s, want %d with %q", tc.query, resp.StatusCode, body, tc.code, tc.contains)
		}
	}
}

// TestHubForward: a package's other answers (updates, bundle, icon,
// graph) come from the catalog named, or the one a Subscription without
// a source uses: the same bytes as under /catalogs/NAME/.
func TestHubForward(t *testing.T) {
	ts := newHub(t, nil, installCatalogs()...)
	for _, tc := range []struct{ root, catalog string }{
		{"/api/v1/updates?package=elasticsearch&from=7.9.0", "/catalogs/certified/api/v1/updates?package=elasticsearch&from=7.9.0"},
		{"/api/v1/updates?catalog=marketplace&package=elasticsearch&from=7.0.0", "/catalogs/marketplace/api/v1/updates?package=elasticsearch&from=7.0.0"},
		{"/api/v1/updates?package=etcd&from=0.9.0&channel=stable", "/catalogs/community/api/v1/updates?package=etcd&from=0.9.0&channel=stable"},
		{"/api/v1/packages/elasticsearch/bundles/elasticsearch.v7.12.0", "/catalogs/certified/api/v1/packages/elasticsearch/bundles/elasticsearch.v7.12.0"},
		{"/api/v1/updates?package=etcd", "/catalogs/community/api/v1/updates?package=etcd"},                               // an error of the catalog's
		{"/api/v1/updates?package=etcd&from=0.9.0&x=1", "/catalogs/community/api/v1/updates?package=etcd&from=0.9.0&x=1"}, // ditto
		{"/api/v1/olmv1/resolve?package=etcd", "/catalogs/community/api/v1/olmv1/resolve?package=etcd"},
	} {
		r1, b1 := ts.do(t, "GET", tc.root)
		r2, b2 := ts.do(t, "GET", tc.catalog)
		if r1.StatusCode != r2.StatusCode || !bytes.Equal(b1, b2) {
			t.Errorf("%s: %d %s\n%s: %d %s", tc.root, r1.StatusCode, b1, tc.catalog, r2.StatusCode, b2)
		}
	}
	for _, tc := range []struct {
		path     string
		code     int
		contains string
	}{
		{"/api/v1/updates?from=1", 400, "the package parameter is required"},
		{"/api/v1/updates?package=nope&from=1", 404, "not found in the hub's catalogs"},
		{"/api/v1/updates?package=etcd&from=1&catalog=%zz", 400, "malformed query string"},
		{"/api/v1/packages/etcd/icon?catalog=certified", 404, `package \"etcd\" not found in catalog \"certified\"`},
		{"/api/v1/all", 404, "a hub serves catalogd's API per catalog, at /catalogs/NAME/api/v1/all (its catalogs: community, certified, marketplace)"},
		{"/api/v1/metas?schema=olm.package", 404, "/catalogs/NAME/api/v1/metas"},
		{"/api/v1/cluster", 404, "the hub has no cluster state"},
		{"/api/v1/cluster/installed", 404, "the hub has no cluster state"},
	} {
		resp, body := ts.do(t, "GET", tc.path)
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s: %d %s, want %d with %q", tc.path, resp.StatusCode, body, tc.code, tc.contains)
		}
	}
}

// TestHubHostile: names a hub refuses, and paths and parameters it
// answers with an error, never a panic.
func TestHubHostile(t *testing.T) {
	for _, tc := range []struct {
		cats []httpserver.HubCatalog
		err  string
	}{
		{nil, "at least one catalog"},
		{[]httpserver.HubCatalog{{Name: "Community"}}, `invalid catalog name "Community"`},
		{[]httpserver.HubCatalog{{Name: "a_b"}}, `invalid catalog name "a_b"`},
		{[]httpserver.HubCatalog{{Name: "a/b"}}, `invalid catalog name "a/b"`},
		{[]httpserver.HubCatalog{{Name: ""}}, `invalid catalog name ""`},
		{[]httpserver.HubCatalog{{Name: strings.Repeat("a", 254)}}, "invalid catalog name"},
		{[]httpserver.HubCatalog{{Name: "a"}, {Name: "b"}, {Name: "a"}}, `two catalogs are named "a"`},
	} {
		_, err := httpserver.NewHub(httpserver.HubOptions{Catalogs: tc.cats})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: %v, want %q", tc.cats, err, tc.err)
		}
	}
	cats := installCatalogs()
	cats = append(cats, httpserver.HubCatalog{Name: "never", Ref: ""})
	ts := newHub(t, nil, cats...)
	for _, tc := range []struct {
		path     string
		code     int
		contains string
	}{
		{"/catalogs/Community/api/v1/all", 400, "invalid catalog name"},
		{"/catalogs/nope/api/v1/all", 404, "404 Not Found"},
		{"/catalogs/never/api/v1/all", 503, "catalog never is not served: loading"},
		{"/catalogs/community/api/v1/nope", 404, ""},
		{"/api/v1/packages?limit=0", 400, "limit must be"},
		{"/api/v1/packages?catalog=" + strings.Repeat("x", 300), 400, "longer than"},
		{"/api/v1/packages/etcd?catalog=never", 503, `catalog \"never\" is not served: loading`},
		{"/api/v1/packages/%00", 404, "not found"},
		{"/api/v1/install?package=etcd&catalog=" + strings.Repeat("x", 300), 400, "longer than"},
	} {
		resp, body := ts.do(t, "GET", tc.path)
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s: %d %s, want %d with %q", tc.path, resp.StatusCode, body, tc.code, tc.contains)
		}
	}
}

// TestHubReadyz: /readyz is 503 until every catalog is served, names each
// catalog's state, and stays 200 for a catalog whose reload failed (its
// last good snapshot is served).
func TestHubReadyz(t *testing.T) {
	cats := installCatalogs()
	cats[2].Ref = "" // marketplace: not loaded yet
	ts := newHub(t, nil, cats...)
	check := func(code int, contains ...string) {
		t.Helper()
		resp, body := ts.do(t, "GET", "/readyz")
		if resp.StatusCode != code {
			t.Errorf("readyz %d %s, want %d", resp.StatusCode, body, code)
		}
		for _, c := range contains {
			if !strings.Contains(string(body), c) {
				t.Errorf("readyz %q lacks %q", body, c)
			}
		}
	}
	check(503, "catalog community: serving\n", "catalog marketplace: loading\n")
	ts.hub.Failed("marketplace", fmt.Errorf("pull x: 404"))
	check(503, "catalog marketplace: failed: pull x: 404\n")
	if err := ts.hub.Set("marketplace", loadSnapshotNoCleanup(t, "../../testdata/install/marketplace"), "sha256:abc", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	check(200, "catalog marketplace: serving sha256:abc\n")
	ts.hub.Failed("marketplace", fmt.Errorf("pull y: unauthorized"))
	check(200, "catalog marketplace: stale (serving the last good snapshot sha256:abc; the last reload failed: pull y: unauthorized)")
	// The last good snapshot still answers.
	if resp, _ := ts.do(t, "GET", "/catalogs/marketplace/api/v1/all"); resp.StatusCode != 200 {
		t.Errorf("a stale catalog answers %d", resp.StatusCode)
	}
	var a hubListAnswer
	getJSONInto(t, ts.URL+"/api/v1/packages", &a)
	if st := a.Catalogs[2]; st.State != "stale" || st.Error != "pull y: unauthorized" || st.Digest != "sha256:abc" {
		t.Errorf("the list's status of marketplace: %+v", st)
	}
	// Metrics by catalog.
	_, body := ts.do(t, "GET", "/metrics")
	for _, want := range []string{`opm_catalog_packages{catalog="community"} 9`, `opm_catalog_loads_total{catalog="marketplace",result="failure"} 2`,
		`opm_catalog_served{catalog="marketplace"} 1`, `http_requests_total{catalog="",code="200",handler="packages",method="get"} 1`,
		`http_requests_total{catalog="marketplace",code="200",handler="all",method="get"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestHubSwap: catalogs swapped while requests run: every answer is the
// old catalog's or the new one's, whole, and a snapshot is closed only
// once no request uses it (the race detector watches).
func TestHubSwap(t *testing.T) {
	dirs := []string{"../../testdata/install/certified", "../../testdata/install/marketplace"}
	var want [2][]byte
	for i, d := range dirs {
		want[i] = readAll(t, snapshotDir(t, d))
	}
	ts := newHub(t, nil, httpserver.HubCatalog{Name: "es", Ref: dirs[0]}, httpserver.HubCatalog{Name: "community", Ref: "../../testdata/install/community"})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var answered atomic.Int64 // requests answered, to swap while they run
	errs := make(chan error, 100)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, p := range []string{"/catalogs/es/api/v1/all", "/api/v1/install?package=logging"} {
					resp, err := http.Get(ts.URL + p)
					if err != nil {
						errs <- err
						return
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					switch {
					case err != nil:
						errs <- err
					case resp.StatusCode != 200:
						errs <- fmt.Errorf("%s: %d %s", p, resp.StatusCode, body)
					case strings.HasSuffix(p, "all") && !bytes.Equal(body, want[0]) && !bytes.Equal(body, want[1]):
						errs <- fmt.Errorf("%s: %d bytes, neither catalog's", p, len(body))
					}
					answered.Add(1)
				}
			}
		}()
	}
	for i := range 20 {
		// Each swap after requests were answered on the last one: 20
		// swaps in a row could all be done before any request ran.
		deadline := time.Now().Add(3 * time.Minute) // a hang guard
		for n := answered.Load(); answered.Load() < n+4; {
			if time.Now().After(deadline) {
				t.Fatalf("no request answered in minutes before swap %d", i)
			}
			time.Sleep(time.Millisecond)
		}
		if err := ts.hub.Set("es", loadSnapshotNoCleanup(t, dirs[(i+1)%2]), "", time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The last one set is served.
	_, body := ts.do(t, "GET", "/catalogs/es/api/v1/all")
	if !bytes.Equal(body, want[0]) {
		t.Errorf("after the swaps /all is not the last catalog set")
	}
}
