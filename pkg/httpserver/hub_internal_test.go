package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// coldSnapshot loads a catalog directory as serve's cold start does, with
// its JSON lines.
func coldSnapshot(t *testing.T, dir string) *cache.Snapshot {
	t.Helper()
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
	x, err := registry.Load(context.Background(), os.DirFS(dir), registry.Options{Sink: w, Lines: w})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := w.Snapshot(x)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// readable says whether a snapshot's lines can still be read.
func readable(s *cache.Snapshot) bool {
	buf := make([]byte, 1)
	_, err := s.Lines().ReadAt(buf, 0)
	return err == nil
}

// TestHubWorldsCloseSnapshots: a snapshot swapped out stays open while a
// request that started before the swap runs, and is closed when the last
// such request ends; Close closes the snapshots served.
func TestHubWorldsCloseSnapshots(t *testing.T) {
	const dir = "../../testdata/install/community"
	h, err := NewHub(HubOptions{Catalogs: []HubCatalog{{Name: "a"}, {Name: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	s1, b1 := coldSnapshot(t, dir), coldSnapshot(t, dir)
	for name, s := range map[string]*cache.Snapshot{"a": s1, "b": b1} {
		if err := h.Set(name, s, "", 0); err != nil {
			t.Fatal(err)
		}
	}
	w1, w2 := h.acquire(), h.acquire()
	s2 := coldSnapshot(t, dir)
	if err := h.Set("a", s2, "", 0); err != nil {
		t.Fatal(err)
	}
	if !readable(s1) {
		t.Fatal("the snapshot swapped out was closed while requests use it")
	}
	h.release(w1)
	if !readable(s1) {
		t.Fatal("the snapshot swapped out was closed while a request uses it")
	}
	h.release(w2)
	if readable(s1) {
		t.Error("the snapshot swapped out is still open after its last request")
	}
	if !readable(s2) || !readable(b1) {
		t.Error("a snapshot served was closed")
	}
	// A request of the new world, then Close: closed once it ends.
	w3 := h.acquire()
	h.Close()
	if !readable(s2) || !readable(b1) {
		t.Error("Close closed snapshots a request uses")
	}
	h.release(w3)
	if readable(s2) || readable(b1) {
		t.Error("Close left snapshots open after the last request")
	}
	if err := h.Set("a", coldSnapshot(t, dir), "", 0); err == nil {
		t.Error("a closed hub took a snapshot")
	}
}

// stubState is a cluster state with nothing in it.
type stubState struct{}

func (stubState) Overview() any                                { return struct{}{} }
func (stubState) InstalledPackages() map[string][]InstalledRef { return nil }
func (stubState) Answers(context.Context, []WorldCatalog) (ClusterAnswers, error) {
	return nil, nil
}

// TestHubRemapSharesSnapshots: a catalog whose mapping a cluster state
// changes is served by a new Server over the same snapshot, which stays
// open while either world is used and is closed once neither is; the
// install catalog has the new priority and namespace; a mapping of other
// catalogs is refused, and changes nothing.
func TestHubRemapSharesSnapshots(t *testing.T) {
	const dir = "../../testdata/install/community"
	cats := []HubCatalog{{Name: "a", Ref: dir}, {Name: "b", Ref: dir}}
	h, err := NewHub(HubOptions{Catalogs: cats, Cluster: stubState{}})
	if err != nil {
		t.Fatal(err)
	}
	s1, b1 := coldSnapshot(t, dir), coldSnapshot(t, dir)
	for name, s := range map[string]*cache.Snapshot{"a": s1, "b": b1} {
		if err := h.Set(name, s, "", 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range [][]HubCatalog{cats[:1], {{Name: "a", Ref: dir}, {Name: "c", Ref: dir}}, {{Name: "a", Ref: "x"}, cats[1]}} {
		if err := h.SetCluster(stubState{}, bad); err == nil {
			t.Errorf("SetCluster took %+v", bad)
		}
	}
	w1 := h.acquire()
	remapped := []HubCatalog{{Name: "a", Ref: dir, Priority: 7, CatalogSource: "ns/a"}, cats[1]}
	if err := h.SetCluster(stubState{}, remapped); err != nil {
		t.Fatal(err)
	}
	w2 := h.acquire()
	if w1.cats[0].snap != w2.cats[0].snap || w1.cats[0].srv == w2.cats[0].srv || w1.cats[1] != w2.cats[1] {
		t.Fatal("the catalog remapped does not share its snapshot with a Server of its own, or the other was not kept")
	}
	cat, err := w2.cats[0].srv.InstallCatalog()
	if err != nil || cat.Priority != 7 || cat.Key() != "a/ns" {
		t.Errorf("the remapped catalog's install catalog: %+v %v", cat, err)
	}
	if st := h.Status()[0]; st.Priority != 7 || st.CatalogSource != "ns/a" {
		t.Errorf("status: %+v", st)
	}
	h.release(w1)
	if !readable(s1) {
		t.Fatal("the snapshot of a catalog remapped was closed while it is served")
	}
	// A reload: the snapshot both Servers had is closed once the last
	// world holding it is let go.
	if err := h.Set("a", coldSnapshot(t, dir), "", 0); err != nil {
		t.Fatal(err)
	}
	w3 := h.acquire()
	if w3.cats[0].conf != remapped[0] {
		t.Errorf("a reload after a remap is served with %+v", w3.cats[0].conf)
	}
	h.release(w3)
	if !readable(s1) {
		t.Fatal("closed while a request uses it")
	}
	h.release(w2)
	if readable(s1) {
		t.Error("still open after its last request")
	}
	h.Close()
}

// TestHubRemapUnderLoad: requests answered while the cluster state's
// mapping swaps marketplace's priority between 0 and 20 each see one
// mapping whole: the merged list's elasticsearch from the catalog first
// in its own order, the install of logging its dependency from one of the
// two catalogs; after the last swap, its mapping is served.
func TestHubRemapUnderLoad(t *testing.T) {
	base := []HubCatalog{{Name: "community", Ref: "../../testdata/install/community"},
		{Name: "certified", Ref: "../../testdata/install/certified", Priority: 10},
		{Name: "marketplace", Ref: "../../testdata/install/marketplace"}}
	h, err := NewHub(HubOptions{Catalogs: base, Cluster: stubState{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range base {
		if err := h.Set(c.Name, coldSnapshot(t, c.Ref), "", 0); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(h.Handler())
	t.Cleanup(func() {
		ts.Close()
		h.Close()
	})
	type list struct {
		Packages []struct {
			Catalog  string
			Catalogs []struct {
				Catalog  string
				Priority int
			}
		}
	}
	get := func(path string) (int, []byte, error) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	// check says what is wrong with one answer, and which catalog's
	// elasticsearch it took.
	check := func(path string) (string, error) {
		code, body, err := get(path)
		if err != nil || code != 200 {
			return "", fmt.Errorf("%s: %d %v %s", path, code, err, body)
		}
		if strings.Contains(path, "install") {
			mkt, cert := bytes.Contains(body, []byte("elasticsearch-mkt.v7.17.0")), bytes.Contains(body, []byte("elasticsearch.v7.10.0"))
			if mkt == cert {
				return "", fmt.Errorf("%s: %s", path, body)
			}
			if mkt {
				return "marketplace", nil
			}
			return "certified", nil
		}
		var l list
		if err := json.Unmarshal(body, &l); err != nil || len(l.Packages) != 1 || len(l.Packages[0].Catalogs) != 2 {
			return "", fmt.Errorf("%s: %v %s", path, err, body)
		}
		p := l.Packages[0]
		if p.Catalog != p.Catalogs[0].Catalog || p.Catalogs[0].Priority < p.Catalogs[1].Priority {
			return "", fmt.Errorf("%s: not in one mapping's order: %s", path, body)
		}
		return p.Catalog, nil
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var answered atomic.Int64
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
				for _, p := range []string{"/api/v1/install?package=logging", "/api/v1/packages?q=elasticsearch"} {
					if _, err := check(p); err != nil {
						select {
						case errs <- err:
						default:
						}
					}
					answered.Add(1)
				}
			}
		}()
	}
	prio := 0
	for i := range 20 {
		deadline := time.Now().Add(3 * time.Minute) // a hang guard
		for n := answered.Load(); answered.Load() < n+4; {
			if time.Now().After(deadline) {
				t.Fatalf("no request answered in minutes before swap %d", i)
			}
			time.Sleep(time.Millisecond)
		}
		prio = 20 - prio
		m := slices.Clone(base)
		m[2].Priority = prio
		if err := h.SetCluster(stubState{}, m); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The last swap set priority 0: certified's again.
	for _, p := range []string{"/api/v1/install?package=logging", "/api/v1/packages?q=elasticsearch"} {
		if got, err := check(p); err != nil || got != "certified" {
			t.Errorf("after the swaps %s: %s %v", p, got, err)
		}
	}
}
