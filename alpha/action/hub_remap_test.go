package action

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastopm/fastopm/internal/kubetest"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// The tests of this file follow a live cluster (internal/kubetest.Lists,
// not paged: each LIST is one consistent view) whose CatalogSources
// change while the hub runs: each reading maps the catalogs anew, as
// OLM reads its CatalogSources at every sync.

// liveHub serves testdata/install's catalogs over a live cluster holding
// several-subscriptions.yaml as edit leaves it, read again every 20 ms.
func liveHub(t *testing.T, log *slog.Logger, edit func(l *kubetest.Lists)) (*runningHub, *kubetest.Lists) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/cluster/states/several-subscriptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := kubetest.NewLists()
	l.ServeOLM()
	if err := l.AddYAML(b); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(l)
	}
	srv := httptest.NewTLSServer(l)
	t.Cleanup(srv.Close)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubetest.Kubeconfig(srv.URL, kubetest.CertPEM(srv), l.Token))
	if err != nil {
		t.Fatal(err)
	}
	r := startHub(t, &Hub{Catalogs: installFlags(), Cluster: cfg, StateInterval: 20 * time.Millisecond, Logger: log})
	r.ready(t)
	return r, l
}

// putCatalogSource creates or changes a CatalogSource of the cluster.
func putCatalogSource(t *testing.T, l *kubetest.Lists, ns, name, image string, priority int) {
	t.Helper()
	cs := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"sourceType": "grpc", "image": image, "priority": priority}}
	b, _ := json.Marshal(cs)
	if err := l.Put(b); err != nil {
		t.Fatal(err)
	}
}

// hubView is /api/v1/hub.
type hubView struct {
	Catalogs      []httpserver.CatalogStatus `json:"catalogs"`
	Cluster       *HubClusterOverview        `json:"cluster"`
	ClusterStatus *httpserver.ClusterStatus  `json:"clusterStatus"`
}

func (r *runningHub) hubView(t *testing.T, body []byte) hubView {
	t.Helper()
	if body == nil {
		_, body = r.get(t, "/api/v1/hub")
	}
	var v hubView
	if err := json.Unmarshal(body, &v); err != nil || v.Cluster == nil {
		t.Fatalf("/api/v1/hub: %v %s", err, body)
	}
	return v
}

func (v hubView) catalog(name string) httpserver.CatalogStatus {
	for _, c := range v.Catalogs {
		if c.Name == name {
			return c
		}
	}
	return httpserver.CatalogStatus{}
}

// source is the overview's CatalogSource of that key, nil when the state
// has none.
func (v hubView) source(key string) *HubCatalogSource {
	for i, c := range v.Cluster.CatalogSources {
		if c.CatalogSource == key {
			return &v.Cluster.CatalogSources[i]
		}
	}
	return nil
}

// waitHub waits until /api/v1/hub says what ok looks for.
func (r *runningHub) waitHub(t *testing.T, ok func(v hubView) bool) hubView {
	t.Helper()
	body := r.waitFor(t, "/api/v1/hub", func(code int, body []byte) bool {
		return code == 200 && ok(r.hubView(t, body))
	})
	return r.hubView(t, body)
}

// installedOutcome is what the installed view says the next sync does to
// the Subscription ns/name.
func (r *runningHub) installedOutcome(t *testing.T, ns, name string) string {
	t.Helper()
	code, body := r.get(t, "/api/v1/cluster/installed")
	var inst HubInstalled
	if err := json.Unmarshal(body, &inst); err != nil || code != 200 {
		t.Fatalf("/api/v1/cluster/installed: %d %v %s", code, err, body)
	}
	for _, o := range inst.Operators {
		if o.Namespace == ns && o.Subscription != nil && o.Subscription.Name == name && o.Next != nil {
			return o.Next.Outcome + " " + o.Next.To + " from " + o.Subscription.Catalog
		}
	}
	return "none"
}

