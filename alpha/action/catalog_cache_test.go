package action

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/install"
)

// copyCatalog copies testdata/install/NAME into a new directory.
func copyCatalog(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../testdata/install", name, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadThrough(t *testing.T, c *CatalogCache, dir string) *install.Catalog {
	t.Helper()
	cat, err := c.LoadInstall(context.Background(), os.DirFS(dir), "community", 0)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// snapshots lists the snapshots in a cache directory.
func snapshots(t *testing.T, cacheDir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(cacheDir, catalogCacheSub, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A catalog seen before is answered from its snapshot; one changed since,
// in any byte (even keeping its size), is loaded again, never answered
// from the snapshot of what it was.
func TestCatalogCacheChangedCatalog(t *testing.T) {
	t.Parallel()
	cacheDir := t.TempDir()
	c, err := OpenCatalogCache(cacheDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := copyCatalog(t, "community")
	first := loadThrough(t, c, dir)
	snaps := snapshots(t, cacheDir)
	if len(snaps) != 1 {
		t.Fatalf("snapshots after the first load: %v, want one", snaps)
	}
	// The snapshot is what is read: put another catalog's in its place
	// (a valid snapshot, so only its key tells it apart) and it answers.
	other, _, err := install.Load(context.Background(), os.DirFS("../../testdata/install/certified"), "certified", 0)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snaps[0], other.AppendSnapshot(nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := loadThrough(t, c, dir); !bytes.Equal(got.AppendSnapshot(nil), other.AppendSnapshot(nil)) {
		t.Fatal("a catalog seen before was not answered from its snapshot")
	}
	if err := os.WriteFile(snaps[0], orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := loadThrough(t, c, dir); !bytes.Equal(got.AppendSnapshot(nil), first.AppendSnapshot(nil)) {
		t.Fatal("the snapshot answers otherwise than the catalog loaded")
	}

	// The same size, one word changed: etcd's default channel.
	p := filepath.Join(dir, "catalog.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), "defaultChannel: stable", "defaultChannel: alpha ", 1)
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, def := loadThrough(t, c, dir).Channels("etcd"); def != "alpha" {
		t.Fatalf("after the change, etcd's default channel is %q, want alpha: answered from a stale snapshot", def)
	}
	// A file added.
	extra := "---\nschema: olm.package\nname: extra\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: extra\nname: stable\nentries:\n- name: extra.v1.0.0\n---\nschema: olm.bundle\npackage: extra\nname: extra.v1.0.0\nimage: quay.io/example/extra:v1.0.0\nproperties:\n- type: olm.package\n  value: {packageName: extra, version: 1.0.0}\n"
	if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := loadThrough(t, c, dir)
	if chs, _ := cat.Channels("extra"); len(chs) != 1 {
		t.Fatalf("after a file was added, package extra has channels %v: answered from a stale snapshot", chs)
	}
	// Each content has its snapshot; the first still answers the first.
	if n := len(snapshots(t, cacheDir)); n != 3 {
		t.Errorf("%d snapshots, want 3 (one per content)", n)
	}
}

// A damaged snapshot is not used: the catalog is loaded, and its snapshot
// written again.
func TestCatalogCacheDamagedSnapshot(t *testing.T) {
	t.Parallel()
	cacheDir := t.TempDir()
	c, err := OpenCatalogCache(cacheDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := copyCatalog(t, "community")
	want := loadThrough(t, c, dir).AppendSnapshot(nil)
	snaps := snapshots(t, cacheDir)
	if len(snaps) != 1 {
		t.Fatalf("snapshots: %v, want one", snaps)
	}
	damaged := bytes.Clone(want)
	damaged[len(damaged)/2] ^= 1
	if err := os.WriteFile(snaps[0], damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := loadThrough(t, c, dir).AppendSnapshot(nil); !bytes.Equal(got, want) {
		t.Fatal("a damaged snapshot answered")
	}
	if again, err := os.ReadFile(snaps[0]); err != nil || !bytes.Equal(again, want) {
		t.Errorf("the snapshot was not written again (%v)", err)
	}
}
