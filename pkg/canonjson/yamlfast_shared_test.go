//go:build sharedcatalogs

package canonjson

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFastYAMLAgreesOnSharedCatalogs covers the large real catalogs of
// ../shared beside the repository ($OPM_SHARED_DIR/catalogs). It is built
// only with the sharedcatalogs tag (make test-shared): the unit tests
// never need ../shared.
func TestFastYAMLAgreesOnSharedCatalogs(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "catalogs")
	if dir := os.Getenv("OPM_SHARED_DIR"); dir != "" {
		root = filepath.Join(dir, "catalogs")
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("shared catalogs not found: %v", err)
	}
	docs := yamlDocs(t, root)
	fast := checkFastAgrees(t, docs)
	t.Logf("fast path handled %d of %d documents", fast, len(docs))
}