// TestHubRemapNewCatalogSource: a catalog whose CatalogSource did not
// exist when the hub started is mapped to it once it is created, and a
// Subscription of it resolves from the catalog's packages; a
// CatalogSource deleted and made again in another namespace follows.
// (The catalogs kept the first reading's mapping: the CatalogSource
// appeared in the overview, but without content.)
func TestHubRemapNewCatalogSource(t *testing.T) {
	r, l := liveHub(t, nil, func(l *kubetest.Lists) {
		l.Delete("operators.coreos.com/v1alpha1", "CatalogSource", "olm", "marketplace")
		if err := l.AddYAML([]byte(`
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-m}
spec: {}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: es, namespace: team-m}
spec: {name: elasticsearch, source: marketplace, sourceNamespace: olm, channel: stable}
`)); err != nil {
			t.Fatal(err)
		}
	})
	v := r.hubView(t, nil)
	if c := v.catalog("marketplace"); c.CatalogSource != "" || v.source("olm/marketplace") != nil {
		t.Fatalf("marketplace before its CatalogSource is made: %+v", v)
	}
	if got := r.installedOutcome(t, "team-m", "es"); strings.HasPrefix(got, "installs") {
		t.Fatalf("team-m/es installs before its CatalogSource is made: %s", got)
	}

	putCatalogSource(t, l, "olm", "marketplace", "quay.io/example/marketplace-catalog:latest", 0)
	v = r.waitHub(t, func(v hubView) bool { return v.source("olm/marketplace") != nil })
	if s := v.source("olm/marketplace"); s.Catalog != "marketplace" {
		t.Errorf("the new CatalogSource has no catalog: %+v", s)
	}
	if c := v.catalog("marketplace"); c.CatalogSource != "olm/marketplace" {
		t.Errorf("/api/v1/hub's marketplace: %+v", c)
	}
	if got, want := r.installedOutcome(t, "team-m", "es"), "installs elasticsearch-mkt.v7.17.0 from marketplace"; got != want {
		t.Errorf("team-m/es: %s, want %s", got, want)
	}
	_, body := r.get(t, "/api/v1/cluster?namespace=team-m")
	var rep ClusterReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(rep.Catalogs, func(c ClusterCatalog) bool { return c.CatalogSource == "olm/marketplace" }); i < 0 ||
		rep.Catalogs[i].Ref != "../../testdata/install/marketplace" {
		t.Errorf("the cluster answer's catalogs: %+v", rep.Catalogs)
	}

	// Deleted, and made again in another namespace: the catalog follows.
	l.Delete("operators.coreos.com/v1alpha1", "CatalogSource", "olm", "marketplace")
	putCatalogSource(t, l, "mkt", "marketplace", "quay.io/example/marketplace-catalog:latest", 0)
	v = r.waitHub(t, func(v hubView) bool { return v.source("mkt/marketplace") != nil })
	if c, s := v.catalog("marketplace"), v.source("mkt/marketplace"); c.CatalogSource != "mkt/marketplace" || s.Catalog != "marketplace" {
		t.Errorf("moved to namespace mkt: catalog %+v, CatalogSource %+v", c, s)
	}
	if got := r.installedOutcome(t, "team-m", "es"); !strings.HasPrefix(got, "blocked ") || !strings.HasSuffix(got, " from ") {
		// Its Subscription names olm/marketplace, which is gone.
		t.Errorf("team-m/es after its CatalogSource moved: %s, want it blocked, from no catalog", got)
	}
	_, body = r.get(t, "/api/v1/cluster?namespace=team-m")
	rep = ClusterReport{}
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(rep.Catalogs, func(c ClusterCatalog) bool { return c.CatalogSource == "mkt/marketplace" }); i < 0 ||
		rep.Catalogs[i].Ref != "../../testdata/install/marketplace" {
		t.Errorf("the cluster answer's catalogs: %+v", rep.Catalogs)
	}
}

