package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/pkg/httpserver"
	"github.com/fastopm/fastopm/pkg/image"
)

// runningHub is a Hub running in the test, on a loopback port.
type runningHub struct {
	url  string
	hub  *httpserver.Hub
	done chan error
}

// startHub runs a; it stops when the test ends.
func startHub(t *testing.T, a *Hub) *runningHub {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.HTTPListener = lis
	if a.Sources == nil {
		a.Sources = &Resolver{ImageOptions: anonymous, TempDir: t.TempDir(), Allowed: RefCatalogDir | RefCatalogImage}
	}
	if a.TempDir == "" {
		a.TempDir = t.TempDir()
	}
	hubs := make(chan *httpserver.Hub, 1)
	a.OnHub = func(h *httpserver.Hub) { hubs <- h }
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningHub{url: "http://" + lis.Addr().String(), done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("the hub ended with %v", err)
		}
	})
	select {
	case r.hub = <-hubs:
	case err := <-r.done:
		r.done <- nil // for the cleanup, which waits for the end
		t.Fatalf("the hub did not start: %v", err)
	}
	return r
}

// get answers a GET of the hub.
func (r *runningHub) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(r.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// waitFor polls path until ok says so: a readiness signal, with a hang
// guard of minutes.
func (r *runningHub) waitFor(t *testing.T, path string, ok func(code int, body []byte) bool) []byte {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		code, body := r.get(t, path)
		if ok(code, body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %d %s", path, code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *runningHub) ready(t *testing.T) {
	t.Helper()
	r.waitFor(t, "/readyz", func(code int, _ []byte) bool { return code == 200 })
}

// TestParseHubCatalog: --catalog's forms, and what is refused.
func TestParseHubCatalog(t *testing.T) {
	dir := t.TempDir()
	comma := filepath.Join(dir, "a,b=c")
	if err := os.Mkdir(comma, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want HubCatalogFlag
		err  string
	}{
		{in: "community=./dir", want: HubCatalogFlag{Name: "community", Ref: "./dir"}},
		{in: "olm/community=./dir,priority=-3", want: HubCatalogFlag{Name: "community", Namespace: "olm", Ref: "./dir", Priority: -3, PrioritySet: true}},
		{in: "c=quay.io/x/y:v1,pollIntervalMinutes=5,priority=2", want: HubCatalogFlag{Name: "c", Ref: "quay.io/x/y:v1", Priority: 2, PrioritySet: true, PollInterval: 5 * time.Minute}},
		{in: "c=" + comma, want: HubCatalogFlag{Name: "c", Ref: comma}},
		{in: "c=" + comma + ",priority=1", want: HubCatalogFlag{Name: "c", Ref: comma, Priority: 1, PrioritySet: true}},
		{in: "Community=./dir", err: `invalid catalog name "Community"`},
		{in: "my_catalog=./dir", err: `invalid catalog name "my_catalog"`},
		{in: "a/b/c=./dir", err: "the name is NAME or NAMESPACE/NAME"},
		{in: "c", err: "expected [NAMESPACE/]NAME=REF"},
		{in: "c=x:v1,prority=1", err: `unknown option "prority" (the options are priority=N, pollIntervalMinutes=M and name=HUBNAME); did you mean priority?`},
		// name=: the catalog's name in the hub, NAME staying its
		// CatalogSource's; parsed from the end as the other options.
		{in: "team-a/my-catalog=./dir,name=my-catalog-a", want: HubCatalogFlag{Name: "my-catalog-a", SourceName: "my-catalog", Namespace: "team-a", Ref: "./dir"}},
		{in: "my-catalog=quay.io/x/y:v1,name=mc,pollIntervalMinutes=5,priority=2",
			want: HubCatalogFlag{Name: "mc", SourceName: "my-catalog", Ref: "quay.io/x/y:v1", Priority: 2, PrioritySet: true, PollInterval: 5 * time.Minute}},
		{in: "c=" + comma + ",name=d", want: HubCatalogFlag{Name: "d", SourceName: "c", Ref: comma}},
		{in: "c=./dir,name=c", want: HubCatalogFlag{Name: "c", Ref: "./dir"}},
		{in: "c=./dir,nmae=d", err: `unknown option "nmae" (the options are priority=N, pollIntervalMinutes=M and name=HUBNAME); did you mean name?`},
		{in: "c=./dir,name=My_Catalog", err: `name=: invalid catalog name "My_Catalog"`},
		{in: "c=./dir,name=", err: `name=: invalid catalog name ""`},
		{in: "c=./dir,name=a,name=b", err: "name= is given twice"},
		{in: "Bad=./dir,name=good", err: `invalid catalog name "Bad"`},
		{in: "c=x:v1,priority=high", err: `priority "high" is not a whole number`},
		{in: "c=x:v1,pollIntervalMinutes=0", err: "pollIntervalMinutes \"0\" is not a whole number of minutes from 1"},
		{in: "c=x@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef,pollIntervalMinutes=5", err: "cannot specify pollIntervalMinutes while using digest-based image"},
		{in: "c=" + dir + ",pollIntervalMinutes=5", err: "pollIntervalMinutes polls an image; " + dir + " is a directory"},
		{in: "c=,priority=1", err: "no reference"},
	} {
		got, err := ParseHubCatalog(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case got != tc.want:
			t.Errorf("%s: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// installFlags are testdata/install's catalogs as the hub's.
func installFlags() []HubCatalogFlag {
	return []HubCatalogFlag{
		{Name: "community", Ref: "../../testdata/install/community"},
		{Name: "certified", Ref: "../../testdata/install/certified"},
		{Name: "marketplace", Ref: "../../testdata/install/marketplace"},
	}
}

// TestHubCluster: the hub's cluster answers are query cluster's, over the
// same state and catalogs: the whole report, one namespace's plan with a
// hypothetical Subscription, and the errors of a wrong question.
func TestHubCluster(t *testing.T) {
	state := []string{"../../testdata/cluster/states/several-subscriptions.yaml", "../../testdata/cluster/states/two-namespaces.yaml"}
	r := startHub(t, &Hub{Catalogs: installFlags(), State: state})
	r.ready(t)
	var cats []ClusterCatalogFlag
	for _, c := range installFlags() {
		f, err := ParseClusterCatalog(c.Name + "=" + c.Ref)
		if err != nil {
			t.Fatal(err)
		}
		cats = append(cats, f)
	}
	for _, tc := range []struct {
		query string
		q     QueryCluster
	}{
		{"", QueryCluster{}},
		{"namespace=team-a&plan=true", QueryCluster{Namespace: "team-a", Plan: true}},
		{"namespace=team-a&subscribe=team-a/logging&plan=true", QueryCluster{Namespace: "team-a", Subscribe: []string{"team-a/logging"}, Plan: true}},
		{"subscribe=new-ns/etcd,channel=alpha", QueryCluster{Subscribe: []string{"new-ns/etcd,channel=alpha"}}},
	} {
		code, body := r.get(t, "/api/v1/cluster?"+tc.query)
		if code != 200 {
			t.Errorf("%s: %d %s", tc.query, code, body)
			continue
		}
		q := tc.q
		q.State, q.Catalogs, q.Sources = state, cats, DirResolver{}
		rep, err := q.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b, same := sameAnswer(t, body, rep); !same {
			t.Errorf("%s: the hub answers\n%s\nquery cluster:\n%s", tc.query, body, b)
		}
	}
	for _, tc := range []struct {
		query    string
		code     int
		contains string
	}{
		{"namespace=nope", 404, `namespace \"nope\" has no Subscriptions in the state`},
		{"subscribe=team-a", 400, "expected NAMESPACE/PACKAGE"},
		{"subscribe=team-a/nope", 400, "no catalog given that namespace team-a sees offers package nope"},
		{"plan=yes", 400, "plan is true or false"},
		{"x=1", 400, "unknown parameter"},
	} {
		code, body := r.get(t, "/api/v1/cluster?"+tc.query)
		if code != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s: %d %s, want %d with %q", tc.query, code, body, tc.code, tc.contains)
		}
	}

	// The installed view: etcd in team-a upgrades, and the list's tile
	// knows it is installed.
	var inst HubInstalled
	_, body := r.get(t, "/api/v1/cluster/installed")
	if err := json.Unmarshal(body, &inst); err != nil {
		t.Fatal(err)
	}
	var etcd *HubInstalledEntry
	for i, o := range inst.Operators {
		if o.Namespace == "team-a" && o.Package == "etcd" {
			etcd = &inst.Operators[i]
		}
	}
	if etcd == nil || etcd.CSV != "etcdoperator.v0.9.2" || etcd.Next == nil || etcd.Next.Outcome != "upgrades" || etcd.Next.To != "etcdoperator.v0.9.4" ||
		etcd.Subscription.Catalog != "community" || etcd.OperatorGroup == nil || !etcd.OperatorGroup.OK {
		t.Errorf("etcd in team-a: %s", body)
	}
	var list struct {
		Packages []struct {
			Name      string
			Installed []httpserver.InstalledRef
		}
	}
	_, body = r.get(t, "/api/v1/packages?q=etcd")
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Packages {
		if (p.Name == "etcd") != (len(p.Installed) > 0) {
			t.Errorf("%s installed %v", p.Name, p.Installed)
		}
	}
}

// TestHubStateHostile: a state that names CatalogSources no catalog
// gives (OLM cannot reach them: every namespace that sees them fails, as
// query cluster says), a catalog that is no CatalogSource of the state,
// and catalog flags the state refuses.
func TestHubStateHostile(t *testing.T) {
	state := []string{"../../testdata/cluster/states/unreachable.yaml"}
	r := startHub(t, &Hub{Catalogs: append(installFlags(), HubCatalogFlag{Name: "extra", Ref: "../../testdata/install/marketplace"}), State: state})
	r.ready(t)
	var rep ClusterReport
	_, body := r.get(t, "/api/v1/cluster")
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Namespaces) != 1 || fmt.Sprint(rep.Namespaces[0].Unreachable) != "[olm/redhat-operators]" || rep.Namespaces[0].Subscriptions[0].Outcome != "blocked" ||
		len(rep.Namespaces[0].IfReachable) != 1 {
		t.Errorf("unreachable: %s", body)
	}
	var ov struct {
		Cluster HubClusterOverview
	}
	_, body = r.get(t, "/api/v1/hub")
	if err := json.Unmarshal(body, &ov); err != nil {
		t.Fatal(err)
	}
	var without []string
	for _, cs := range ov.Cluster.CatalogSources {
		if cs.Catalog == "" {
			without = append(without, cs.CatalogSource)
		}
	}
	if fmt.Sprint(without) != "[olm/redhat-operators]" {
		t.Errorf("CatalogSources without a catalog: %v", without)
	}

	for _, tc := range []struct {
		cats  []HubCatalogFlag
		state []string
		err   string
	}{
		{[]HubCatalogFlag{{Name: "community", Namespace: "nope", Ref: "../../testdata/install/community"}}, state, "the state has no CatalogSource nope/community"},
		{[]HubCatalogFlag{{Name: "a", Ref: "../../testdata/install/community"}, {Name: "a", Ref: "../../testdata/install/certified"}}, nil, `two catalogs are named "a"`},
		{[]HubCatalogFlag{{Name: "Bad", Ref: "../../testdata/install/community"}}, nil, `invalid catalog name "Bad"`},
		{[]HubCatalogFlag{{Name: "a", Ref: "../../testdata/install/nope/"}}, nil, "no such file or directory"},
		{[]HubCatalogFlag{{Name: "a", Ref: "../../testdata/install/README.md"}}, nil, "is not a directory"},
		{installFlags(), []string{"../../testdata/install/community/catalog.yaml"}, "catalog.yaml"},
		{nil, nil, "give at least one catalog"},
	} {
		err := (&Hub{Catalogs: tc.cats, State: tc.state, HTTPAddr: "127.0.0.1:0"}).Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: %v, want %q", tc.cats, err, tc.err)
		}
	}
}

// TestHubLoadFailure: a catalog that does not load is said so (failed in
// the list and /readyz, 503 under its name) while the others are served.
func TestHubLoadFailure(t *testing.T) {
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "catalog.yaml"), []byte("schema: olm.package\nname: x\n---\nschema: olm.channel\npackage: x\nname: c\nentries: [{name: x.v1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startHub(t, &Hub{Catalogs: append(installFlags(), HubCatalogFlag{Name: "broken", Ref: broken})})
	body := r.waitFor(t, "/readyz", func(code int, body []byte) bool {
		return strings.Contains(string(body), "catalog broken: failed") && !strings.Contains(string(body), "loading")
	})
	if code, _ := r.get(t, "/readyz"); code != 503 || !strings.Contains(string(body), "catalog community: serving") {
		t.Errorf("readyz %d %s", code, body)
	}
	if code, body := r.get(t, "/catalogs/broken/api/v1/all"); code != 503 || !strings.Contains(string(body), "catalog broken is not served: its load failed") {
		t.Errorf("/catalogs/broken: %d %s", code, body)
	}
	if code, body := r.get(t, "/api/v1/install?package=logging"); code != 200 || !strings.Contains(string(body), `"status":"installable"`) {
		t.Errorf("install over the catalogs served: %d %s", code, body)
	}
}

// pushCatalog pushes the catalog directory dir as a catalog image.
func pushCatalog(t *testing.T, ref, dir string) {
	t.Helper()
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"}, imagetest.LayerFromDir(t, dir, "configs")))
}

// TestHubPoll: an image catalog polled for a new digest (an in-process
// registry): a new image pushed to its tag is loaded and swapped in; an
// image that is no catalog leaves the last good one served (stale), and
// a good one after it serves again. Each step waits for the hub's status
// to say so, never for a time.
func TestHubPoll(t *testing.T) {
	host := imagetest.Registry(t)
	ref := host + "/catalogs/es:latest"
	pushCatalog(t, ref, "../../testdata/install/certified")
	a := &Hub{
		Catalogs: []HubCatalogFlag{
			{Name: "community", Ref: "../../testdata/install/community"},
			{Name: "es", Ref: ref, PollInterval: 20 * time.Millisecond},
		},
		Digest: func(ctx context.Context, ref string) (string, string, error) {
			return image.Digest(ctx, ref, anonymous...)
		},
		RetryBase: 10 * time.Millisecond,
	}
	r := startHub(t, a)
	r.ready(t)
	status := func() httpserver.CatalogStatus {
		for _, st := range r.hub.Status() {
			if st.Name == "es" {
				return st
			}
		}
		t.Fatal("no status of es")
		return httpserver.CatalogStatus{}
	}
	first := status()
	if first.State != "serving" || !strings.HasPrefix(first.Digest, "sha256:") || first.PollIntervalMinutes != 0 {
		t.Fatalf("es: %+v", first)
	}
	// logging's dependency, from es (certified's 7.10.0).
	installs := func() string {
		_, body := r.get(t, "/api/v1/install?package=logging")
		var a struct {
			Installs []struct{ Bundle, Catalog string }
		}
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(a.Installs)
	}
	if got := installs(); got != "[{logging.v5.0.0 community} {elasticsearch.v7.10.0 es}]" {
		t.Errorf("before the push: %s", got)
	}
	// A new image on the tag: marketplace's elasticsearch 7.17.0.
	pushCatalog(t, ref, "../../testdata/install/marketplace")
	r.waitFor(t, "/api/v1/hub", func(_ int, body []byte) bool {
		st := status()
		return st.Digest != first.Digest && st.State == "serving"
	})
	if got := installs(); got != "[{logging.v5.0.0 community} {elasticsearch-mkt.v7.17.0 es}]" {
		t.Errorf("after the push: %s", got)
	}
	served := status().Digest
	// An image that is no catalog: the last good one stays.
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{"x": "y"}, imagetest.LayerFromFiles(t, map[string]string{"README": "no catalog"})))
	r.waitFor(t, "/readyz", func(code int, body []byte) bool { return strings.Contains(string(body), "catalog es: stale") })
	code, body := r.get(t, "/readyz")
	if code != 200 || !strings.Contains(string(body), "serving the last good snapshot "+served) {
		t.Errorf("readyz %d %s", code, body)
	}
	if got := installs(); got != "[{logging.v5.0.0 community} {elasticsearch-mkt.v7.17.0 es}]" {
		t.Errorf("stale: %s", got)
	}
	// Fixed: served again.
	pushCatalog(t, ref, "../../testdata/install/certified")
	r.waitFor(t, "/readyz", func(_ int, body []byte) bool { return strings.Contains(string(body), "catalog es: serving sha256:") })
	if got := installs(); got != "[{logging.v5.0.0 community} {elasticsearch.v7.10.0 es}]" {
		t.Errorf("after the fix: %s", got)
	}
	_, body = r.get(t, "/metrics")
	if !strings.Contains(string(body), `opm_catalog_loads_total{catalog="es",result="failure"}`) {
		t.Errorf("no failed load counted: %s", body)
	}
}

// TestWalkBundlesConcurrent: the bundles of a plan are read from a
// catalog of many files, which the walk reads in parallel (the race
// detector watches what the callback keeps).
func TestWalkBundlesConcurrent(t *testing.T) {
	const dir = "../../testdata/catalogs/submariner-v4.14"
	cat, err := OpenModel(context.Background(), DirResolver{}, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	want := map[[2]string]bool{}
	for _, p := range cat.Model {
		for _, ch := range p.Channels {
			for _, b := range ch.Bundles {
				want[[2]string{p.Name, b.Name}] = true
			}
		}
	}
	pkgs, bundles, err := walkBundles(os.DirFS(dir))(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	if len(bundles) != len(want) || len(pkgs) != len(cat.Model) {
		t.Errorf("%d bundles of %d, %d packages of %d", len(bundles), len(want), len(pkgs), len(cat.Model))
	}
}

// sameAnswer reports whether the hub's answer body is, as JSON, query
// cluster's answer rep, and returns rep's JSON (for the message).
func sameAnswer(t *testing.T, body []byte, rep any) ([]byte, bool) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	return b, reflect.DeepEqual(got, want)
}
