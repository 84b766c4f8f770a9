package action

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastopm/fastopm/internal/kubetest"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// sameNameState is a cluster with two CatalogSources of one name,
// my-catalog, in team-a and team-b (per-namespace catalogs), and in each
// namespace a Subscription to elasticsearch from its own. Written for
// these tests.
const sameNameState = `
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: my-catalog, namespace: team-a}
spec: {sourceType: grpc, image: quay.io/example/team-a-catalog:latest, priority: 0}
---
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: my-catalog, namespace: team-b}
spec: {sourceType: grpc, image: quay.io/example/team-b-catalog:latest, priority: 0}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-a}
spec: {}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-b}
spec: {}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: elasticsearch, namespace: team-a}
spec: {name: elasticsearch, source: my-catalog, sourceNamespace: team-a}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: elasticsearch, namespace: team-b}
spec: {name: elasticsearch, source: my-catalog, sourceNamespace: team-b}
`

// sameNameFlags give team-a's my-catalog testdata/install's certified
// catalog (elasticsearch 7.10.0 at the head of stable) and team-b's its
// marketplace (7.17.0), under names of their own in the hub.
func sameNameFlags(t *testing.T) []HubCatalogFlag {
	t.Helper()
	var fs []HubCatalogFlag
	for _, s := range []string{
		"team-a/my-catalog=../../testdata/install/certified,name=my-catalog-a",
		"team-b/my-catalog=../../testdata/install/marketplace,name=my-catalog-b",
	} {
		f, err := ParseHubCatalog(s)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	return fs
}

// TestHubCatalogNames: two CatalogSources named alike in two namespaces,
// each given its own catalog with name=: both catalogs are served under
// their names in the hub, each namespace's Subscription resolves from its
// own CatalogSource's catalog (as query cluster answers over the same
// CatalogSources), and the answers name each catalog as they should (the
// cluster's by CatalogSource, the hub's by the hub's name).
func TestHubCatalogNames(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.yaml")
	if err := os.WriteFile(state, []byte(sameNameState), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startHub(t, &Hub{Catalogs: sameNameFlags(t), State: []string{state}})
	r.ready(t)

	for path, want := range map[string]string{
		"/catalogs/my-catalog-a/api/v1/all": `"name":"elasticsearch.v7.10.0"`,
		"/catalogs/my-catalog-b/api/v1/all": `"name":"elasticsearch-mkt.v7.17.0"`,
	} {
		if code, body := r.get(t, path); code != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d, want 200 with %s", path, code, want)
		}
	}
	if code, _ := r.get(t, "/catalogs/my-catalog/api/v1/all"); code != 404 {
		t.Errorf("/catalogs/my-catalog: %d, want 404 (the hub's names are name='s)", code)
	}

	v := r.hubView(t, nil)
	for hub, src := range map[string]string{"my-catalog-a": "team-a/my-catalog", "my-catalog-b": "team-b/my-catalog"} {
		if c := v.catalog(hub); c.CatalogSource != src {
			t.Errorf("/api/v1/hub: catalog %s gives %q, want %s", hub, c.CatalogSource, src)
		}
		if cs := v.source(src); cs == nil || cs.Catalog != hub {
			t.Errorf("/api/v1/hub: CatalogSource %s: %+v, want catalog %s", src, cs, hub)
		}
	}

	// The cluster's answers, and a what-if of team-b's Subscription
	// (the page's form: source=, sourceNamespace= of the catalog's
	// CatalogSource), are query cluster's over the same CatalogSources.
	var cats []ClusterCatalogFlag
	for _, s := range []string{"team-a/my-catalog=../../testdata/install/certified", "team-b/my-catalog=../../testdata/install/marketplace"} {
		f, err := ParseClusterCatalog(s)
		if err != nil {
			t.Fatal(err)
		}
		cats = append(cats, f)
	}
	for _, tc := range []struct {
		query string
		q     QueryCluster
		want  map[string]string // namespace/subscription: outcome to
	}{
		{"", QueryCluster{}, map[string]string{
			"team-a/elasticsearch": "installs elasticsearch.v7.10.0",
			"team-b/elasticsearch": "installs elasticsearch-mkt.v7.17.0"}},
		{"namespace=team-b&subscribe=team-b/elasticsearch,source=my-catalog,sourceNamespace=team-b&plan=true",
			QueryCluster{Namespace: "team-b", Subscribe: []string{"team-b/elasticsearch,source=my-catalog,sourceNamespace=team-b"}, Plan: true},
			map[string]string{"team-b/elasticsearch": "installs elasticsearch-mkt.v7.17.0"}},
	} {
		code, body := r.get(t, "/api/v1/cluster?"+tc.query)
		if code != 200 {
			t.Fatalf("/api/v1/cluster?%s: %d %s", tc.query, code, body)
		}
		var rep ClusterReport
		if err := json.Unmarshal(body, &rep); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, n := range rep.Namespaces {
			for _, o := range n.Subscriptions {
				got[n.Namespace+"/"+o.Name] = o.Outcome + " " + o.To
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("/api/v1/cluster?%s: %v, want %v", tc.query, got, tc.want)
		}
		q := tc.q
		q.State, q.Catalogs, q.Sources = []string{state}, cats, DirResolver{}
		want, err := q.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b, same := sameAnswer(t, body, want); !same {
			t.Errorf("/api/v1/cluster?%s: the hub answers\n%s\nquery cluster:\n%s", tc.query, body, b)
		}
	}

	// The installed view names each Subscription's catalog by the hub's
	// name.
	for ns, want := range map[string]string{
		"team-a": "installs elasticsearch.v7.10.0 from my-catalog-a",
		"team-b": "installs elasticsearch-mkt.v7.17.0 from my-catalog-b",
	} {
		if got := r.installedOutcome(t, ns, "elasticsearch"); got != want {
			t.Errorf("installed in %s: %q, want %q", ns, got, want)
		}
	}

	// The merged list and installs across catalogs name the hub's
	// catalogs: of two of one priority, the first by name.
	var list struct {
		Packages []struct {
			Name     string
			Catalog  string
			Catalogs []struct{ Catalog string }
		}
	}
	_, body := r.get(t, "/api/v1/packages")
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Packages) != 1 || list.Packages[0].Catalog != "my-catalog-a" || len(list.Packages[0].Catalogs) != 2 ||
		list.Packages[0].Catalogs[1].Catalog != "my-catalog-b" {
		t.Errorf("/api/v1/packages: %s", body)
	}
	if code, body := r.get(t, "/api/v1/install?package=elasticsearch"); code != 200 ||
		!strings.Contains(string(body), `"elasticsearch.v7.10.0"`) || !strings.Contains(string(body), "my-catalog-a") {
		t.Errorf("/api/v1/install: %d %s", code, body)
	}
}

// TestHubCatalogNamesLive: the catalogs of name= follow their
// CatalogSources (by the CatalogSource's name, not the hub's) at every
// reading of a live cluster: team-b's priority raised is taken by
// my-catalog-b, which keeps giving team-b's content.
func TestHubCatalogNamesLive(t *testing.T) {
	l := kubetest.NewLists()
	l.ServeOLM()
	if err := l.AddYAML([]byte(sameNameState)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(l)
	t.Cleanup(srv.Close)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubetest.Kubeconfig(srv.URL, kubetest.CertPEM(srv), l.Token))
	if err != nil {
		t.Fatal(err)
	}
	r := startHub(t, &Hub{Catalogs: sameNameFlags(t), Cluster: cfg, StateInterval: 20 * time.Millisecond})
	r.ready(t)
	if got := r.installedOutcome(t, "team-b", "elasticsearch"); got != "installs elasticsearch-mkt.v7.17.0 from my-catalog-b" {
		t.Fatalf("installed in team-b: %q", got)
	}

	putCatalogSource(t, l, "team-b", "my-catalog", "quay.io/example/team-b-catalog:latest", 5)
	// The reading served (its CatalogSource's priority in the overview),
	// the catalog of it took it.
	v := r.waitHub(t, func(v hubView) bool { cs := v.source("team-b/my-catalog"); return cs != nil && cs.Priority == 5 })
	if cs := v.source("team-b/my-catalog"); cs.Catalog != "my-catalog-b" {
		t.Errorf("CatalogSource team-b/my-catalog after the reading: %+v", cs)
	}
	if c := v.catalog("my-catalog-b"); c.CatalogSource != "team-b/my-catalog" || c.Priority != 5 {
		t.Errorf("my-catalog-b after the reading: %+v", c)
	}
	if c := v.catalog("my-catalog-a"); c.CatalogSource != "team-a/my-catalog" || c.Priority != 0 {
		t.Errorf("my-catalog-a after the reading: %+v", c)
	}
	for ns, want := range map[string]string{
		"team-a": "installs elasticsearch.v7.10.0 from my-catalog-a",
		"team-b": "installs elasticsearch-mkt.v7.17.0 from my-catalog-b",
	} {
		if got := r.installedOutcome(t, ns, "elasticsearch"); got != want {
			t.Errorf("installed in %s after the reading: %q, want %q", ns, got, want)
		}
	}
	// Installs across catalogs now prefer my-catalog-b, of priority 5.
	if code, body := r.get(t, "/api/v1/install?package=elasticsearch"); code != 200 || !strings.Contains(string(body), `"elasticsearch-mkt.v7.17.0"`) {
		t.Errorf("/api/v1/install after the reading: %d %s", code, body)
	}
}

// TestHubCatalogNamesRefused: the hub's names are once per hub: the same
// NAME twice without name= says to give name=, with an example; a name=
// that another catalog has is refused; two catalogs of one CatalogSource
// are, whatever their names.
func TestHubCatalogNamesRefused(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.yaml")
	if err := os.WriteFile(state, []byte(sameNameState), 0o644); err != nil {
		t.Fatal(err)
	}
	parse := func(ss ...string) []HubCatalogFlag {
		var fs []HubCatalogFlag
		for _, s := range ss {
			f, err := ParseHubCatalog(s)
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, f)
		}
		return fs
	}
	const a, b = "../../testdata/install/certified", "../../testdata/install/marketplace"
	for _, tc := range []struct {
		cats  []HubCatalogFlag
		state []string
		err   string
	}{
		{parse("team-a/my-catalog="+a, "team-b/my-catalog="+b), nil,
			`--catalog team-b/my-catalog: two catalogs are named "my-catalog": give each a name of its own in the hub with name=HUBNAME (e.g. --catalog team-b/my-catalog=REF,name=my-catalog-team-b)`},
		{parse("my-catalog="+a, "my-catalog="+b), nil,
			`two catalogs are named "my-catalog": give each a name of its own in the hub with name=HUBNAME (e.g. --catalog my-catalog=REF,name=my-catalog-2)`},
		{parse("team-a/my-catalog="+a+",name=mine", "team-b/my-catalog="+b+",name=mine"), nil,
			`--catalog team-b/my-catalog,name=mine: two catalogs are named "mine" in the hub (--catalog team-a/my-catalog,name=mine is too): give each a name of its own with name=HUBNAME`},
		{parse("team-a/my-catalog="+a, "other="+b+",name=my-catalog"), nil, `two catalogs are named "my-catalog" in the hub`},
		{parse("team-a/my-catalog="+a+",name=x", "team-a/my-catalog="+b+",name=y"), []string{state}, "--catalog team-a/my-catalog,name=y: CatalogSource team-a/my-catalog is given twice"},
		{parse("my-catalog=" + a + ",name=x"), []string{state}, "--catalog my-catalog,name=x: CatalogSources team-a/my-catalog and team-b/my-catalog have that name: give NAMESPACE/NAME"},
		{parse("team-c/my-catalog=" + a + ",name=x"), []string{state}, "--catalog team-c/my-catalog,name=x: the state has no CatalogSource team-c/my-catalog"},
		{[]HubCatalogFlag{{Name: "x", SourceName: "Bad", Ref: a}}, nil, `invalid catalog name "Bad"`},
	} {
		// A hub that starts (the flags not refused) stops at once.
		ctx, cancel := context.WithCancel(context.Background())
		err := (&Hub{Catalogs: tc.cats, State: tc.state, HTTPAddr: "127.0.0.1:0", Sources: DirResolver{},
			OnHub: func(*httpserver.Hub) { cancel() }}).Run(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: %v, want %q", tc.cats, err, tc.err)
		}
	}
}