// TestHubRemapPriority: a CatalogSource whose priority an admin changes
// gives its catalog that priority everywhere: /api/v1/hub, the merged
// list's order, installs across catalogs, the cluster's answers; and
// the hub logs the change. (The catalogs kept the first reading's
// priorities.)
func TestHubRemapPriority(t *testing.T) {
	var logs syncBuffer
	r, l := liveHub(t, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	// elasticsearch is in certified (priority 10) and marketplace (0):
	// logging's dependency comes from certified.
	whatIf := "/api/v1/cluster?namespace=team-a&subscribe=team-a/logging,source=community,sourceNamespace=olm"
	check := func(catalog, bundle, other string) {
		t.Helper()
		_, body := r.get(t, "/api/v1/packages?q=elasticsearch")
		var list struct {
			Packages []struct {
				Name     string
				Catalog  string
				Catalogs []struct {
					Catalog  string
					Priority int
				}
			}
		}
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list.Packages, func(p struct {
			Name     string
			Catalog  string
			Catalogs []struct {
				Catalog  string
				Priority int
			}
		}) bool {
			return p.Name == "elasticsearch"
		})
		if i < 0 || list.Packages[i].Catalog != catalog || list.Packages[i].Catalogs[0].Catalog != catalog {
			t.Errorf("the merged list's elasticsearch is not %s's: %s", catalog, body)
		}
		for _, q := range []string{"/api/v1/install?package=logging", whatIf} {
			code, body := r.get(t, q)
			if code != 200 || !strings.Contains(string(body), bundle) || strings.Contains(string(body), other) {
				t.Errorf("%s: want %s, not %s: %d %s", q, bundle, other, code, body)
			}
		}
	}
	check("certified", "elasticsearch.v7.10.0", "elasticsearch-mkt.v7.17.0")

	putCatalogSource(t, l, "olm", "marketplace", "quay.io/example/marketplace-catalog:v2", 20)
	v := r.waitHub(t, func(v hubView) bool {
		s := v.source("olm/marketplace")
		return s != nil && s.Image == "quay.io/example/marketplace-catalog:v2"
	})
	if c, s := v.catalog("marketplace"), v.source("olm/marketplace"); c.Priority != 20 || s.Priority != 20 {
		t.Errorf("marketplace's priority: catalog %+v, CatalogSource %+v", c, s)
	}
	check("marketplace", "elasticsearch-mkt.v7.17.0", "elasticsearch.v7.10.0")
	// The list's catalogs (the page's table) say so too.
	_, body := r.get(t, "/api/v1/packages?q=elasticsearch")
	var list struct{ Catalogs []httpserver.CatalogStatus }
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(list.Catalogs, func(c httpserver.CatalogStatus) bool { return c.Name == "marketplace" }); i < 0 ||
		list.Catalogs[i].Priority != 20 || list.Catalogs[i].CatalogSource != "olm/marketplace" {
		t.Errorf("the list's catalogs: %+v", list.Catalogs)
	}
	if !strings.Contains(logs.String(), `msg="the catalog's priority changed" catalog=marketplace catalogSource=olm/marketplace priority=20 priorityWas=0`) {
		t.Errorf("no log line of the change:\n%s", logs.String())
	}
}

// TestHubRemapAmbiguous: a reading after which a catalog's name is that
// of two CatalogSources does not stop the hub: the last good state and
// mapping stay served, and /readyz and /api/v1/hub say why, as for a
// reading that failed. (The catalogs kept the first reading's mapping,
// the new state served as if nothing were wrong.)
func TestHubRemapAmbiguous(t *testing.T) {
	r, l := liveHub(t, nil, nil)
	putCatalogSource(t, l, "other", "community", "quay.io/example/other-community:latest", 5)
	// Either the new state served or the reading refused.
	r.waitHub(t, func(v hubView) bool { return v.source("other/community") != nil || v.ClusterStatus.State == "stale" })
	code, body := r.get(t, "/readyz")
	if code != 200 || !strings.Contains(string(body), "cluster state: stale") ||
		!strings.Contains(string(body), "--catalog community: CatalogSources olm/community and other/community have that name: give NAMESPACE/NAME") {
		t.Errorf("/readyz: %d %s", code, body)
	}
	v := r.hubView(t, nil)
	if v.ClusterStatus.State != "stale" || !strings.Contains(v.ClusterStatus.Error, "no longer map to the hub's catalogs") {
		t.Errorf("clusterStatus: %+v", v.ClusterStatus)
	}
	if v.source("other/community") != nil || v.catalog("community").CatalogSource != "olm/community" {
		t.Errorf("not the last good state: %+v", v)
	}
	if got, want := r.installedOutcome(t, "team-a", "etcd-backup"), "installs etcd-backup.v1.0.0 from community"; got != want {
		t.Errorf("team-a/etcd-backup: %s, want %s", got, want)
	}

	// Deleted again: the state is served again.
	l.Delete("operators.coreos.com/v1alpha1", "CatalogSource", "other", "community")
	r.waitHub(t, func(v hubView) bool { return v.ClusterStatus.State == "serving" })
}
