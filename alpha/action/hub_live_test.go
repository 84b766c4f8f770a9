package action

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastopm/fastopm/internal/kubetest"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// TestHubKubeconfig: the hub reads a live cluster's state (an in-process
// API endpoint serving recorded objects: no real kube-apiserver was
// available) and answers as over the same objects in files; it reads the
// state again at its interval, serves a state that changed, and keeps the
// last good state when a reading fails, saying so.
func TestHubKubeconfig(t *testing.T) {
	statePath := "../../testdata/cluster/states/several-subscriptions.yaml"
	b, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	l := kubetest.NewLists()
	l.ServeOLM()
	l.PageSize, l.Token = 2, "t0ken"
	if err := l.AddYAML(b); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(l)
	t.Cleanup(srv.Close)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubetest.Kubeconfig(srv.URL, kubetest.CertPEM(srv), l.Token))
	if err != nil {
		t.Fatal(err)
	}

	if err := (&Hub{Catalogs: installFlags(), State: []string{statePath}, Cluster: cfg, HTTPAddr: "127.0.0.1:0"}).Run(context.Background()); err == nil ||
		!strings.Contains(err.Error(), "--state and --kubeconfig (--context) do not go together") {
		t.Errorf("--state with --kubeconfig: %v", err)
	}

	r := startHub(t, &Hub{Catalogs: installFlags(), Cluster: cfg, StateInterval: 20 * time.Millisecond})
	r.ready(t)

	// The answer is query cluster's over the same objects in a file, but
	// for the line that says where they were read.
	var cats []ClusterCatalogFlag
	for _, c := range installFlags() {
		f, err := ParseClusterCatalog(c.Name + "=" + c.Ref)
		if err != nil {
			t.Fatal(err)
		}
		cats = append(cats, f)
	}
	rep, err := (&QueryCluster{State: []string{statePath}, Catalogs: cats, Sources: DirResolver{}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(rep)
	_, gb := r.get(t, "/api/v1/cluster")
	var got, want map[string]any
	if err := json.Unmarshal(gb, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wb, &want); err != nil {
		t.Fatal(err)
	}
	if s, _ := got["state"].(string); !strings.HasPrefix(s, "cluster "+srv.URL+": ") {
		t.Errorf("state line %q", s)
	}
	delete(got, "state")
	delete(want, "state")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the hub over the cluster answers\n%s\nquery cluster over the file:\n%s", gb, wb)
	}

	installedIn := func(body []byte, ns, pkg string) *HubInstalledEntry {
		var inst HubInstalled
		if err := json.Unmarshal(body, &inst); err != nil {
			t.Fatal(err)
		}
		for i, o := range inst.Operators {
			if o.Namespace == ns && o.Package == pkg {
				return &inst.Operators[i]
			}
		}
		return nil
	}
	if _, body := r.get(t, "/api/v1/cluster/installed"); installedIn(body, "team-c", "etcd") != nil {
		t.Fatalf("team-c before it is made: %s", body)
	}

	// A Subscription made in the cluster: the next reading serves it.
	if err := l.AddYAML([]byte(`
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-c}
spec: {}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: team-c}
spec: {name: etcd, source: community, sourceNamespace: olm, channel: stable}
`)); err != nil {
		t.Fatal(err)
	}
	body := r.waitFor(t, "/api/v1/cluster/installed", func(code int, body []byte) bool {
		return code == 200 && installedIn(body, "team-c", "etcd") != nil
	})
	if e := installedIn(body, "team-c", "etcd"); e.Next == nil || e.Next.Outcome != "installs" {
		t.Errorf("etcd in team-c: %+v", e)
	}
	var hs struct {
		ClusterStatus *httpserver.ClusterStatus
	}
	_, body = r.get(t, "/api/v1/hub")
	if err := json.Unmarshal(body, &hs); err != nil {
		t.Fatal(err)
	}
	if hs.ClusterStatus == nil || hs.ClusterStatus.State != "serving" || hs.ClusterStatus.Read == nil {
		t.Errorf("/api/v1/hub: %s", body)
	}

	// A reading that fails (the user lost the right to list
	// Subscriptions): the last good state stays served, and the hub says
	// so; it stays ready.
	l.Forbid("operators.coreos.com/v1alpha1", "subscriptions")
	body = r.waitFor(t, "/readyz", func(_ int, body []byte) bool { return strings.Contains(string(body), "cluster state: stale") })
	if code, _ := r.get(t, "/readyz"); code != 200 || !strings.Contains(string(body), "the last reading failed: ") || !strings.Contains(string(body), "may not list subscriptions") {
		t.Errorf("readyz %d %s", code, body)
	}
	_, body = r.get(t, "/api/v1/hub")
	hs.ClusterStatus = nil
	if err := json.Unmarshal(body, &hs); err != nil {
		t.Fatal(err)
	}
	if hs.ClusterStatus == nil || hs.ClusterStatus.State != "stale" || !strings.Contains(hs.ClusterStatus.Error, "subscriptions") {
		t.Errorf("/api/v1/hub after a failed reading: %s", body)
	}
	if _, body := r.get(t, "/api/v1/cluster/installed"); installedIn(body, "team-c", "etcd") == nil {
		t.Errorf("the last good state is not served: %s", body)
	}
}
