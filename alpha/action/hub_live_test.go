package action

import (
	"context"
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

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastopm/fastopm/internal/imagetest"
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

// TestHubPullBundles: the what-if of a package whose catalog gives its
// bundle by image only has no steps for it (OLM unpacks the image) unless
// the hub pulls bundle images (--pull-bundles): then its steps are those
// of the image's manifests (an in-process registry), the CSV and the CRD.
func TestHubPullBundles(t *testing.T) {
	reg := imagetest.Registry(t)
	imagetest.Push(t, reg+"/widget-bundle:v1", imagetest.BundleImage(t, "../../testdata/install/bundle"))
	dir := t.TempDir()
	catalog := `{"schema":"olm.package","name":"widget-operator","defaultChannel":"stable"}
{"schema":"olm.channel","package":"widget-operator","name":"stable","entries":[{"name":"widget-operator.v1.0.0"}]}
{"schema":"olm.bundle","name":"widget-operator.v1.0.0","package":"widget-operator","image":"` + reg + `/widget-bundle:v1","properties":[{"type":"olm.package","value":{"packageName":"widget-operator","version":"1.0.0"}}]}
`
	state := filepath.Join(t.TempDir(), "state.yaml")
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte(`
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: widgets, namespace: olm}
spec: {sourceType: grpc, image: quay.io/example/widgets:v1}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-w}
spec: {}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	whatIf := "/api/v1/cluster?namespace=team-w&subscribe=team-w/widget-operator&plan=true"
	type plan struct {
		Namespaces []struct {
			Plan *struct {
				Steps []struct {
					Resource struct{ Kind, Name string }
				}
				NotUnpacked []string
			}
		}
	}
	for _, pull := range []bool{false, true} {
		a := &Hub{Catalogs: []HubCatalogFlag{{Name: "widgets", Ref: dir}}, State: []string{state}}
		images := &countingResolver{inner: &Resolver{ImageOptions: anonymous, TempDir: t.TempDir(), Allowed: RefBundleImage}}
		if pull {
			a.BundleImages = images
		}
		r := startHub(t, a)
		r.ready(t)
		// The same what-if asked four times at once, and once after: the
		// image is pulled once.
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := http.Get(r.url + whatIf)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		wg.Wait()
		code, body := r.get(t, whatIf)
		if n := images.n.Load(); pull && n != 1 {
			t.Errorf("the bundle image was pulled %d times", n)
		}
		var p plan
		if err := json.Unmarshal(body, &p); err != nil || code != 200 || len(p.Namespaces) != 1 || p.Namespaces[0].Plan == nil {
			t.Fatalf("pull %v: %d %s", pull, code, body)
		}
		var kinds []string
		for _, s := range p.Namespaces[0].Plan.Steps {
			kinds = append(kinds, s.Resource.Kind+" "+s.Resource.Name)
		}
		got := fmt.Sprint(p.Namespaces[0].Plan.NotUnpacked, kinds)
		want := "[widget-operator.v1.0.0] []"
		if pull {
			want = "[] [ClusterServiceVersion widget-operator.v1.0.0 CustomResourceDefinition widgets.example.com]"
		}
		if got != want {
			t.Errorf("pull %v: %s, want %s\n%s", pull, got, want, body)
		}
		// query cluster --plan [--pull-bundles]'s answer, the same.
		cf, err := ParseClusterCatalog("widgets=" + dir)
		if err != nil {
			t.Fatal(err)
		}
		q := &QueryCluster{State: []string{state}, Catalogs: []ClusterCatalogFlag{cf}, Sources: DirResolver{}, Namespace: "team-w",
			Subscribe: []string{"team-w/widget-operator"}, Plan: true}
		if pull {
			q.BundleImages = images.inner
		}
		rep, err := q.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if wb, same := sameAnswer(t, body, rep); !same {
			t.Errorf("pull %v: the hub answers\n%s\nquery cluster:\n%s", pull, body, wb)
		}
	}
}

// countingResolver counts the references it resolves.
type countingResolver struct {
	inner SourceResolver
	n     atomic.Int32
}

func (c *countingResolver) Resolve(ctx context.Context, ref string) (*Source, error) {
	c.n.Add(1)
	return c.inner.Resolve(ctx, ref)
}

// TestHubKubeconfigHung: an API server that stops answering (it accepts
// the LIST and never replies) does not hold the state's reading for
// ever: the reading ends at its bound, and the hub says the state
// it serves is stale (without the bound, /readyz said "serving" for as
// long as the server hung).
func TestHubKubeconfigHung(t *testing.T) {
	b, err := os.ReadFile("../../testdata/cluster/states/several-subscriptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := kubetest.NewLists()
	l.ServeOLM()
	if err := l.AddYAML(b); err != nil {
		t.Fatal(err)
	}
	var hang atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			<-r.Context().Done()
			return
		}
		l.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubetest.Kubeconfig(srv.URL, kubetest.CertPEM(srv), l.Token))
	if err != nil {
		t.Fatal(err)
	}
	// Readings bounded at 50 ms: once the server hangs, each one times
	// out, however fast the machine.
	r := startHub(t, &Hub{Catalogs: installFlags(), Cluster: cfg, StateInterval: 20 * time.Millisecond, stateTimeout: 50 * time.Millisecond})
	r.ready(t)
	hang.Store(true)
	body := r.waitFor(t, "/readyz", func(_ int, body []byte) bool { return strings.Contains(string(body), "cluster state: stale") })
	if !strings.Contains(string(body), "did not finish within 50ms") {
		t.Errorf("readyz: %s", body)
	}
}
