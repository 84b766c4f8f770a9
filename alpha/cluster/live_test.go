package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fastopm/fastopm/internal/kubetest"
)

// liveServer serves the objects of files from an in-process API endpoint
// over TLS with a bearer token, and returns the client configuration of
// a kubeconfig pointing at it.
func liveServer(t *testing.T, l *kubetest.Lists, files ...string) *rest.Config {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.AddYAML(b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	l.Token = "s3cr3t"
	srv := httptest.NewTLSServer(l)
	t.Cleanup(srv.Close)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubetest.Kubeconfig(srv.URL, kubetest.CertPEM(srv), l.Token))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// serveOLM serves every kind ReadCluster lists, with no objects yet: a
// cluster with OLM installed.
func serveOLM(l *kubetest.Lists) { l.ServeOLM() }

// sameState fails unless got, read from a cluster, holds what want, read
// from files, holds.
func sameState(t *testing.T, got, want *State) {
	t.Helper()
	if len(got.Skipped) != 0 {
		t.Errorf("skipped %v from a cluster, which lists only the kinds read", got.Skipped)
	}
	g, w := *got, *want
	g.Files, g.Cluster, g.origin, g.Skipped = w.Files, "", nil, nil
	w.origin, w.Skipped = nil, nil
	if reflect.DeepEqual(g, w) {
		return
	}
	gj, _ := json.MarshalIndent(g, "", " ")
	wj, _ := json.MarshalIndent(w, "", " ")
	gl, wl := strings.Split(string(gj), "\n"), strings.Split(string(wj), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("the cluster's state differs from the files' at line %d of their JSON:\n cluster %s\n files   %s", i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("the cluster's state differs from the files' (%d and %d lines of JSON)", len(gl), len(wl))
}

// TestReadClusterAsFiles: the objects of every state of testdata, served
// by an API endpoint in pages of two, read as Read reads their files.
func TestReadClusterAsFiles(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "cluster", "states", "*.yaml"))
	files = append(files, filepath.Join("testdata", "live", "state.yaml"))
	if len(files) < 5 {
		t.Fatalf("%d states", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			want, err := Read(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			l := kubetest.NewLists()
			l.PageSize = 2
			serveOLM(l)
			cfg := liveServer(t, l, f)
			got, err := ReadCluster(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			sameState(t, got, want)
			if got.Cluster != cfg.Host || !strings.HasPrefix(got.Summary(), "cluster "+cfg.Host+": ") {
				t.Errorf("cluster %q, summary %q", got.Cluster, got.Summary())
			}
			if len(got.Subscriptions) > 0 {
				s := got.Subscriptions[0]
				if o := got.Origin(ObjectKey{KindSubscription, s.Namespace, s.Name}); o != "cluster: subscriptions.operators.coreos.com" {
					t.Errorf("origin %q", o)
				}
			}
			// Every kind listed across all namespaces, a page at a time;
			// the kinds of more than two objects in several pages.
			pages := map[string]int{}
			for _, r := range l.Requests() {
				q, _ := url.ParseQuery(r.Query)
				if r.Method != "GET" || q.Get("limit") != "100" || strings.Contains(r.Path, "/namespaces/") {
					t.Errorf("request %s %s?%s", r.Method, r.Path, r.Query)
				}
				if r.Authorization != "Bearer s3cr3t" {
					t.Errorf("request %s without the kubeconfig's token", r.Path)
				}
				pages[r.Path[strings.LastIndexByte(r.Path, '/')+1:]]++
			}
			if len(pages) != len(liveResources) {
				t.Errorf("resources listed: %v", pages)
			}
			if n := len(got.Subscriptions); n > 2 && pages["subscriptions"] != (n+1)/2 {
				t.Errorf("%d Subscriptions in %d pages", n, pages["subscriptions"])
			}
		})
	}
}

// TestReadClusterKinds: what is kept of every kind, and what is skipped,
// as Read keeps them (the fixture has a copied CSV and a ConfigMap).
func TestReadClusterKinds(t *testing.T) {
	t.Parallel()
	f := filepath.Join("testdata", "live", "state.yaml")
	l := kubetest.NewLists()
	serveOLM(l)
	s, err := ReadCluster(context.Background(), liveServer(t, l, f))
	if err != nil {
		t.Fatal(err)
	}
	got := []int{len(s.Namespaces), len(s.CatalogSources), len(s.Subscriptions), len(s.CSVs), s.Copied, len(s.OperatorGroups), len(s.InstallPlans), len(s.CRDs)}
	if want := []int{3, 1, 2, 1, 1, 2, 1, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	csv := s.CSVs[0]
	if csv.Spec.InstallStrategy.StrategyName != "" || csv.Annotations["alm-examples"] != "" || csv.Spec.Description != "" ||
		csv.Annotations["olm.targetNamespaces"] != "team-a,team-b" || csv.Spec.CustomResourceDefinitions.Owned[0].Kind != "EtcdCluster" {
		t.Errorf("CSV kept as %+v", csv)
	}
	if ip := s.InstallPlans[0]; ip.Status.Plan[0].Resource.Manifest != "" || ip.Status.Plan[0].Resource.Name != "etcdoperator.v0.9.4" {
		t.Errorf("InstallPlan step kept as %+v", ip.Status.Plan[0].Resource)
	}
	if ns := s.Namespace("team-b"); ns == nil || ns.Labels["team"] != "a" {
		t.Errorf("Namespace team-b: %+v", ns)
	}
	if crd := s.CRD("etcdclusters.etcd.database.coreos.com"); crd == nil || crd.Status.StoredVersions[0] != "v1beta2" {
		t.Errorf("CRD: %+v", crd)
	}
	files, err := Read(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if files.Skipped["ConfigMap"] != 1 {
		t.Errorf("files: skipped %v", files.Skipped)
	}
	sameState(t, s, files)
}

// TestReadClusterErrors: OLM not installed (404), a list not allowed
// (403), credentials refused (401), and an object that fails Read's
// checks, each said in words.
func TestReadClusterErrors(t *testing.T) {
	t.Parallel()
	state := filepath.Join("testdata", "live", "state.yaml")
	for _, c := range []struct {
		name  string
		setup func(l *kubetest.Lists) []string
		token string
		want  []string
	}{{
		name: "OLM not installed",
		setup: func(l *kubetest.Lists) []string {
			l.Serve("v1", "namespaces", "Namespace")
			l.Serve("apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinition")
			return nil
		},
		want: []string{"does not serve catalogsources.operators.coreos.com (operators.coreos.com/v1alpha1)", "OLM (v0) is not installed there", "404", "the server could not find the requested resource"},
	}, {
		name: "list forbidden",
		setup: func(l *kubetest.Lists) []string {
			serveOLM(l)
			l.Forbid("operators.coreos.com/v1alpha1", "clusterserviceversions")
			return []string{state}
		},
		want: []string{
			"the user may not list clusterserviceversions.operators.coreos.com across all namespaces",
			"the permission to list clusterserviceversions of API group operators.coreos.com at the cluster scope",
			`apiGroups ["operators.coreos.com"], resources ["clusterserviceversions"], verbs [list]`,
			`403: clusterserviceversions.operators.coreos.com is forbidden: User "alice" cannot list resource "clusterserviceversions" in API group "operators.coreos.com" at the cluster scope`,
		},
	}, {
		name: "namespaces forbidden",
		setup: func(l *kubetest.Lists) []string {
			serveOLM(l)
			l.Forbid("v1", "namespaces")
			return nil
		},
		want: []string{`the permission to list namespaces of API group "" (core) at the cluster scope`, `apiGroups [""], resources ["namespaces"]`},
	}, {
		name:  "credentials refused",
		setup: func(l *kubetest.Lists) []string { serveOLM(l); return nil },
		token: "wrong",
		want:  []string{"refused the credentials of the kubeconfig while listing namespaces (401"},
	}, {
		name: "a Subscription without its source",
		setup: func(l *kubetest.Lists) []string {
			serveOLM(l)
			_ = l.Add([]byte(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":{"name":"etcd","namespace":"ns1"},"spec":{"name":"etcd","sourceNamespace":"olm"}}`))
			return nil
		},
		want: []string{"state: cluster: subscriptions.operators.coreos.com: Subscription ns1/etcd: spec.source (the CatalogSource) is missing"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := kubetest.NewLists()
			cfg := liveServer(t, l, c.setup(l)...)
			if c.token != "" {
				cfg.BearerToken = c.token
			}
			_, err := ReadCluster(context.Background(), cfg)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestReadClusterContext: a canceled context stops the reading, before the
// first request and while the server has not answered.
func TestReadClusterContext(t *testing.T) {
	t.Parallel()
	l := kubetest.NewLists()
	serveOLM(l)
	cfg := liveServer(t, l, filepath.Join("testdata", "live", "state.yaml"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadCluster(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled before: %v", err)
	}
	if n := len(l.Requests()); n != 0 {
		t.Errorf("%d requests after a canceled context", n)
	}

	// A server that does not answer the Subscriptions' list until the
	// client goes away.
	arrived := make(chan struct{})
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/subscriptions") {
			close(arrived)
			<-r.Context().Done()
			return
		}
		l.ServeHTTP(w, r)
	})
	srv := httptest.NewTLSServer(hang)
	t.Cleanup(srv.Close)
	cfg2 := rest.CopyConfig(cfg)
	cfg2.Host = srv.URL
	cfg2.CAData = kubetest.CertPEM(srv)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := ReadCluster(ctx, cfg2); done <- err }()
	select {
	case <-arrived:
	case <-time.After(2 * time.Minute):
		t.Fatal("the Subscriptions' list never came")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("canceled while waiting: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("ReadCluster did not return once its context was canceled")
	}
}
