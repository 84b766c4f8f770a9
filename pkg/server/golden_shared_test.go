//go:build sharedcatalogs

package server

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoldenShared runs the golden comparison over every catalog of the
// shared reference set (../shared beside the repository, or
// $OPM_SHARED_DIR), the two large real catalogs included. It is built only
// with the sharedcatalogs tag (make test-shared): the unit tests never need
// ../shared.
func TestGoldenShared(t *testing.T) {
	root := os.Getenv("OPM_SHARED_DIR")
	if root == "" {
		root = "../../../shared"
	}
	entries, err := os.ReadDir(filepath.Join(root, "golden"))
	if err != nil {
		t.Fatalf("shared golden set not found: %v", err)
	}
	for _, e := range entries {
		name := e.Name()
		catalog := filepath.Join(root, "catalogs", name)
		if _, err := os.Stat(filepath.Join(root, "golden", name, "validate.txt")); err != nil {
			continue // not a catalog's golden files (bundles/)
		}
		t.Run(name, func(t *testing.T) {
			checkGolden(t, catalog, filepath.Join(root, "golden", name))
		})
	}
}
