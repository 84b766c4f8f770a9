package action

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestLoadServeTempFailureCloses: a load that fails leaves no temporary
// file of its own open (the hub tries a failing catalog again and
// again). The files are unlinked at once, so they are counted among the
// process's open files in /proc/self/fd.
func TestLoadServeTempFailureCloses(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no finalizer closes them meanwhile
	catalog := t.TempDir()
	if err := os.WriteFile(filepath.Join(catalog, "catalog.yaml"), []byte("schema: olm.package\nname: x\n---\nschema: olm.channel\npackage: x\nname: c\nentries: [{name: x.v1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for range 3 {
		if snap, _, err := LoadServeTemp(context.Background(), os.DirFS(catalog), tmp, true); err == nil {
			snap.Close()
			t.Fatal("the broken catalog loaded")
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, tmp) {
			t.Errorf("open after the failed loads: %s", target)
		}
	}
}
