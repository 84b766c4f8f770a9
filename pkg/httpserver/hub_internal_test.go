package httpserver

import (
	"context"
	"os"
	"testing"

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
