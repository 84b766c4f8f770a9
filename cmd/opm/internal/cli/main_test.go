package cli

import (
	"os"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// Some tests draw SVG with the opm-graphviz program (testutil.UseGraphviz).
// The catalog cache of `query install` is a directory of the run's own,
// never the user's: every question goes through it, so that the tests ask
// questions both over catalogs loaded and over snapshots of them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "opm-catalog-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv(catalogCacheEnv, dir)
	code := testutil.RunWithGraphviz(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
