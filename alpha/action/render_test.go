package action

import (
	"path/filepath"
	"testing"
)

// Rewritten blobs (all of a YAML catalog's) wait for phase two in a spill
// file; without a writable temporary directory they stay in memory, and
// the output is the same either way.
func TestRenderSpill(t *testing.T) {
	const yamlCatalog = "../../testdata/catalogs/okderators"
	spilled, err := render(t, DirResolver{}, yamlCatalog, exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if len(spilled) < 1<<20 {
		t.Fatalf("only %d bytes rendered", len(spilled))
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	inMemory, err := render(t, DirResolver{}, yamlCatalog, exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if inMemory != spilled {
		t.Error("render differs between the scratch file and memory")
	}
}
